"""tf.train.Example and its features (tensorflow/core/example/{example,feature}.proto), TF's field numbers."""

from __future__ import annotations

from tftk.proto.declare import declare_file

__all__ = ["Example", "Features", "Feature", "BytesList", "FloatList", "Int64List"]

_CLASSES = declare_file("tftk/proto/example.proto", "tensorflow", {
    "BytesList": [("value", 1, "bytes", "repeated")],
    "FloatList": [("value", 1, "float", "repeated")],
    "Int64List": [("value", 1, "int64", "repeated")],
    "Feature": [("bytes_list", 1, "BytesList", "oneof:kind"), ("float_list", 2, "FloatList", "oneof:kind"),
                ("int64_list", 3, "Int64List", "oneof:kind")],
    "Features": [("feature", 1, "Feature", "map")],
    "Example": [("features", 1, "Features")],
})

BytesList = _CLASSES["BytesList"]
FloatList = _CLASSES["FloatList"]
Int64List = _CLASSES["Int64List"]
Feature = _CLASSES["Feature"]
Features = _CLASSES["Features"]
Example = _CLASSES["Example"]
