"""TFRecord files with TF's compression options: none, ZLIB (a zlib stream) or GZIP.

TF compresses the whole file as one stream (zlib window 15, GZIP = window 15 + 16), so a
compressed file is the uncompressed record framing run through the compressor; CRCs are of
the uncompressed bytes. tf.python_io's writer/iterator and TFRecordDataset both use this module.
"""

from __future__ import annotations

import gzip
import os
import zlib
from typing import Any, BinaryIO, Iterator

import numpy as np

from tftk.framework import errors

__all__ = ["compression_name", "open_for_reading", "open_for_writing", "read_tfrecords", "CHUNK_BYTES"]

CHUNK_BYTES = 4 << 20  # bytes read at a time

_NAMES = {None: "", "": "", 0: "", 1: "ZLIB", 2: "GZIP", "ZLIB": "ZLIB", "GZIP": "GZIP", "NONE": ""}


def compression_name(compression: Any) -> str:
    """'' / 'ZLIB' / 'GZIP' from a TFRecordCompressionType, string, bytes or TFRecordOptions."""
    if hasattr(compression, "compression_type"):
        compression = compression.compression_type
    if isinstance(compression, bytes):
        compression = compression.decode()
    if isinstance(compression, str):
        compression = compression.upper()
    if compression not in _NAMES:
        raise ValueError(f"Unsupported TFRecord compression {compression!r}: use '', 'ZLIB' or 'GZIP'")
    return _NAMES[compression]


class _ZlibReader:
    """A read()-able view of a zlib-compressed file."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._inflate = zlib.decompressobj()
        self._buffer = b""
        self._eof = False

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n and not self._eof:
            chunk = self._raw.read(1 << 16)
            if chunk:
                self._buffer += self._inflate.decompress(chunk)
            else:
                self._buffer += self._inflate.flush()
                self._eof = True
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def close(self) -> None:
        self._raw.close()


class _ZlibWriter:
    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._deflate = zlib.compressobj()

    def write(self, data: bytes) -> None:
        self._raw.write(self._deflate.compress(data))

    def flush(self) -> None:
        self._raw.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self) -> None:
        self._raw.write(self._deflate.flush())
        self._raw.close()


def _open(path: str | os.PathLike, compression: Any, mode: str, zlib_stream: type) -> Any:
    kind = compression_name(compression)
    if kind == "GZIP":
        return gzip.open(path, mode)
    raw = open(path, mode)
    return zlib_stream(raw) if kind == "ZLIB" else raw


def open_for_reading(path: str | os.PathLike, compression: Any = None) -> Any:
    """A binary stream of the file's uncompressed bytes."""
    return _open(path, compression, "rb", _ZlibReader)


def open_for_writing(path: str | os.PathLike, compression: Any = None) -> Any:
    """A binary stream compressing what is written to the file."""
    return _open(path, compression, "wb", _ZlibWriter)


def read_tfrecords(path: str | os.PathLike, compression: Any = None,
                  chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, bytes]]:
    """(offset in the uncompressed stream, payload) of every record, CRC-checked.

    The file is read `chunk_bytes` at a time and each chunk's records are checked in one compiled
    call (kernels/record_scan.py). A bad checksum or a record cut short raises DataLossError naming
    the file and the record's byte offset.
    """
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{os.fspath(path)}; No such file or directory")
    handle = open_for_reading(path, compression)
    try:
        try:
            yield from _scan_stream(handle, os.fspath(path), max(int(chunk_bytes), 1 << 12))
        except (OSError, EOFError, zlib.error) as exc:  # a compressed stream that is not one
            raise errors.DataLossError(None, None, f"{os.fspath(path)} is not a valid "
                                       f"{compression_name(compression) or 'uncompressed'} TFRecord "
                                       f"file: {exc}") from None
    finally:
        handle.close()


def _scan_stream(handle: Any, path: str, chunk_bytes: int) -> Iterator[tuple[int, bytes]]:
    """The records of an open stream, read in chunks; a record may span chunks."""
    from tftk.kernels.record_scan import HEADER_BYTES, LENGTH_MISMATCH, scan_records
    data, pos, base, eof = b"", 0, 0, False  # base: the stream offset of data[0]
    while True:
        offsets, lengths, pos, status, need = scan_records(np.frombuffer(data, np.uint8), pos)
        for start, length in zip(offsets.tolist(), lengths.tolist()):
            yield base + start - HEADER_BYTES, data[start:start + length]
        if status:
            what = "length" if status == LENGTH_MISMATCH else "data"
            raise errors.DataLossError(None, None, f"corrupted record at byte {base + pos} of {path}: "
                                       f"{what} checksum mismatch")
        if eof:
            if pos < len(data):
                raise errors.DataLossError(None, None, f"truncated record at byte {base + pos} of {path}: "
                                           "the file ends mid-record")
            return
        chunk = handle.read(max(chunk_bytes, min(need - (len(data) - pos), 1 << 26)))
        eof = not chunk
        data, base, pos = data[pos:] + chunk, base + pos, 0
