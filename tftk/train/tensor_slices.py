"""Partitioned variables in V2 checkpoints: TF stores each slice under an OrderedCode key.

A partitioned tensor's BundleEntryProto lists its slices; slice i's values are the entry keyed
`EncodeTensorNameSlice(name, slice)` (util/saved_tensor_slice_util.cc): OrderedCode of
0, the name, the rank, then each dim's start and length (-1 for a full extent).
"""

from __future__ import annotations

import numpy as np

from tftk.framework.errors import DataLossError
from tftk.summary.tensor_proto import numpy_dtype

__all__ = ["slice_key", "assemble"]

# OrderedCode's header bits for a signed number encoded in 1..10 bytes (lib/strings/ordered_code.cc).
_SIGNED_HEADER = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0),
                  (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)]


def _num_increasing(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return bytes([len(raw)]) + raw


def _string(value: bytes) -> bytes:
    return value.replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def _signed_increasing(value: int) -> bytes:
    magnitude = ~value if value < 0 else value
    length = magnitude.bit_length() // 7 + 1
    out = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big")[10 - length:])
    out[0] ^= _SIGNED_HEADER[length][0]
    if length > 1:
        out[1] ^= _SIGNED_HEADER[length][1]
    return bytes(out)


def slice_key(name: str, extents: list[tuple[int, int]]) -> str:
    """The bundle key of slice `extents` [(start, length or -1)] of tensor `name`."""
    key = _num_increasing(0) + _string(name.encode("utf-8")) + _num_increasing(len(extents))
    for start, length in extents:
        key += _signed_increasing(start) + _signed_increasing(length)
    return key.decode("utf-8", errors="surrogateescape")


def assemble(reader, name: str, entry) -> np.ndarray:
    """The full tensor `name` put together from its slices (TF's BundleReader::GetSliceValue)."""
    dims = [int(d.size) for d in entry.shape.dim]
    out = np.zeros(dims, numpy_dtype(entry.dtype))
    for proto in entry.slices:
        if len(proto.extent) not in (0, len(dims)):
            raise DataLossError(None, None, f"Checkpoint {reader.prefix!r}: slice of {name!r} has rank "
                                f"{len(proto.extent)}, the tensor {len(dims)}")
        extents = [(e.start, e.length if e.WhichOneof("has_length") else -1) for e in proto.extent] \
            or [(0, -1)] * len(dims)
        key = slice_key(name, extents)
        if key not in reader.entries:
            raise DataLossError(None, None, f"Checkpoint {reader.prefix!r} lists a slice of {name!r} "
                                f"({extents}) but holds no values for it")
        index = tuple(slice(start, None if length < 0 else start + length) for start, length in extents)
        target = out[index]
        part = reader._read_entry(name, reader.entries[key])
        if part.shape != target.shape:
            raise DataLossError(None, None, f"Checkpoint {reader.prefix!r}: slice {extents} of {name!r} "
                                f"holds shape {list(part.shape)}, expected {list(target.shape)}")
        out[index] = part
    return out
