"""`tf.python_io`: write and read TFRecord files, uncompressed or ZLIB/GZIP-compressed as TF does."""

from __future__ import annotations

import os
from typing import Any, Iterator

from tftk.data.tfrecord import compression_name, open_for_writing, read_tfrecords
from tftk.summary.events import encode_record

__all__ = ["TFRecordWriter", "tf_record_iterator", "TFRecordOptions", "TFRecordCompressionType"]


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """How a TFRecord file is compressed: TFRecordCompressionType.NONE/ZLIB/GZIP or '', 'ZLIB', 'GZIP'."""

    _TYPES = {"": TFRecordCompressionType.NONE, "ZLIB": TFRecordCompressionType.ZLIB,
              "GZIP": TFRecordCompressionType.GZIP}

    def __init__(self, compression_type: Any = None):
        self.compression_type = self._TYPES[compression_name(compression_type)]

    @classmethod
    def get_compression_type_string(cls, options: "TFRecordOptions | None") -> str:
        return "" if options is None else compression_name(options)


class TFRecordWriter:
    """Append records to a TFRecord file; use as a context manager or call close()."""

    def __init__(self, path: str | os.PathLike, options: TFRecordOptions | str | None = None):
        self._handle = open_for_writing(path, options)

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


def tf_record_iterator(path: str | os.PathLike, options: TFRecordOptions | str | None = None) -> Iterator[bytes]:
    """The records of a TFRecord file, CRC-checked (DataLossError names the byte offset of a bad one)."""
    for _, payload in read_tfrecords(path, options):
        yield payload
