"""`tf.train.Example` / `SequenceExample` and their parts, as TF declares them.

tensorflow/core/example/feature.proto and example.proto, with TF's package (`tensorflow`), names
and field numbers: a record written by real TensorFlow parses here and the other way round. The
message classes are built from descriptors at import time (no generated code, no protoc).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
           "FeatureLists", "Example", "SequenceExample"]

_F = descriptor_pb2.FieldDescriptorProto


def _field(name: str, number: int, kind: int, type_name: str = "", repeated: bool = False,
           packed: bool = False, oneof: int | None = None) -> _F:
    field = _F(name=name, number=number, type=kind,
               label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    if packed:
        field.options.packed = True
    if oneof is not None:
        field.oneof_index = oneof
    return field


def _message(name: str, fields: list, nested: list | None = None, oneofs: tuple = ()) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=name, field=fields, nested_type=nested or [])
    for oneof in oneofs:
        message.oneof_decl.add(name=oneof)
    return message


def _map_entry(name: str, value_type: str) -> descriptor_pb2.DescriptorProto:
    entry = _message(name, [_field("key", 1, _F.TYPE_STRING),
                            _field("value", 2, _F.TYPE_MESSAGE, value_type)])
    entry.options.map_entry = True
    return entry


def _files() -> list[descriptor_pb2.FileDescriptorProto]:
    feature = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/feature.proto", package="tensorflow", syntax="proto3")
    feature.message_type.extend([
        _message("BytesList", [_field("value", 1, _F.TYPE_BYTES, repeated=True)]),
        _message("FloatList", [_field("value", 1, _F.TYPE_FLOAT, repeated=True, packed=True)]),
        _message("Int64List", [_field("value", 1, _F.TYPE_INT64, repeated=True, packed=True)]),
        _message("Feature", [_field("bytes_list", 1, _F.TYPE_MESSAGE, ".tensorflow.BytesList", oneof=0),
                             _field("float_list", 2, _F.TYPE_MESSAGE, ".tensorflow.FloatList", oneof=0),
                             _field("int64_list", 3, _F.TYPE_MESSAGE, ".tensorflow.Int64List", oneof=0)],
                 oneofs=("kind",)),
        _message("Features", [_field("feature", 1, _F.TYPE_MESSAGE, ".tensorflow.Features.FeatureEntry",
                                     repeated=True)],
                 [_map_entry("FeatureEntry", ".tensorflow.Feature")]),
        _message("FeatureList", [_field("feature", 1, _F.TYPE_MESSAGE, ".tensorflow.Feature", repeated=True)]),
        _message("FeatureLists", [_field("feature_list", 1, _F.TYPE_MESSAGE,
                                         ".tensorflow.FeatureLists.FeatureListEntry", repeated=True)],
                 [_map_entry("FeatureListEntry", ".tensorflow.FeatureList")]),
    ])
    example = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/example/example.proto", package="tensorflow", syntax="proto3",
        dependency=["tensorflow/core/example/feature.proto"])
    example.message_type.extend([
        _message("Example", [_field("features", 1, _F.TYPE_MESSAGE, ".tensorflow.Features")]),
        _message("SequenceExample", [_field("context", 1, _F.TYPE_MESSAGE, ".tensorflow.Features"),
                                     _field("feature_lists", 2, _F.TYPE_MESSAGE, ".tensorflow.FeatureLists")]),
    ])
    return [feature, example]


def _classes() -> dict:
    pool = descriptor_pool.Default()
    for file_proto in _files():
        try:
            pool.FindFileByName(file_proto.name)
        except KeyError:
            pool.Add(file_proto)
    names = __all__
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{n}")) for n in names}


_CLASSES = _classes()
BytesList = _CLASSES["BytesList"]
FloatList = _CLASSES["FloatList"]
Int64List = _CLASSES["Int64List"]
Feature = _CLASSES["Feature"]
Features = _CLASSES["Features"]
FeatureList = _CLASSES["FeatureList"]
FeatureLists = _CLASSES["FeatureLists"]
Example = _CLASSES["Example"]
SequenceExample = _CLASSES["SequenceExample"]
