"""decode_compressed: strings compressed with ZLIB or GZIP, decompressed element-wise."""

from __future__ import annotations

import gzip
import zlib
from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.errors import DataLossError
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops.array_function import array_op, register_array_op

__all__ = ["decode_compressed"]


def _decompress(data: np.ndarray, compression_type: str) -> np.ndarray:
    def one(item: Any) -> bytes:
        raw = item if isinstance(item, bytes) else str(item).encode("latin-1")
        if compression_type == "ZLIB":
            return zlib.decompress(raw)
        if compression_type == "GZIP":
            return gzip.decompress(raw)
        return raw
    out = np.empty(data.shape, dtype=object)
    for index in np.ndindex(*data.shape):
        try:
            out[index] = one(data[index])
        except (zlib.error, OSError, EOFError) as exc:
            raise DataLossError(None, None, f"decode_compressed: input is not valid {compression_type} data ({exc})") \
                from None
    return out


register_array_op("DecodeCompressed", _decompress)


def decode_compressed(bytes: Any, compression_type: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Each string of `bytes` decompressed ('ZLIB' or 'GZIP'; '' leaves them as they are)."""
    if compression_type not in ("", "ZLIB", "GZIP"):
        raise ValueError(f"decode_compressed: compression_type must be '', 'ZLIB' or 'GZIP', got {compression_type!r}")
    x = convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    return array_op("DecodeCompressed", [x], [(dtypes.string, x.shape)], name, {"compression_type": compression_type})
