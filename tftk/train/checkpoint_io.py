"""Checkpoint data files: a mapping name -> numpy array, in TF's V2 format or tftk's `.npz`.

A checkpoint is named by its prefix. Readers here accept both formats: TensorFlow's V2
TensorBundle (`<prefix>.index` + `<prefix>.data-*`, see `tensor_bundle`), which `tf.train.Saver`
writes by default, and tftk's earlier `<prefix>.npz`, which `save_arrays` writes:

The file is a standard (uncompressed) zip of `.npy` members, readable by `np.load(path,
allow_pickle=False)`. It is written atomically (temp file beside it, fsync, rename), so a reader sees a
complete checkpoint or none; zip's per-member CRC-32 is verified on every full read, so a truncated or
corrupted file raises `DataLossError` instead of returning wrong numbers. Pickles are never written
or read. A checkpoint is named by its prefix, as in TF1 (`model.ckpt-100` -> `model.ckpt-100.npz`);
a path that already ends in `.npz` names the data file itself.
"""

from __future__ import annotations

import contextlib
import os
import zipfile
import zlib
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import numpy as np

from tftk.atomic import atomic_open
from tftk.framework.errors import DataLossError, InvalidArgumentError, NotFoundError
from tftk.train import tensor_bundle

__all__ = [
    "DATA_SUFFIX", "data_path", "save_arrays", "save_bundle", "load_arrays", "load_variable", "list_variables",
    "checkpoint_exists", "delete_checkpoint", "print_tensors_in_checkpoint_file",
]

DATA_SUFFIX = ".npz"
_MEMBER_SUFFIX = ".npy"


def data_path(prefix: str | os.PathLike) -> Path:
    """The data file of checkpoint `prefix`: its V2 data shard when it has an index, else the .npz
    (`prefix` itself when it already ends in .npz)."""
    text = os.fspath(prefix)
    if _is_bundle(text):
        return _bundle().data_path(text, 0, 1)
    return Path(text if text.endswith(DATA_SUFFIX) else text + DATA_SUFFIX)


def _is_bundle(prefix: str | os.PathLike) -> bool:
    return not os.fspath(prefix).endswith(DATA_SUFFIX) and Path(os.fspath(prefix) + ".index").is_file()


def _bundle():
    """The V2 module, imported on use: it pulls in protobuf, which `tftk --help` must not pay for."""
    return tensor_bundle


def save_bundle(prefix: str | os.PathLike, arrays: Mapping[str, np.ndarray],
                slices: Mapping[str, tuple[list[int], list]] | None = None) -> list[Path]:
    """Write `arrays` as TF's V2 checkpoint `prefix` (`.index` + `.data-00000-of-00001`), atomically.

    `slices` maps a partitioned variable's name to (full shape, [(extents, part array)]), written
    as TF writes slices (see `tensor_bundle.write_bundle`).
    Raises InvalidArgumentError as `save_arrays` does for a name or value that cannot be stored.
    """
    checked = {_check_name(name): np.asarray(value) for name, value in arrays.items()}
    parts = {_check_name(name): spec for name, spec in (slices or {}).items()}
    try:
        return _bundle().write_bundle(prefix, checked, parts)
    except ValueError as exc:
        raise InvalidArgumentError(None, None, str(exc)) from None


def save_arrays(prefix: str | os.PathLike, arrays: Mapping[str, np.ndarray]) -> list[Path]:
    """Write `arrays` as checkpoint `prefix`, atomically; returns the files written.

    Raises:
        InvalidArgumentError: a name is empty or not a string, or a value is not a plain numeric /
            bool / string array (object arrays would need pickle).
    """
    checked = [(_check_name(name), _check_array(name, value)) for name, value in arrays.items()]
    path = data_path(prefix)
    with atomic_open(path, "wb") as handle:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, array in checked:
                with archive.open(name + _MEMBER_SUFFIX, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)
    return [path]


def load_arrays(prefix: str | os.PathLike, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Read every array of checkpoint `prefix` (or only `names`, in that order), checksums verified.

    Raises:
        NotFoundError: the data file is missing, or one of `names` is not in it.
        DataLossError: the data file is truncated or corrupted.
    """
    if _is_bundle(prefix):
        reader = _bundle().BundleReader(prefix)
        stored = sorted(reader.variables())
        wanted = stored if names is None else list(names)
        for name in wanted:
            _require(name, stored, prefix, _bundle().index_path(prefix))
        return {name: reader.read(name) for name in wanted}
    with _open(prefix) as (path, archive):
        stored = _stored_names(archive)
        wanted = stored if names is None else list(names)
        for name in wanted:
            _require(name, stored, prefix, path)
        return {name: _read(archive, name) for name in wanted}


def load_variable(prefix: str | os.PathLike, name: str) -> np.ndarray:
    """The array stored under `name` in checkpoint `prefix` (TF1's `tf.train.load_variable`)."""
    return load_arrays(prefix, [name])[name]


def list_variables(prefix: str | os.PathLike) -> list[tuple[str, tuple[int, ...], np.dtype]]:
    """(name, shape, dtype) of every array in checkpoint `prefix`, sorted by name, reading headers only."""
    if _is_bundle(prefix):
        return sorted((name, tuple(shape), dtype)
                      for name, (shape, dtype) in _bundle().BundleReader(prefix).variables().items())
    with _open(prefix) as (_, archive):
        return sorted((name, *_header(archive, name)) for name in _stored_names(archive))


def checkpoint_exists(prefix: str | os.PathLike) -> bool:
    """True when checkpoint `prefix` exists: its V2 index or its .npz (a leftover temp file never counts)."""
    return _is_bundle(prefix) or data_path(prefix).is_file()


def delete_checkpoint(prefix: str | os.PathLike) -> None:
    """Remove checkpoint `prefix` in either format; a checkpoint already gone is not an error."""
    if not os.fspath(prefix).endswith(DATA_SUFFIX):
        _bundle().delete_bundle(prefix)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.fspath(prefix) + ".meta")  # the MetaGraphDef Saver.save writes beside it
    with contextlib.suppress(FileNotFoundError):
        data_path(prefix).unlink()


def print_tensors_in_checkpoint_file(file_name: str | os.PathLike, tensor_name: str | None = None,
                                     all_tensors: bool = False, all_tensor_names: bool = False) -> None:
    """Print a checkpoint's contents as TF1's `inspect_checkpoint` does.

    Args:
        file_name: the checkpoint prefix (or its .npz file).
        tensor_name: print this tensor's name and value.
        all_tensors: print every tensor's name and value.
        all_tensor_names: print every tensor's name only.

    With none of these, prints one `name (DT_FLOAT) [2,3]` line per tensor. Always ends with
    `# Total number of params: N`.
    """
    variables = list_variables(file_name)
    if all_tensors or all_tensor_names:
        for name, _, _ in variables:
            print("tensor_name: ", name)
            if all_tensors:
                print(load_variable(file_name, name))
    elif not tensor_name:
        for name, shape, dtype in variables:
            print(f"{name} ({_tf_dtype_name(dtype)}) [{','.join(str(d) for d in shape)}]")
    else:
        print("tensor_name: ", tensor_name)
        print(load_variable(file_name, tensor_name))
    total = sum(int(np.prod(shape, dtype=np.int64)) for _, shape, _ in variables)
    print(f"# Total number of params: {total}")


# ---------------------------------------------------------------------------------------------


def _check_name(name: object) -> str:
    """A variable name usable as a zip member name."""
    if not isinstance(name, str) or not name or "\0" in name:
        raise InvalidArgumentError(None, None, f"Checkpoint variable names must be non-empty strings, got {name!r}")
    return name


def _check_array(name: str, value: object) -> np.ndarray:
    """The value as an array that can be stored without pickle."""
    array = np.asarray(value)
    if array.dtype.hasobject:
        raise InvalidArgumentError(
            None, None, f"Cannot save variable {name!r}: dtype {array.dtype} holds Python objects; "
            "checkpoints store numeric, bool and string arrays only")
    return array


@contextlib.contextmanager
def _open(prefix: str | os.PathLike) -> Iterator[tuple[Path, zipfile.ZipFile]]:
    """The checkpoint's zip archive; any failure to read it becomes NotFoundError or DataLossError."""
    path = data_path(prefix)
    try:
        with zipfile.ZipFile(path) as archive:
            yield path, archive
    except FileNotFoundError:
        raise NotFoundError(
            None, None, f"Checkpoint data file {path} not found (checkpoint prefix {os.fspath(prefix)!r}): "
            "check the prefix, or use tf.train.latest_checkpoint(<dir>) to find the newest checkpoint") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError,
            NotImplementedError, RuntimeError) as exc:  # zipfile's word for a mangled compression or flag field
        raise DataLossError(
            None, None, f"Checkpoint data file {path} is truncated or corrupted ({exc}): restore an older "
            "checkpoint, or save this one again") from exc


def _stored_names(archive: zipfile.ZipFile) -> list[str]:
    """Variable names in file order."""
    return [member[: -len(_MEMBER_SUFFIX)] for member in archive.namelist() if member.endswith(_MEMBER_SUFFIX)]


def _require(name: str, stored: list[str], prefix: str | os.PathLike, path: Path) -> None:
    """NotFoundError naming the variable and the checkpoint when `name` is absent."""
    if name not in stored:
        shown = ", ".join(stored[:10]) + (", ..." if len(stored) > 10 else "")
        raise NotFoundError(
            None, None, f"Key {name!r} not found in checkpoint {os.fspath(prefix)!r} ({path}); "
            f"it holds: {shown or 'no variables'}")


def _read(archive: zipfile.ZipFile, name: str) -> np.ndarray:
    """One array; reading the member to its end makes zipfile verify its CRC-32."""
    with archive.open(name + _MEMBER_SUFFIX) as member:
        array = np.lib.format.read_array(member, allow_pickle=False)
        if member.read(1):
            raise ValueError(f"trailing bytes after array {name!r}")
    return array


def _header(archive: zipfile.ZipFile, name: str) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype from a member's .npy header, without reading its data."""
    with archive.open(name + _MEMBER_SUFFIX) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:  # rarer header versions: let read_array parse them
            array = _read(archive, name)
            shape, dtype = array.shape, array.dtype
    return tuple(shape), np.dtype(dtype)


_TF_NAMES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}


def _tf_dtype_name(dtype: np.dtype) -> str:
    """TF1's DataTypeString for a numpy dtype (DT_FLOAT, DT_INT64, DT_STRING, ...)."""
    if dtype.kind in "SU":
        return "DT_STRING"
    return "DT_" + _TF_NAMES.get(dtype.name, dtype.name.upper())
