"""The `tf.io` namespace (TF 1.13+): Example parsing, TFRecord files, raw/CSV decoding."""

from tftk.ops.io_ops import decode_csv, decode_raw
from tftk.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,
                                  parse_example, parse_single_example, parse_single_sequence_example)

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "parse_example",
           "parse_single_example", "parse_single_sequence_example", "decode_csv", "decode_raw"]

_FROM_PYTHON_IO = ("TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator")


def __getattr__(name: str):
    """TFRecord names load protobuf (through tensorboardX's CRC), so they come on first use."""
    if name in _FROM_PYTHON_IO:
        from tftk.api import python_io
        return getattr(python_io, name)
    raise AttributeError(f"module 'tf.io' has no attribute {name!r}")
