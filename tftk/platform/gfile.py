"""`tf.gfile`: TF1's file API on local paths, raising tf.errors (NotFoundError, ...) like TF1."""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import shutil
from typing import IO, Any, Iterator, NamedTuple

from tftk.framework import errors

__all__ = ["Exists", "IsDirectory", "MakeDirs", "MkDir", "DeleteRecursively", "Remove", "Rename",
           "Copy", "Glob", "ListDirectory", "Walk", "Stat", "FileStatistics", "GFile", "Open",
           "FastGFile"]


@contextlib.contextmanager
def _as_tf_errors(path: Any) -> Iterator[None]:
    """Turn OSErrors into the tf.errors class TF1 raises, naming the path."""
    try:
        yield
    except FileNotFoundError as exc:
        raise errors.NotFoundError(message=f"{exc.filename or path}; No such file or directory") from None
    except FileExistsError as exc:
        raise errors.AlreadyExistsError(message=f"{exc.filename or path}; File exists") from None
    except PermissionError as exc:
        raise errors.PermissionDeniedError(message=f"{exc.filename or path}; Permission denied") from None
    except IsADirectoryError as exc:
        raise errors.FailedPreconditionError(message=f"{exc.filename or path}; Is a directory") from None
    except NotADirectoryError as exc:
        raise errors.FailedPreconditionError(message=f"{exc.filename or path}; Not a directory") from None


def Exists(filename: str) -> bool:
    return os.path.exists(filename)


def IsDirectory(dirname: str) -> bool:
    return os.path.isdir(dirname)


def MakeDirs(dirname: str) -> None:
    """Create `dirname` and its missing parents (no error if it exists)."""
    with _as_tf_errors(dirname):
        os.makedirs(dirname, exist_ok=True)


def MkDir(dirname: str) -> None:
    """Create one directory (its parent must exist); an existing directory is left as is, as in TF."""
    if os.path.isdir(dirname):
        return
    with _as_tf_errors(dirname):
        os.mkdir(dirname)


def DeleteRecursively(dirname: str) -> None:
    """Delete a directory tree (or a single file); NotFoundError if missing."""
    with _as_tf_errors(dirname):
        if os.path.isdir(dirname) and not os.path.islink(dirname):
            shutil.rmtree(dirname)
        else:
            os.remove(dirname)


def Remove(filename: str) -> None:
    with _as_tf_errors(filename):
        os.remove(filename)


def Rename(oldname: str, newname: str, overwrite: bool = False) -> None:
    """Move `oldname` to `newname`; AlreadyExistsError if `newname` exists and not `overwrite`."""
    if not overwrite and os.path.exists(newname):
        raise errors.AlreadyExistsError(message=f"{newname}; File exists (pass overwrite=True)")
    with _as_tf_errors(oldname):
        os.replace(oldname, newname)


def Copy(oldpath: str, newpath: str, overwrite: bool = False) -> None:
    """Copy a file; AlreadyExistsError if `newpath` exists and not `overwrite`."""
    if not overwrite and os.path.exists(newpath):
        raise errors.AlreadyExistsError(message=f"{newpath}; File exists (pass overwrite=True)")
    with _as_tf_errors(oldpath):
        shutil.copyfile(oldpath, newpath)


def Glob(filename: str) -> list[str]:
    """The paths matching a shell pattern, sorted."""
    return sorted(_glob.glob(filename))


def ListDirectory(dirname: str) -> list[str]:
    """Entry names of `dirname` (not paths), sorted; NotFoundError if it is missing."""
    if not os.path.isdir(dirname):
        raise errors.NotFoundError(message=f"Could not find directory {dirname}")
    return sorted(os.listdir(dirname))


def Walk(top: str, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """(dirname, subdirectory names, file names) for `top` and below; parents first if in_order."""
    for dirname, subdirs, files in os.walk(top, topdown=in_order):
        subdirs.sort()
        yield dirname, subdirs, sorted(files)


class FileStatistics(NamedTuple):
    length: int
    mtime_nsec: int
    is_directory: bool


def Stat(filename: str) -> FileStatistics:
    with _as_tf_errors(filename):
        st = os.stat(filename)
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(filename))


class GFile:
    """A file object like TF1's: opened lazily, `read()` is str in text modes and bytes in 'b' modes."""

    def __init__(self, name: str, mode: str = "r"):
        self.name = name
        self.mode = mode
        self._file: IO | None = None

    def _handle(self) -> IO:
        if self._file is None:
            with _as_tf_errors(self.name):
                self._file = open(self.name, self.mode)  # noqa: SIM115 - closed by close()/__exit__
        return self._file

    def size(self) -> int:
        return Stat(self.name).length

    def read(self, n: int = -1) -> Any:
        return self._handle().read(n)

    def readline(self) -> Any:
        return self._handle().readline()

    def readlines(self) -> list:
        return self._handle().readlines()

    def write(self, data: Any) -> None:
        self._handle().write(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._handle().seek(offset, whence)

    def tell(self) -> int:
        return self._handle().tell()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self) -> Iterator:
        return iter(self._handle())

    def __enter__(self) -> "GFile":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


Open = GFile
FastGFile = GFile
