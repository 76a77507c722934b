"""Ops on whole files: `matching_files`, `read_file`, `write_file`, and `match_filenames_once`.

Graph ops as in TF: the file system is touched when the op runs, not when it is built. Glob
patterns match in their basename as TF's do; results come back sorted.
"""

from __future__ import annotations

import glob
import os
from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import GraphKeys, Operation, Tensor, convert_to_tensor, name_scope
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["matching_files", "read_file", "write_file", "match_filenames_once"]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bind_matching_files(op: Operation, ctx: Any):
    def kernel(pattern: np.ndarray) -> np.ndarray:
        found = sorted({path for p in np.asarray(pattern).reshape(-1) for path in glob.glob(_text(p))})
        return np.array([path.encode() for path in found], dtype=object).reshape(-1)
    return kernel


def _bind_read_file(op: Operation, ctx: Any):
    def kernel(filename: np.ndarray) -> np.ndarray:
        path = _text(filename.item())
        try:
            with open(path, "rb") as handle:
                return np.array(handle.read(), dtype=object)
        except FileNotFoundError:
            raise errors.NotFoundError(None, op, f"{op.name}: {path}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(None, op, f"{op.name}: {path}; Is a directory") from None
    return kernel


def _bind_write_file(op: Operation, ctx: Any):
    def kernel(filename: np.ndarray, contents: np.ndarray) -> None:
        path = _text(filename.item())
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        data = contents.item()
        with open(path, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else str(data).encode())
    return kernel


registry.register_op("MatchingFiles", _bind_matching_files, stateful=True, fresh=True)
registry.register_op("ReadFile", _bind_read_file, stateful=True, fresh=True)
registry.register_op("WriteFile", _bind_write_file, stateful=True)
registry.not_differentiable("MatchingFiles", "ReadFile", "WriteFile")


def _string(value: Any, op_type: str, what: str, ranks: tuple[int, ...]) -> Tensor:
    t = convert_to_tensor(value, dtype=dtypes.string)
    if t.shape.ndims is not None and t.shape.ndims not in ranks:
        raise ValueError(f"{op_type}: {what} must have rank {' or '.join(map(str, ranks))}, got shape {t.shape}")
    return t


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted paths matching a glob pattern (or a vector of patterns): a 1-D string tensor."""
    return make_op("MatchingFiles", [_string(pattern, "MatchingFiles", "pattern", (0, 1))], dtypes.string,
                   [None], name)


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The bytes of the file `filename` (a scalar string), read when the op runs."""
    return make_op("ReadFile", [_string(filename, "ReadFile", "filename", (0,))], dtypes.string, [], name)


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """An op writing `contents` to `filename` (its folders created as needed) when it runs."""
    return make_multi_op("WriteFile", [_string(filename, "WriteFile", "filename", (0,)),
                                       _string(contents, "WriteFile", "contents", (0,))], [], name)


def match_filenames_once(pattern: Any, name: str | None = None) -> Any:
    """A local variable holding the files matching `pattern`, listed once when it is initialised."""
    from tftk.ops.variables import Variable
    with name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(matching_files(pattern), name=scope, trainable=False,
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])
