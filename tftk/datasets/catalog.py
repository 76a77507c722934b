"""The datasets tftk knows: where their files come from, how to read them, how they split.

`download_dataset` puts the published files in `<data_dir>/<name>/` (checked against their
published checksums); `load_dataset` reads them into `Datasets(train, validation, test)`.
`digits` ships inside the package, so it needs neither network nor data_dir.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from tftk.datasets.cifar import read_cifar10
from tftk.datasets.dataset import DataSet, Datasets
from tftk.datasets.download import RemoteFile, fetch
from tftk.datasets.idx import read_idx
from tftk.framework.errors import DataLossError, NotFoundError
from tftk.user_input import UserInputError

__all__ = ["DatasetSpec", "dataset_names", "get_spec", "download_dataset", "load_dataset"]

DIGITS_FILE = Path(__file__).with_name("digits.npz")

@dataclass(frozen=True)
class DatasetSpec:
    """What a model needs to know about a dataset before loading it, and how to fetch and read it."""

    name: str
    image_shape: tuple[int, int, int]  # height, width, channels
    num_classes: int
    max_value: int  # the brightest pixel value; float images are divided by it
    split_sizes: tuple[int, int, int]  # train, validation, test (of the published files)
    files: tuple[RemoteFile, ...] = ()
    mirrors: tuple[str, ...] = ()

    @property
    def input_size(self) -> int:
        """Length of one flattened image."""
        return int(np.prod(self.image_shape))


_IDX_NAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")

# Checksums: the md5 sums published with the datasets (also pinned by torchvision).
_SPECS = {spec.name: spec for spec in [
    DatasetSpec("digits", (8, 8, 1), 10, 16, (1257, 270, 270)),
    DatasetSpec(
        "mnist", (28, 28, 1), 10, 255, (55000, 5000, 10000),
        files=tuple(RemoteFile(name, f"md5:{md5}", size) for name, md5, size in zip(_IDX_NAMES, (
            "f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
            "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c"),
            (9912422, 28881, 1648877, 4542))),
        mirrors=("https://ossci-datasets.s3.amazonaws.com/mnist/",
                 "https://storage.googleapis.com/cvdf-datasets/mnist/",
                 "http://yann.lecun.com/exdb/mnist/")),
    DatasetSpec(
        "fashion_mnist", (28, 28, 1), 10, 255, (55000, 5000, 10000),
        files=tuple(RemoteFile(name, f"md5:{md5}", size) for name, md5, size in zip(_IDX_NAMES, (
            "8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
            "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310"),
            (26421880, 29515, 4422102, 5148))),
        mirrors=("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
                 "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/")),
    DatasetSpec(
        "cifar10", (32, 32, 3), 10, 255, (45000, 5000, 10000),
        files=(RemoteFile("cifar-10-python.tar.gz", "md5:c58f30108f718f92721af3b95e74349a", 170498071),),
        mirrors=("https://www.cs.toronto.edu/~kriz/",)),
]}
_ALIASES = {"fashion-mnist": "fashion_mnist", "fashionmnist": "fashion_mnist", "cifar-10": "cifar10",
            "cifar_10": "cifar10"}


def dataset_names() -> list[str]:
    """The names `load_dataset` accepts."""
    return sorted(_SPECS)


def get_spec(name: str) -> DatasetSpec:
    """The spec of dataset `name`; UserInputError naming the closest known one otherwise."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key in _SPECS:
        return _SPECS[key]
    close = difflib.get_close_matches(key, list(_SPECS) + list(_ALIASES), n=1)
    hint = f" (did you mean '{_ALIASES.get(close[0], close[0])}'?)" if close else ""
    raise UserInputError(f"unknown dataset '{name}'{hint}; known datasets: {', '.join(dataset_names())}")


def download_dataset(name: str, data_dir: str | Path = "data", *, mirrors: Sequence[str] | None = None,
                     checksums: Mapping[str, str] | None = None, progress: bool | None = None,
                     retries: int = 2, timeout: float = 30.0) -> list[Path]:
    """Fetch and verify the files of `name` into `<data_dir>/<name>/`; return their paths.

    `mirrors` replaces the published URL prefixes and `checksums` (file name -> `md5:<hex>` or
    `sha256:<hex>`) the published digests, so tests can serve their own small files.
    """
    spec = _with_overrides(get_spec(name), mirrors, checksums)
    folder = Path(data_dir) / spec.name
    return [fetch(remote, spec.mirrors, folder, retries=retries, progress=progress, timeout=timeout)
            for remote in spec.files]


def load_dataset(name: str, data_dir: str | Path = "data", *, download: bool = False, seed: int = 0,
                 flatten: bool = True, one_hot: bool = False, dtype: type = np.float32,
                 validation_size: int | None = None, **download_options) -> Datasets:
    """Read dataset `name` into `Datasets(train, validation, test)`.

    Args:
      download: fetch missing files first (see `download_dataset`, which gets `download_options`).
      seed: shuffling seed of the train split (validation and test get seed+1, seed+2).
      flatten: images as rows of `input_size` values (TF1's `reshape=True`); else NHWC.
      one_hot: labels as one-hot rows of `dtype`; else int32 class ids.
      dtype: np.float32 (or float64) scales pixels to [0, 1]; np.uint8 keeps the raw values.
      validation_size: how many leading train examples form the validation split (TF1's
        read_data_sets); default from the spec. Not for `digits`, whose split is fixed.
    """
    spec = get_spec(name)
    if download:
        download_dataset(spec.name, data_dir, **download_options)
    train_images, train_labels, test_images, test_labels, validation = _READERS[spec.name](spec, Path(data_dir))
    if validation is None:
        n_val = spec.split_sizes[1] if validation_size is None else validation_size
        if not 0 <= n_val <= len(train_images):
            raise UserInputError(f"validation_size should be between 0 and {len(train_images)}, got {n_val}")
        validation = np.arange(n_val)
    elif validation_size is not None:
        raise UserInputError(f"{spec.name} has a fixed validation split; validation_size cannot change it")
    is_val = np.zeros(len(train_images), bool)
    is_val[validation] = True
    parts = [(train_images[~is_val], train_labels[~is_val]), (train_images[is_val], train_labels[is_val]),
             (test_images, test_labels)]
    return Datasets(*(DataSet(_images(spec, im, flatten, dtype), _labels(spec, lb, one_hot, dtype), seed + k)
                      for k, (im, lb) in enumerate(parts)))


def _images(spec: DatasetSpec, raw: np.ndarray, flatten: bool, dtype: type) -> np.ndarray:
    images = raw.reshape((len(raw),) + spec.image_shape)
    if flatten:
        images = images.reshape(len(raw), spec.input_size)
    if np.dtype(dtype) == np.uint8:
        return np.ascontiguousarray(images)
    return images.astype(dtype) / np.asarray(spec.max_value, dtype)


def _labels(spec: DatasetSpec, raw: np.ndarray, one_hot: bool, dtype: type) -> np.ndarray:
    labels = raw.astype(np.int32)
    if not one_hot:
        return labels
    dense = np.zeros((len(labels), spec.num_classes), dtype)
    dense[np.arange(len(labels)), labels] = 1
    return dense


def _with_overrides(spec: DatasetSpec, mirrors: Sequence[str] | None,
                    checksums: Mapping[str, str] | None) -> DatasetSpec:
    """The spec with test- or user-supplied mirrors and checksums (a new checksum drops the size hint)."""
    checksums = dict(checksums or {})
    unknown = set(checksums) - {f.name for f in spec.files}
    if unknown:
        raise UserInputError(f"{spec.name} has no file named {', '.join(sorted(unknown))}")
    files = tuple(RemoteFile(f.name, checksums[f.name]) if f.name in checksums else f for f in spec.files)
    return replace(spec, files=files, mirrors=tuple(mirrors) if mirrors is not None else spec.mirrors)


def _local(spec: DatasetSpec, data_dir: Path, filename: str) -> Path:
    """The path of a downloaded file; NotFoundError telling how to get it when it is missing."""
    path = data_dir / spec.name / filename
    if not path.exists():
        raise NotFoundError(message=f"{path} not found: run `tftk download-data {spec.name} --data-dir "
                                    f"{data_dir}` (or place the file there by hand)")
    return path


def _read_digits(spec: DatasetSpec, data_dir: Path):
    with np.load(DIGITS_FILE, allow_pickle=False) as stored:
        images, labels = stored["images"], stored["labels"]
        train, validation, test = stored["train"], stored["validation"], stored["test"]
    # Train and validation come from one pool (validation marked by position), test apart.
    pool = np.sort(np.concatenate([train, validation]))
    val_positions = np.searchsorted(pool, validation)
    return images[pool], labels[pool], images[test], labels[test], val_positions


def _read_idx_set(spec: DatasetSpec, data_dir: Path):
    arrays = [read_idx(_local(spec, data_dir, f.name)) for f in spec.files]
    for images, labels, split in ((arrays[0], arrays[1], "train"), (arrays[2], arrays[3], "test")):
        if len(images) != len(labels):
            raise DataLossError(message=f"{spec.name}: {split} has {len(images)} images but {len(labels)} labels")
    return (*arrays, None)


def _read_cifar(spec: DatasetSpec, data_dir: Path):
    return (*read_cifar10(_local(spec, data_dir, spec.files[0].name)), None)


_READERS: dict[str, Callable[[DatasetSpec, Path], tuple]] = {
    "digits": _read_digits, "mnist": _read_idx_set, "fashion_mnist": _read_idx_set, "cifar10": _read_cifar}
