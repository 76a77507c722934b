"""`tf.compat`'s text and type helpers: bytes/str conversion and the Python numeric type tuples."""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

__all__ = ["as_bytes", "as_text", "as_str", "as_str_any", "path_to_str", "bytes_or_text_types",
           "integral_types", "real_types", "complex_types"]

bytes_or_text_types = (bytes, str)
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes (str encoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str (bytes decoded with `encoding`); TypeError for anything else."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """`as_str` for bytes, `str(value)` for anything else."""
    return as_str(value, encoding) if isinstance(value, bytes) else str(value)


def path_to_str(path: Any) -> Any:
    """An os.PathLike as its str; anything else unchanged."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path
