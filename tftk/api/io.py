"""The `tf.io` namespace (TF 1.13+): Example parsing, TFRecord files, raw/CSV decoding, and the file,
queue, base64, compression, tensor serialization and image ops under their tf.io path, and the
tf.io.gfile file API."""

from tftk.ops.compression_ops import decode_compressed
from tftk.ops.data_flow_ops import QueueBase, RandomShuffleQueue
from tftk.ops.file_ops import matching_files, read_file, write_file
from tftk.ops.image_ops import decode_png, encode_png
from tftk.ops.io_ops import decode_csv, decode_raw
from tftk.ops.parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature,
                                  parse_example, parse_single_example, parse_single_sequence_example)
from tftk.ops.string_ops import decode_base64, encode_base64
from tftk.ops.tensor_serialization_ops import (deserialize_many_sparse, parse_tensor, serialize_many_sparse,
                                               serialize_sparse, serialize_tensor)
from tftk.platform import io_gfile as gfile

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "parse_example",
           "parse_single_example", "parse_single_sequence_example", "decode_csv", "decode_raw",
           "QueueBase", "RandomShuffleQueue", "decode_base64", "decode_compressed", "decode_png", "encode_base64",
           "encode_png", "gfile", "matching_files", "parse_tensor", "read_file", "serialize_tensor", "write_file",
           "serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse"]

_FROM_PYTHON_IO = ("TFRecordWriter", "TFRecordOptions", "TFRecordCompressionType", "tf_record_iterator")


def __getattr__(name: str):
    """TFRecord names load protobuf (through tensorboardX's CRC), and the JPEG decoders Pillow: on first use."""
    if name in _FROM_PYTHON_IO:
        from tftk.api import python_io
        return getattr(python_io, name)
    if name in ("decode_image", "decode_jpeg"):
        from tftk.ops import image_preprocessing
        return getattr(image_preprocessing, name)
    if name in ("match_filenames_once", "write_graph"):
        import tftk
        return getattr(tftk.train, name)
    raise AttributeError(f"module 'tf.io' has no attribute {name!r}")
