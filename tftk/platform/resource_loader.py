"""`tf.resource_loader`: find and read data files that ship beside the calling program's source.

TF resolves these in Bazel runfiles; outside Bazel (how TF1 programs run, and how tftk runs them)
the data directory is the calling module's own directory, which is what TF falls back to too.
"""

from __future__ import annotations

import inspect
import os
import sys

__all__ = ["get_data_files_path", "get_path_to_datafile", "get_root_dir_with_all_resources", "load_resource",
           "readahead_file_path"]

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _caller_dir(depth: int) -> str:
    return os.path.dirname(os.path.abspath(inspect.getfile(sys._getframe(depth + 1))))


def get_data_files_path() -> str:
    """The directory of the module that calls this function (where its data files are)."""
    return _caller_dir(1)


def get_root_dir_with_all_resources() -> str:
    """The directory holding the calling module's resources (its own directory outside Bazel)."""
    return _caller_dir(1)


def get_path_to_datafile(path: str) -> str:
    """`path` resolved against the calling module's directory."""
    return os.path.join(_caller_dir(1), path)


def load_resource(path: str) -> bytes:
    """The bytes of a resource given relative to the package tree (``tftk/...``); IOError when absent."""
    full = os.path.join(_PACKAGE_ROOT, os.path.normpath(path))
    with open(full, "rb") as f:
        return f.read()


def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """`path` itself: local files need no read-ahead wrapper."""
    return path
