"""Protobuf / LevelDB base-128 varints: 7 bits a byte, low bits first, the high bit set on all but the last."""

from __future__ import annotations

__all__ = ["encode_varint"]


def encode_varint(value: int) -> bytes:
    """The varint bytes of a non-negative integer."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
