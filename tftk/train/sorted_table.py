"""TensorFlow's sorted string table (LevelDB's format, lib/io/table*.cc): a checkpoint's `.index`.

Layout: data blocks of key/value entries (keys prefix-compressed against the previous key,
a restart point every 16 entries), each followed by a 5-byte trailer (compression type 0, masked
CRC-32C of block + type); a metaindex block (empty); an index block mapping the last key of each
data block to its (offset, size); and a 48-byte footer holding the two block handles and the
magic number 0xdb4775248b80fb57. Blocks are never compressed here (TF writes none).

The reader trusts nothing: every varint, length, offset and restart array is checked against the
bytes actually present, every block's CRC is verified, so a corrupt file raises TableError
before any allocation a length field could drive.
"""

from __future__ import annotations

import struct
from typing import Iterable

from tftk.kernels.crc32c import extend, mask, unmask
from tftk.kernels.varint import encode_varint

__all__ = ["TableError", "build_table", "read_table"]

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
BLOCK_SIZE = 256 * 1024  # TF's table_options.h default
RESTART_INTERVAL = 16
_TRAILER = 5


class TableError(ValueError):
    """A `.index` file that is not a well-formed sorted table (truncated, corrupt, bad checksum)."""


def _block(entries: list[tuple[bytes, bytes]], restart_interval: int) -> bytes:
    out = bytearray()
    restarts = []
    previous = b""
    for i, (key, value) in enumerate(entries):
        shared = 0
        if i % restart_interval == 0:
            restarts.append(len(out))
        else:
            limit = min(len(previous), len(key))
            while shared < limit and previous[shared] == key[shared]:
                shared += 1
        out += encode_varint(shared) + encode_varint(len(key) - shared) + encode_varint(len(value))
        out += key[shared:] + value
        previous = key
    for offset in restarts or [0]:
        out += struct.pack("<I", offset)
    out += struct.pack("<I", len(restarts or [0]))
    return bytes(out)


def _with_trailer(contents: bytes) -> bytes:
    return contents + b"\x00" + struct.pack("<I", mask(extend(extend(0, contents), b"\x00")))


def build_table(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The bytes of a table holding `items` (keys must be strictly increasing)."""
    out = bytearray()
    index: list[tuple[bytes, bytes]] = []
    pending: list[tuple[bytes, bytes]] = []
    pending_size = 0
    previous: bytes | None = None

    def flush() -> None:
        nonlocal pending, pending_size
        contents = _block(pending, RESTART_INTERVAL)
        index.append((pending[-1][0], encode_varint(len(out)) + encode_varint(len(contents))))
        out.extend(_with_trailer(contents))
        pending, pending_size = [], 0

    for key, value in items:
        if previous is not None and key <= previous:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {previous!r}")
        previous = key
        pending.append((key, value))
        pending_size += len(key) + len(value) + 8
        if pending_size >= BLOCK_SIZE:
            flush()
    if pending:
        flush()
    meta_handle = encode_varint(len(out)) + encode_varint(len(_block([], 1)))
    out.extend(_with_trailer(_block([], 1)))
    index_contents = _block(index, 1)
    index_handle = encode_varint(len(out)) + encode_varint(len(index_contents))
    out.extend(_with_trailer(index_contents))
    handles = meta_handle + index_handle
    out.extend(handles + b"\x00" * (FOOTER_SIZE - 8 - len(handles)) + struct.pack("<Q", MAGIC))
    return bytes(out)


class _Reader:
    """Bounds-checked decoding of one buffer."""

    def __init__(self, data: bytes, what: str):
        self.data, self.what, self.pos = data, what, 0

    def varint(self, limit_bits: int = 64) -> int:
        result = shift = 0
        while True:
            if self.pos >= len(self.data):
                raise TableError(f"{self.what}: varint runs past the end")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
            if shift >= limit_bits:
                raise TableError(f"{self.what}: varint longer than {limit_bits} bits")
        return result

    def take(self, count: int) -> bytes:
        if count > len(self.data) - self.pos:
            raise TableError(f"{self.what}: a length of {count} runs past the end")
        chunk = self.data[self.pos:self.pos + count]
        self.pos += count
        return chunk


def _read_block(data: bytes, handle: bytes, what: str) -> bytes:
    reader = _Reader(handle, what)
    offset, size = reader.varint(), reader.varint()
    if offset + size + _TRAILER > len(data) - FOOTER_SIZE:
        raise TableError(f"{what}: block at {offset} of {size} bytes lies outside the file")
    contents = data[offset:offset + size]
    kind = data[offset + size]
    stored = struct.unpack_from("<I", data, offset + size + 1)[0]
    if kind != 0:
        raise TableError(f"{what}: compressed block (type {kind}); only uncompressed tables are supported")
    if unmask(stored) != extend(extend(0, contents), b"\x00"):
        raise TableError(f"{what}: block checksum mismatch (corrupt file)")
    return contents


def _entries(block: bytes, what: str) -> list[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise TableError(f"{what}: block too short")
    restarts = struct.unpack_from("<I", block, len(block) - 4)[0]
    end = len(block) - 4 - 4 * restarts
    if restarts > len(block) // 4 or end < 0:
        raise TableError(f"{what}: restart array larger than its block")
    reader = _Reader(block[:end], what)
    out: list[tuple[bytes, bytes]] = []
    key = b""
    while reader.pos < end:
        shared, unshared, value_size = reader.varint(32), reader.varint(32), reader.varint(32)
        if shared > len(key):
            raise TableError(f"{what}: entry shares {shared} bytes of a {len(key)}-byte key")
        key = key[:shared] + reader.take(unshared)
        out.append((key, reader.take(value_size)))
    return out


def read_table(data: bytes, what: str = "table") -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a table, in key order; TableError naming `what` on any corruption."""
    if len(data) < FOOTER_SIZE:
        raise TableError(f"{what}: file of {len(data)} bytes is shorter than a table footer (truncated?)")
    footer = data[-FOOTER_SIZE:]
    if struct.unpack_from("<Q", footer, 40)[0] != MAGIC:
        raise TableError(f"{what}: bad magic number (not a TensorFlow checkpoint index, or truncated)")
    handles = _Reader(footer[:40], what)
    handles.varint(), handles.varint()  # the metaindex block: TF stores nothing there
    index_handle = footer[handles.pos:40]
    items: list[tuple[bytes, bytes]] = []
    for _, block_handle in _entries(_read_block(data, index_handle, what), what):
        items.extend(_entries(_read_block(data, block_handle, what), what))
    for (a, _), (b, _) in zip(items, items[1:]):
        if b <= a:
            raise TableError(f"{what}: keys out of order")
    return items
