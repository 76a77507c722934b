"""`tf.python_io`: write and read TFRecord files (the record framing TensorBoard's event files use)."""

from __future__ import annotations

import os
from typing import Any, Iterator

from tftk.summary.events import encode_record, read_records

__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """Only uncompressed records are supported; compression types fail clearly."""

    def __init__(self, compression_type: Any = None):
        if compression_type not in (None, "", TFRecordCompressionType.NONE):
            raise NotImplementedError(f"TFRecord compression {compression_type!r} is not supported")
        self.compression_type = TFRecordCompressionType.NONE


class TFRecordWriter:
    """Append records to a TFRecord file; use as a context manager or call close()."""

    def __init__(self, path: str | os.PathLike, options: TFRecordOptions | None = None):
        self._handle = open(path, "wb")

    def write(self, record: bytes | str) -> None:
        self._handle.write(encode_record(record.encode() if isinstance(record, str) else bytes(record)))

    def flush(self) -> None:
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def tf_record_iterator(path: str | os.PathLike, options: TFRecordOptions | None = None) -> Iterator[bytes]:
    """The records of a TFRecord file, CRC-checked (DataLossError names the byte offset of a bad one)."""
    for _, payload in read_records(path):
        yield payload
