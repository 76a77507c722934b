"""TensorFlow's protobuf messages, declared once with TF's own field numbers.

Bytes written with these classes parse with TensorFlow's generated classes and the other way
round. Modules, one per area (import the one you need; nothing here is imported eagerly):

- `tftk.proto.tensorflow`: graphs and files — GraphDef, NodeDef, AttrValue, TensorProto, ...
  (tensorboardX's classes re-exported) plus MetaGraphDef, SaverDef, SignatureDef, TensorInfo,
  SavedModel, BundleHeaderProto, BundleEntryProto, TensorSliceProto, VariableDef, CheckpointState,
  OpDef / OpList.
- `tftk.proto.example`: tf.train.Example, SequenceExample, Features, FeatureLists.
- `tftk.proto.declare`: the table-to-descriptor builder those declarations use.
"""
