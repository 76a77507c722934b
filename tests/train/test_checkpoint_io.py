"""Checkpoint data files: round trips, header-only listing, TF1's inspect output, and the errors a user sees."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from tftk.framework.errors import DataLossError, InvalidArgumentError, NotFoundError
from tftk.train import checkpoint_io as io

ARRAYS = {
    "hidden1/weights": np.arange(12, dtype=np.float32).reshape(3, 4),
    "hidden1/biases": np.array([0.5, -1.5], np.float64),
    "global_step": np.int64(1234),
    "mask": np.array([True, False, True]),
    "vocab": np.array(["a", "bc"]),
    "empty": np.zeros((0, 3), np.float32),
    "file": np.array([1, 2], np.int8),  # np.savez would choke on this name
    "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
}


def _assert_same(got: dict, want: dict) -> None:
    assert list(got) == list(want)
    for name, value in want.items():
        value = np.asarray(value)
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)


def test_round_trip_keeps_names_dtypes_shapes_and_values(tmp_path):
    prefix = tmp_path / "model.ckpt-7"
    assert io.save_arrays(prefix, ARRAYS) == [tmp_path / "model.ckpt-7.npz"]
    _assert_same(io.load_arrays(prefix), ARRAYS)
    assert io.checkpoint_exists(prefix) and io.checkpoint_exists(str(prefix) + ".npz")


def test_file_is_a_plain_npz_readable_without_pickle(tmp_path):
    io.save_arrays(tmp_path / "m", ARRAYS)
    with np.load(tmp_path / "m.npz", allow_pickle=False) as npz:
        np.testing.assert_array_equal(npz["hidden1/weights"], ARRAYS["hidden1/weights"])
    with zipfile.ZipFile(tmp_path / "m.npz") as archive:
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())


def test_load_selected_names_in_requested_order(tmp_path):
    io.save_arrays(tmp_path / "m", ARRAYS)
    got = io.load_arrays(tmp_path / "m", ["mask", "global_step"])
    assert list(got) == ["mask", "global_step"]
    assert got["global_step"] == 1234 and got["global_step"].shape == ()
    np.testing.assert_array_equal(io.load_variable(tmp_path / "m", "hidden1/biases"), [0.5, -1.5])


def test_list_variables_sorted_with_shape_and_dtype(tmp_path):
    io.save_arrays(tmp_path / "m", ARRAYS)
    assert io.list_variables(tmp_path / "m") == sorted(
        (name, np.shape(value), np.asarray(value).dtype) for name, value in ARRAYS.items())


def test_save_replaces_an_existing_checkpoint_whole(tmp_path):
    io.save_arrays(tmp_path / "m", {"a": np.ones(2), "b": np.ones(3)})
    io.save_arrays(tmp_path / "m", {"a": np.zeros(2)})
    _assert_same(io.load_arrays(tmp_path / "m"), {"a": np.zeros(2)})


def test_delete_checkpoint_is_idempotent(tmp_path):
    io.save_arrays(tmp_path / "m", {"a": np.ones(1)})
    io.delete_checkpoint(tmp_path / "m")
    assert not io.checkpoint_exists(tmp_path / "m")
    io.delete_checkpoint(tmp_path / "m")


def test_missing_file_names_the_file_and_what_to_do(tmp_path):
    with pytest.raises(NotFoundError, match=r"model\.ckpt-3\.npz not found .*latest_checkpoint"):
        io.load_arrays(tmp_path / "model.ckpt-3")
    with pytest.raises(NotFoundError):
        io.list_variables(tmp_path / "model.ckpt-3")


def test_missing_key_names_variable_and_checkpoint(tmp_path):
    io.save_arrays(tmp_path / "m", {"a": np.ones(1), "b": np.ones(1)})
    with pytest.raises(NotFoundError, match=r"Key 'w' not found in checkpoint '.*m'.*it holds: a, b"):
        io.load_variable(tmp_path / "m", "w")


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_file_is_data_loss(tmp_path, keep):
    io.save_arrays(tmp_path / "m", ARRAYS)
    path = tmp_path / "m.npz"
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(DataLossError, match=r"m\.npz is truncated or corrupted .*restore an older checkpoint"):
        io.load_arrays(tmp_path / "m")


def test_flipped_data_byte_fails_the_checksum(tmp_path):
    weights = np.arange(1000, dtype=np.float64)
    io.save_arrays(tmp_path / "m", {"w": weights})
    path = tmp_path / "m.npz"
    data = bytearray(path.read_bytes())
    data[data.index(weights.tobytes()) + 4000] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="Bad CRC-32"):
        io.load_arrays(tmp_path / "m")


# Fields of the zip headers a flipped byte can hit, which zipfile reports as NotImplementedError (an
# unknown compression method) or RuntimeError (the encrypted flag): still a corrupted checkpoint.
HEADER_FIELDS = {"compression_method": (8, 10, 99), "encrypted_flag": (6, 8, 0x01)}


@pytest.mark.parametrize("field", sorted(HEADER_FIELDS))
def test_mangled_zip_header_field_is_data_loss(tmp_path, field):
    local_offset, central_offset, value = HEADER_FIELDS[field]
    io.save_arrays(tmp_path / "m", ARRAYS)
    path = tmp_path / "m.npz"
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", local_offset), (b"PK\x01\x02", central_offset)):
        at = data.find(signature)
        while at != -1:
            data[at + offset] |= value
            at = data.find(signature, at + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(DataLossError, match="truncated or corrupted"):
        io.load_arrays(tmp_path / "m")


def test_not_a_zip_is_data_loss(tmp_path):
    (tmp_path / "m.npz").write_bytes(b"hello, not a checkpoint")
    with pytest.raises(DataLossError):
        io.list_variables(tmp_path / "m")


def test_pickled_member_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "m.npz", "w") as archive, archive.open("evil.npy", "w") as member:
        np.lib.format.write_array(member, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataLossError, match="pickle"):
        io.load_arrays(tmp_path / "m")


@pytest.mark.parametrize("bad", [{"": np.ones(1)}, {3: np.ones(1)}, {"o": np.array([object()])}])
def test_unsaveable_input_is_rejected_before_writing(tmp_path, bad):
    with pytest.raises(InvalidArgumentError):
        io.save_arrays(tmp_path / "m", bad)
    assert list(tmp_path.iterdir()) == []  # nothing written, no temp file left


def test_print_tensors_summary_lines(tmp_path, capsys):
    io.save_arrays(tmp_path / "m", {"w": np.zeros((2, 3), np.float32), "step": np.int64(5), "b": np.zeros(2)})
    io.print_tensors_in_checkpoint_file(tmp_path / "m")
    assert capsys.readouterr().out == (
        "b (DT_DOUBLE) [2]\nstep (DT_INT64) []\nw (DT_FLOAT) [2,3]\n# Total number of params: 9\n")


def test_print_one_tensor_and_all_tensors(tmp_path, capsys):
    io.save_arrays(tmp_path / "m", {"w": np.array([1.0, 2.0]), "v": np.array([3])})
    io.print_tensors_in_checkpoint_file(tmp_path / "m", tensor_name="w")
    assert capsys.readouterr().out == "tensor_name:  w\n[1. 2.]\n# Total number of params: 3\n"
    io.print_tensors_in_checkpoint_file(tmp_path / "m", all_tensors=True)
    assert capsys.readouterr().out == "tensor_name:  v\n[3]\ntensor_name:  w\n[1. 2.]\n# Total number of params: 3\n"
    io.print_tensors_in_checkpoint_file(tmp_path / "m", all_tensor_names=True)
    assert capsys.readouterr().out == "tensor_name:  v\ntensor_name:  w\n# Total number of params: 3\n"
