"""TensorFlow's own file formats: meta graphs, GraphDef import, graph utilities and SavedModel.

The protobuf messages are in `tftk.proto.tensorflow`; checkpoints (TensorBundle) are in
`tftk.train`. Modules here import lazily where they need the Saver, so `import tftk` stays fast.
"""
