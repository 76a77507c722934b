"""Print, as JSON, the fields of TensorFlow's messages named on the command line (run in TF's venv).

Each message maps to {field name: [number, type, repeated]} with nested messages by dotted name,
so a test can compare them with tftk.proto's declarations.
"""

import json
import sys

from tensorflow.core.framework import function_pb2, graph_pb2, op_def_pb2, tensor_slice_pb2, variable_pb2
from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2, saver_pb2, tensor_bundle_pb2
from tensorflow.python.training import checkpoint_state_pb2

MODULES = [function_pb2, graph_pb2, op_def_pb2, tensor_slice_pb2, variable_pb2, meta_graph_pb2, saved_model_pb2, saver_pb2,
           tensor_bundle_pb2, checkpoint_state_pb2]


def find(name):
    outer, _, inner = name.partition(".")
    for module in MODULES:
        if outer in module.DESCRIPTOR.message_types_by_name:
            message = module.DESCRIPTOR.message_types_by_name[outer]
            for part in filter(None, inner.split(".")):
                message = message.nested_types_by_name[part]
            return message
    raise KeyError(name)


print(json.dumps({name: {f.name: [f.number, f.type, f.is_repeated] for f in find(name).fields}
                  for name in sys.argv[1:]}))
