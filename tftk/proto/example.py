"""`tf.train.Example` / `SequenceExample` and their parts, as TF declares them.

tensorflow/core/example/feature.proto and example.proto, with TF's package (`tensorflow`), names
and field numbers (proto3, so repeated numbers are packed as TF writes them): a record written by
real TensorFlow parses here and the other way round.
"""

from __future__ import annotations

from tftk.proto.declare import declare_file

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample"]

_CLASSES = declare_file("tftk/proto/example.proto", "tensorflow", {
    "BytesList": [("value", 1, "bytes", "repeated")],
    "FloatList": [("value", 1, "float", "repeated")],
    "Int64List": [("value", 1, "int64", "repeated")],
    "Feature": [("bytes_list", 1, "BytesList", "oneof:kind"), ("float_list", 2, "FloatList", "oneof:kind"),
                ("int64_list", 3, "Int64List", "oneof:kind")],
    "Features": [("feature", 1, "Feature", "map")],
    "FeatureList": [("feature", 1, "Feature", "repeated")],
    "FeatureLists": [("feature_list", 1, "FeatureList", "map")],
    "Example": [("features", 1, "Features")],
    "SequenceExample": [("context", 1, "Features"), ("feature_lists", 2, "FeatureLists")],
})

BytesList = _CLASSES["BytesList"]
FloatList = _CLASSES["FloatList"]
Int64List = _CLASSES["Int64List"]
Feature = _CLASSES["Feature"]
Features = _CLASSES["Features"]
FeatureList = _CLASSES["FeatureList"]
FeatureLists = _CLASSES["FeatureLists"]
Example = _CLASSES["Example"]
SequenceExample = _CLASSES["SequenceExample"]
