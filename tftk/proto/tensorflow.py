"""TensorFlow's graph and file-format messages with TF's field numbers (TF 2.x .proto files).

tensorboardX already ships GraphDef, NodeDef, AttrValue, TensorProto, TensorShapeProto, DataType,
VersionDef, Summary and Event in its own `tensorboardX` package (same field numbers as TF's); they
are re-exported here, so every tftk module imports TF's messages from this one place. The rest are
declared below under the package name `tensorflow`, from:

- core/protobuf/meta_graph.proto: MetaGraphDef (+ MetaInfoDef), CollectionDef, TensorInfo,
  SignatureDef, AssetFileDef
- core/protobuf/saved_model.proto: SavedModel
- core/protobuf/saver.proto: SaverDef
- core/protobuf/tensor_bundle.proto: BundleHeaderProto, BundleEntryProto
- core/framework/tensor_slice.proto: TensorSliceProto
- core/framework/variable.proto: VariableDef, SaveSliceInfoDef
- core/framework/op_def.proto: OpDef, OpList (a MetaGraphDef's `stripped_op_list`)
- python/training/checkpoint_state.proto: CheckpointState (the `checkpoint` file, text format)
- core/framework/function.proto: FunctionDef, FunctionDefLibrary, GradientDef (the bodies of
  functional control flow); tensorboardX's GraphDef lacks its `library` field (2), which
  `GraphLibrary` declares alone: parsed from, or merged into, a GraphDef's bytes (formats/functions).
  Binary files keep the library as an unknown field; the text format drops unknown fields, so
  `message_to_text` / `parse_text` go through twins of GraphDef, MetaGraphDef and SavedModel that
  declare it (same field numbers, same bytes).

Fields tftk does not use (SavedObjectGraph, composite tensors, full types) are left undeclared:
protobuf keeps them as unknown fields, so a TF file still round-trips byte for byte.
"""

from __future__ import annotations

from google.protobuf import any_pb2
from tensorboardX.proto.attr_value_pb2 import AttrValue, NameAttrList
from tensorboardX.proto.event_pb2 import Event, LogMessage, SessionLog, TaggedRunMetadata
from tensorboardX.proto.graph_pb2 import GraphDef
from tensorboardX.proto.node_def_pb2 import NodeDef
from tensorboardX.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboardX.proto.tensor_pb2 import TensorProto
from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboardX.proto.types_pb2 import DataType
from tensorboardX.proto.versions_pb2 import VersionDef

from tftk.proto.declare import declare_file

__all__ = ["AttrValue", "NameAttrList", "Event", "LogMessage", "SessionLog", "TaggedRunMetadata",
           "GraphDef", "NodeDef", "HistogramProto", "Summary", "SummaryMetadata", "TensorProto",
           "TensorShapeProto", "DataType", "VersionDef", "Any",
           "FunctionDef", "FunctionDefLibrary", "GradientDef", "GraphLibrary", "message_to_text", "parse_text",
           "MetaGraphDef", "CollectionDef", "TensorInfo", "SignatureDef", "AssetFileDef",
           "SavedModel", "SaverDef", "BundleHeaderProto", "BundleEntryProto", "TensorSliceProto",
           "VariableDef", "SaveSliceInfoDef", "OpDef", "OpList", "CheckpointState"]

Any = any_pb2.Any

_DTYPE = "enum:." + DataType.DESCRIPTOR.full_name
_SHAPE = "." + TensorShapeProto.DESCRIPTOR.full_name
_TENSOR = "." + TensorProto.DESCRIPTOR.full_name
_ATTR = "." + AttrValue.DESCRIPTOR.full_name
_GRAPH = "." + GraphDef.DESCRIPTOR.full_name
_VERSION = "." + VersionDef.DESCRIPTOR.full_name
_NODE = "." + NodeDef.DESCRIPTOR.full_name

_MESSAGES: dict[str, list[tuple]] = {
    # core/framework/op_def.proto
    "OpDef": [("name", 1, "string"), ("input_arg", 2, "OpDef.ArgDef", "repeated"),
              ("output_arg", 3, "OpDef.ArgDef", "repeated"), ("control_output", 20, "string", "repeated"),
              ("attr", 4, "OpDef.AttrDef", "repeated"), ("deprecation", 8, "OpDeprecation"),
              ("summary", 5, "string"), ("description", 6, "string"), ("is_commutative", 18, "bool"),
              ("is_aggregate", 16, "bool"), ("is_stateful", 17, "bool"),
              ("allows_uninitialized_input", 19, "bool"), ("is_distributed_communication", 21, "bool")],
    "OpDef.ArgDef": [("name", 1, "string"), ("description", 2, "string"), ("type", 3, _DTYPE),
                     ("type_attr", 4, "string"), ("number_attr", 5, "string"),
                     ("type_list_attr", 6, "string"), ("is_ref", 16, "bool")],
    "OpDef.AttrDef": [("name", 1, "string"), ("type", 2, "string"), ("default_value", 3, _ATTR),
                      ("description", 4, "string"), ("has_minimum", 5, "bool"), ("minimum", 6, "int64"),
                      ("allowed_values", 7, _ATTR)],
    "OpDeprecation": [("version", 1, "int32"), ("explanation", 2, "string")],
    "OpList": [("op", 1, "OpDef", "repeated")],
    # core/framework/function.proto (its uint32-keyed maps as their wire form: repeated key/value pairs)
    "FunctionDef": [("signature", 1, "OpDef"), ("attr", 5, _ATTR, "map"),
                    ("arg_attr", 7, "FunctionDef.ArgAttrPair", "repeated"),
                    ("resource_arg_unique_id", 8, "FunctionDef.ResourceIdPair", "repeated"),
                    ("node_def", 3, _NODE, "repeated"), ("ret", 4, "string", "map"),
                    ("control_ret", 6, "string", "map")],
    "FunctionDef.ArgAttrs": [("attr", 1, _ATTR, "map")],
    "FunctionDef.ArgAttrPair": [("key", 1, "uint32"), ("value", 2, "FunctionDef.ArgAttrs")],
    "FunctionDef.ResourceIdPair": [("key", 1, "uint32"), ("value", 2, "uint32")],
    "GradientDef": [("function_name", 1, "string"), ("gradient_func", 2, "string")],
    "RegisteredGradient": [("gradient_func", 1, "string"), ("registered_op_type", 2, "string")],
    "FunctionDefLibrary": [("function", 1, "FunctionDef", "repeated"), ("gradient", 2, "GradientDef", "repeated"),
                           ("registered_gradients", 3, "RegisteredGradient", "repeated")],
    "GraphLibrary": [("library", 2, "FunctionDefLibrary")],
    # text-format twins (see the module docstring): GraphDef with its library, and its holders
    "GraphDefText": [("node", 1, _NODE, "repeated"), ("versions", 4, _VERSION), ("version", 3, "int32"),
                     ("library", 2, "FunctionDefLibrary")],
    # core/protobuf/saver.proto
    "SaverDef": [("filename_tensor_name", 1, "string"), ("save_tensor_name", 2, "string"),
                 ("restore_op_name", 3, "string"), ("max_to_keep", 4, "int32"), ("sharded", 5, "bool"),
                 ("keep_checkpoint_every_n_hours", 6, "float"),
                 ("version", 7, "enum:SaverDef.CheckpointFormatVersion")],
    # core/protobuf/meta_graph.proto
    "MetaGraphDef": [("meta_info_def", 1, "MetaGraphDef.MetaInfoDef"), ("graph_def", 2, _GRAPH),
                     ("saver_def", 3, "SaverDef"), ("collection_def", 4, "CollectionDef", "map"),
                     ("signature_def", 5, "SignatureDef", "map"),
                     ("asset_file_def", 6, "AssetFileDef", "repeated")],
    "MetaGraphDef.MetaInfoDef": [("meta_graph_version", 1, "string"), ("stripped_op_list", 2, "OpList"),
                                 ("any_info", 3, ".google.protobuf.Any"), ("tags", 4, "string", "repeated"),
                                 ("tensorflow_version", 5, "string"), ("tensorflow_git_version", 6, "string"),
                                 ("stripped_default_attrs", 7, "bool"),
                                 ("function_aliases", 8, "string", "map")],
    "CollectionDef": [("node_list", 1, "CollectionDef.NodeList", "oneof:kind"),
                      ("bytes_list", 2, "CollectionDef.BytesList", "oneof:kind"),
                      ("int64_list", 3, "CollectionDef.Int64List", "oneof:kind"),
                      ("float_list", 4, "CollectionDef.FloatList", "oneof:kind"),
                      ("any_list", 5, "CollectionDef.AnyList", "oneof:kind")],
    "CollectionDef.NodeList": [("value", 1, "string", "repeated")],
    "CollectionDef.BytesList": [("value", 1, "bytes", "repeated")],
    "CollectionDef.Int64List": [("value", 1, "int64", "repeated")],
    "CollectionDef.FloatList": [("value", 1, "float", "repeated")],
    "CollectionDef.AnyList": [("value", 1, ".google.protobuf.Any", "repeated")],
    "TensorInfo": [("name", 1, "string", "oneof:encoding"),
                   ("coo_sparse", 4, "TensorInfo.CooSparse", "oneof:encoding"),
                   ("dtype", 2, _DTYPE), ("tensor_shape", 3, _SHAPE)],
    "TensorInfo.CooSparse": [("values_tensor_name", 1, "string"), ("indices_tensor_name", 2, "string"),
                             ("dense_shape_tensor_name", 3, "string")],
    "SignatureDef": [("inputs", 1, "TensorInfo", "map"), ("outputs", 2, "TensorInfo", "map"),
                     ("method_name", 3, "string"), ("defaults", 4, _TENSOR, "map")],
    "AssetFileDef": [("tensor_info", 1, "TensorInfo"), ("filename", 2, "string")],
    # core/protobuf/saved_model.proto
    "SavedModel": [("saved_model_schema_version", 1, "int64"), ("meta_graphs", 2, "MetaGraphDef", "repeated")],
    # core/framework/tensor_slice.proto
    "TensorSliceProto": [("extent", 1, "TensorSliceProto.Extent", "repeated")],
    "TensorSliceProto.Extent": [("start", 1, "int64"), ("length", 2, "int64", "oneof:has_length")],
    # core/protobuf/tensor_bundle.proto
    "BundleHeaderProto": [("num_shards", 1, "int32"), ("endianness", 2, "enum:BundleHeaderProto.Endianness"),
                          ("version", 3, _VERSION)],
    "BundleEntryProto": [("dtype", 1, _DTYPE), ("shape", 2, _SHAPE), ("shard_id", 3, "int32"),
                         ("offset", 4, "int64"), ("size", 5, "int64"), ("crc32c", 6, "fixed32"),
                         ("slices", 7, "TensorSliceProto", "repeated")],
    # core/framework/variable.proto
    "VariableDef": [("variable_name", 1, "string"), ("initial_value_name", 6, "string"),
                    ("initializer_name", 2, "string"), ("snapshot_name", 3, "string"),
                    ("save_slice_info_def", 4, "SaveSliceInfoDef"), ("is_resource", 5, "bool"),
                    ("trainable", 7, "bool"), ("synchronization", 8, "enum:VariableSynchronization"),
                    ("aggregation", 9, "enum:VariableAggregation")],
    "SaveSliceInfoDef": [("full_name", 1, "string"), ("full_shape", 2, "int64", "repeated"),
                         ("var_offset", 3, "int64", "repeated"), ("var_shape", 4, "int64", "repeated")],
    # python/training/checkpoint_state.proto
    "CheckpointState": [("model_checkpoint_path", 1, "string"),
                        ("all_model_checkpoint_paths", 2, "string", "repeated"),
                        ("all_model_checkpoint_timestamps", 3, "double", "repeated"),
                        ("last_preserved_timestamp", 4, "double")],
}
_MESSAGES["MetaGraphDefText"] = [("graph_def", 2, "GraphDefText") if field[0] == "graph_def" else field
                                 for field in _MESSAGES["MetaGraphDef"]]
_MESSAGES["SavedModelText"] = [("saved_model_schema_version", 1, "int64"),
                               ("meta_graphs", 2, "MetaGraphDefText", "repeated")]
_ENUMS = {"SaverDef.CheckpointFormatVersion": ["LEGACY", "V1", "V2"],
          "BundleHeaderProto.Endianness": ["LITTLE", "BIG"],
          "VariableSynchronization": ["VARIABLE_SYNCHRONIZATION_AUTO", "VARIABLE_SYNCHRONIZATION_NONE",
                                      "VARIABLE_SYNCHRONIZATION_ON_WRITE", "VARIABLE_SYNCHRONIZATION_ON_READ"],
          "VariableAggregation": ["VARIABLE_AGGREGATION_NONE", "VARIABLE_AGGREGATION_SUM",
                                  "VARIABLE_AGGREGATION_MEAN", "VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA"]}

_CLASSES = declare_file(
    "tftk/proto/tensorflow.proto", "tensorflow", _MESSAGES, _ENUMS,
    dependencies=(GraphDef.DESCRIPTOR.file.name, NodeDef.DESCRIPTOR.file.name, AttrValue.DESCRIPTOR.file.name,
                  TensorProto.DESCRIPTOR.file.name, TensorShapeProto.DESCRIPTOR.file.name,
                  DataType.DESCRIPTOR.file.name, VersionDef.DESCRIPTOR.file.name,
                  any_pb2.DESCRIPTOR.name))

OpDef = _CLASSES["OpDef"]
FunctionDef = _CLASSES["FunctionDef"]
FunctionDefLibrary = _CLASSES["FunctionDefLibrary"]
GradientDef = _CLASSES["GradientDef"]
GraphLibrary = _CLASSES["GraphLibrary"]
OpList = _CLASSES["OpList"]
SaverDef = _CLASSES["SaverDef"]
MetaGraphDef = _CLASSES["MetaGraphDef"]
CollectionDef = _CLASSES["CollectionDef"]
TensorInfo = _CLASSES["TensorInfo"]
SignatureDef = _CLASSES["SignatureDef"]
AssetFileDef = _CLASSES["AssetFileDef"]
SavedModel = _CLASSES["SavedModel"]
TensorSliceProto = _CLASSES["TensorSliceProto"]
BundleHeaderProto = _CLASSES["BundleHeaderProto"]
BundleEntryProto = _CLASSES["BundleEntryProto"]
VariableDef = _CLASSES["VariableDef"]
SaveSliceInfoDef = _CLASSES["SaveSliceInfoDef"]
CheckpointState = _CLASSES["CheckpointState"]

_TEXT_TWINS = {GraphDef: _CLASSES["GraphDefText"], MetaGraphDef: _CLASSES["MetaGraphDefText"],
               SavedModel: _CLASSES["SavedModelText"]}


def message_to_text(message) -> str:
    """`message` in protobuf's text format, a GraphDef's function library included."""
    from google.protobuf import text_format
    twin = _TEXT_TWINS.get(type(message))
    if twin is not None:
        message = twin.FromString(message.SerializeToString())
    return text_format.MessageToString(message)


def parse_text(text: str, cls):
    """A `cls` message from protobuf's text format (a GraphDef's `library` kept); ParseError if not."""
    from google.protobuf import text_format
    twin = _TEXT_TWINS.get(cls)
    if twin is None:
        return text_format.Parse(text, cls())
    return cls.FromString(text_format.Parse(text, twin()).SerializeToString())
