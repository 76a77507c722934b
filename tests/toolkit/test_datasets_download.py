"""The real download code against a local HTTP server: mirrors, checksums, resume, offline, parsing."""

from __future__ import annotations

import gzip
import pickle
import socket

import numpy as np
import pytest
from tests.toolkit.realformats import cifar_tarball, idx_bytes, md5

from tftk.datasets import download_dataset, load_dataset
from tftk.datasets.download import RemoteFile, fetch
from tftk.datasets.idx import read_idx
from tftk.framework.errors import DataLossError, NotFoundError, UnavailableError
from tftk.user_input import UserInputError


def serve_mnist(server, blobs, prefix="m"):
    for name, blob in blobs.items():
        server.files[f"/{prefix}/{name}"] = blob
    return {name: md5(blob) for name, blob in blobs.items()}


def leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_download_then_load_gives_the_served_arrays(file_server, tiny_mnist, tmp_path):
    arrays, blobs = tiny_mnist
    sums = serve_mnist(file_server, blobs)
    paths = download_dataset("mnist", tmp_path, mirrors=[file_server.mirror("m")], checksums=sums, progress=False)
    assert [p.name for p in paths] == list(blobs)
    assert leftovers(tmp_path) == sorted(blobs)  # no .part, no temp file
    data = load_dataset("mnist", tmp_path, validation_size=3, seed=0)
    train_images = arrays["train-images-idx3-ubyte.gz"].reshape(12, 784)
    np.testing.assert_array_equal(data.validation.images, train_images[:3] / np.float32(255))
    np.testing.assert_array_equal(data.train.images, train_images[3:] / np.float32(255))
    np.testing.assert_array_equal(data.train.labels, arrays["train-labels-idx1-ubyte.gz"][3:])
    np.testing.assert_array_equal(data.test.labels, arrays["t10k-labels-idx1-ubyte.gz"])
    assert data.train.images.dtype == np.float32 and data.train.labels.dtype == np.int32
    raw = load_dataset("mnist", tmp_path, validation_size=3, flatten=False, dtype=np.uint8, one_hot=True)
    np.testing.assert_array_equal(raw.test.images[..., 0], arrays["t10k-images-idx3-ubyte.gz"])
    np.testing.assert_array_equal(raw.test.labels.argmax(1), arrays["t10k-labels-idx1-ubyte.gz"])


def test_mirrors_are_tried_in_order(file_server, tiny_mnist, tmp_path):
    _, blobs = tiny_mnist
    sums = serve_mnist(file_server, blobs, prefix="second")
    download_dataset("mnist", tmp_path, mirrors=[file_server.mirror("first"), file_server.mirror("second")],
                     checksums=sums, progress=False)
    assert [path.split("/")[1] for path, _ in file_server.requests] == ["first", "second"] * 4


def test_existing_verified_files_are_not_fetched_again(file_server, tiny_mnist, tmp_path):
    _, blobs = tiny_mnist
    sums = serve_mnist(file_server, blobs)
    download_dataset("mnist", tmp_path, mirrors=[file_server.mirror("m")], checksums=sums, progress=False)
    count = len(file_server.requests)
    download_dataset("mnist", tmp_path, mirrors=[file_server.mirror("m")], checksums=sums, progress=False)
    assert len(file_server.requests) == count


def test_corrupt_download_fails_clearly_and_leaves_nothing(file_server, tmp_path):
    good = gzip.compress(idx_bytes(np.arange(4, dtype=np.uint8)))
    file_server.files["/m/labels.gz"] = good[:-1] + b"X"
    with pytest.raises(DataLossError) as caught:
        fetch(RemoteFile("labels.gz", md5(good)), [file_server.mirror("m")], tmp_path, progress=False)
    assert str(caught.value) == (f"{file_server.mirror('m')}labels.gz: md5 checksum mismatch (expected "
                                 f"{md5(good)[4:]}, got {md5(file_server.files['/m/labels.gz'])[4:]}); "
                                 "the corrupt download was deleted, nothing was kept")
    assert leftovers(tmp_path) == []


def test_a_corrupt_mirror_is_skipped_for_a_good_one(file_server, tmp_path):
    good = b"good bytes" * 10
    file_server.files["/bad/f.bin"] = b"bad bytes!" * 10
    file_server.files["/good/f.bin"] = good
    fetch(RemoteFile("f.bin", md5(good)), [file_server.mirror("bad"), file_server.mirror("good")], tmp_path,
          progress=False)
    assert leftovers(tmp_path) == ["f.bin"] and (tmp_path / "f.bin").read_bytes() == good


def test_dropped_transfer_resumes_with_range_in_the_same_call(file_server, tmp_path):
    blob = bytes(range(256)) * 40
    file_server.files["/m/big.bin"] = blob
    file_server.drop_once.add("/m/big.bin")
    path = fetch(RemoteFile("big.bin", md5(blob)), [file_server.mirror("m")], tmp_path, progress=False)
    assert path.read_bytes() == blob
    assert file_server.requests == [("/m/big.bin", None), ("/m/big.bin", f"bytes={len(blob) // 2}-")]
    assert leftovers(tmp_path) == ["big.bin"]


def test_interrupted_download_keeps_part_file_and_next_run_resumes(file_server, tmp_path):
    blob = bytes(range(256)) * 40
    file_server.files["/m/big.bin"] = blob
    file_server.drop_once.add("/m/big.bin")
    remote = RemoteFile("big.bin", md5(blob))
    with pytest.raises(UnavailableError, match="connection dropped mid-file"):
        fetch(remote, [file_server.mirror("m")], tmp_path, retries=0, progress=False)
    assert leftovers(tmp_path) == ["big.bin.part"]
    assert (tmp_path / "big.bin.part").stat().st_size == len(blob) // 2
    fetch(remote, [file_server.mirror("m")], tmp_path, retries=0, progress=False)
    assert (tmp_path / "big.bin").read_bytes() == blob
    assert file_server.requests[-1] == ("/m/big.bin", f"bytes={len(blob) // 2}-")
    assert leftovers(tmp_path) == ["big.bin"]


def test_server_ignoring_range_restarts_the_file(file_server, tmp_path):
    blob = b"0123456789" * 100
    file_server.files["/m/f.bin"] = blob
    file_server.ignore_range = True
    (tmp_path / "f.bin.part").write_bytes(blob[:300])
    fetch(RemoteFile("f.bin", md5(blob)), [file_server.mirror("m")], tmp_path, progress=False)
    assert (tmp_path / "f.bin").read_bytes() == blob


def test_complete_part_file_is_verified_after_416(file_server, tmp_path):
    blob = b"abc" * 50
    file_server.files["/m/f.bin"] = blob
    (tmp_path / "f.bin.part").write_bytes(blob)
    fetch(RemoteFile("f.bin", md5(blob)), [file_server.mirror("m")], tmp_path, progress=False)
    assert (tmp_path / "f.bin").read_bytes() == blob
    assert leftovers(tmp_path) == ["f.bin"]


def test_offline_names_the_url_and_where_to_put_the_file(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    mirror = f"http://127.0.0.1:{port}/mnist/"
    with pytest.raises(UnavailableError) as caught:
        download_dataset("mnist", tmp_path, mirrors=[mirror], retries=0, progress=False)
    message = str(caught.value)
    assert "\n" not in message
    assert f"Fetch {mirror}train-images-idx3-ubyte.gz by hand" in message
    assert f"place it at {tmp_path / 'mnist' / 'train-images-idx3-ubyte.gz'}" in message
    assert leftovers(tmp_path) == []


def test_load_without_files_says_how_to_download(tmp_path):
    with pytest.raises(NotFoundError, match=r"not found: run `tftk download-data fashion_mnist --data-dir"):
        load_dataset("fashion-mnist", tmp_path)


@pytest.mark.parametrize("name, hint", [("mnst", "did you mean 'mnist'"), ("cifar", "did you mean 'cifar10'"),
                                        ("imagenet", "known datasets: cifar10, digits, fashion_mnist, mnist")])
def test_unknown_dataset_name(name, hint):
    with pytest.raises(UserInputError, match=hint):
        load_dataset(name)


def test_unknown_checksum_override_is_rejected(tmp_path):
    with pytest.raises(UserInputError, match="mnist has no file named train.gz"):
        download_dataset("mnist", tmp_path, checksums={"train.gz": "md5:00"})


def test_idx_header_is_checked(tmp_path):
    bad_magic = tmp_path / "a.gz"
    bad_magic.write_bytes(gzip.compress(b"\x00\x00\x07\x01\x00\x00\x00\x01\x05"))
    with pytest.raises(DataLossError, match="not an IDX file"):
        read_idx(bad_magic)
    truncated = tmp_path / "b.gz"
    truncated.write_bytes(gzip.compress(idx_bytes(np.zeros((3, 2, 2)))[:-1]))
    with pytest.raises(DataLossError, match=r"header says \(3, 2, 2\)"):
        read_idx(truncated)
    not_gzip = tmp_path / "c.gz"
    not_gzip.write_bytes(b"plain")
    with pytest.raises(DataLossError, match="cannot read"):
        read_idx(not_gzip)


def cifar_batches(rng, per_batch=4):
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    return {name: {b"data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
                   b"labels": [int(v) for v in rng.integers(0, 10, per_batch)]} for name in names}


def test_cifar10_tarball_to_nhwc_arrays(file_server, tmp_path):
    batches = cifar_batches(np.random.default_rng(3))
    blob = cifar_tarball(batches)
    file_server.files["/c/cifar-10-python.tar.gz"] = blob
    data = load_dataset("cifar10", tmp_path, download=True, validation_size=5, flatten=False, dtype=np.uint8,
                        mirrors=[file_server.mirror("c")], checksums={"cifar-10-python.tar.gz": md5(blob)},
                        progress=False)
    assert [d.num_examples for d in data] == [15, 5, 4]
    test = batches["test_batch"][b"data"]
    # Rows are channel-major: 1024 red, 1024 green, 1024 blue values, each 32x32 row by row.
    for i, h, w, c in [(0, 0, 0, 0), (1, 5, 7, 2), (3, 31, 30, 1)]:
        assert data.test.images[i, h, w, c] == test[i, c * 1024 + h * 32 + w]
    np.testing.assert_array_equal(data.validation.labels, batches["data_batch_1"][b"labels"]
                                  + batches["data_batch_2"][b"labels"][:1])


class Exploit:
    def __reduce__(self):
        return (print, ("pwned",))


def test_cifar10_pickles_cannot_run_code(tmp_path, capsys):
    batches = cifar_batches(np.random.default_rng(4))
    batches["test_batch"][b"extra"] = Exploit()
    folder = tmp_path / "cifar10"
    folder.mkdir()
    (folder / "cifar-10-python.tar.gz").write_bytes(cifar_tarball(batches))
    with pytest.raises(DataLossError, match=r"global __builtin__\.print is not allowed"):
        load_dataset("cifar10", tmp_path)
    assert "pwned" not in capsys.readouterr().out
    assert pickle.loads(pickle.dumps(batches["data_batch_1"]))  # the honest batches pickle fine


def test_progress_bar_only_when_asked_or_on_a_terminal(file_server, tmp_path, capsys):
    blob = b"x" * 5000
    file_server.files["/m/a.bin"] = blob
    file_server.files["/m/b.bin"] = blob
    fetch(RemoteFile("a.bin", md5(blob)), [file_server.mirror("m")], tmp_path)  # stderr is not a terminal here
    assert capsys.readouterr() == ("", "")
    fetch(RemoteFile("b.bin", md5(blob)), [file_server.mirror("m")], tmp_path, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "b.bin" in err and "5.0 kB" in err


def test_a_bad_file_already_in_place_is_reported_not_trusted(tmp_path):
    (tmp_path / "f.bin").write_bytes(b"hand-placed but wrong")
    with pytest.raises(DataLossError, match=r"f\.bin: md5 checksum mismatch .*; delete it and run the command again$"):
        fetch(RemoteFile("f.bin", md5(b"right")), ["http://127.0.0.1:9/"], tmp_path, progress=False)
