"""`tf.io.gfile`: the snake_case file API (TF 1.14+) over the same local-path code as `tf.gfile`.

Each name is TF's `tf.io.gfile` spelling of a `tf.gfile` function, with TF's argument names
(`walk(top, topdown, onerror)`, `copy/rename(src, dst, overwrite)`); errors are the tf.errors
classes TF raises. Only local paths are served, so the one registered scheme is "" (no prefix).
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

from tftk.framework import errors
from tftk.platform import gfile as _tf1

__all__ = ["GFile", "copy", "exists", "get_registered_schemes", "glob", "isdir", "join", "listdir", "makedirs",
           "mkdir", "remove", "rename", "rmtree", "stat", "walk"]

GFile = _tf1.GFile
exists = _tf1.Exists
isdir = _tf1.IsDirectory
glob = _tf1.Glob
listdir = _tf1.ListDirectory
makedirs = _tf1.MakeDirs
mkdir = _tf1.MkDir
remove = _tf1.Remove
rmtree = _tf1.DeleteRecursively
stat = _tf1.Stat


def copy(src: str, dst: str, overwrite: bool = False) -> None:
    """Copy file `src` to `dst`; AlreadyExistsError when `dst` exists and not `overwrite`."""
    _tf1.Copy(src, dst, overwrite)


def rename(src: str, dst: str, overwrite: bool = False) -> None:
    """Move `src` to `dst`; AlreadyExistsError when `dst` exists and not `overwrite`."""
    _tf1.Rename(src, dst, overwrite)


def join(path: str, *paths: str) -> str:
    """`path` and `paths` joined with the separator (os.path.join for local paths)."""
    return os.path.join(path, *paths)


def walk(top: str, topdown: bool = True,
         onerror: Callable[[errors.OpError], None] | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """(dirname, subdirectory names, file names) for `top` and below; a missing `top` yields nothing
    and passes its NotFoundError to `onerror` when given."""
    if not os.path.isdir(top):
        if onerror is not None:
            onerror(errors.NotFoundError(message=f"Could not find directory {top}"))
        return
    yield from _tf1.Walk(top, in_order=topdown)


def get_registered_schemes() -> list[str]:
    """The path schemes this file API serves: only "" (plain local paths)."""
    return [""]
