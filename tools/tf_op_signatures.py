"""Dump the signatures of TensorFlow's op types that tftk registers, for tftk's GraphDef export.

Run with the TensorFlow venv's interpreter, the op types to keep on stdin (one a line)::

    .venv/bin/python tools/tftk_op_types.py \
        | /work/tfvenv/bin/python tools/tf_op_signatures.py > tftk/formats/tf_op_signatures.json

For each op: its inputs and outputs as [name, type attr or "" , fixed DataType enum, number attr,
type-list attr], and its attrs as {name: [attr type, default as an AttrValue in JSON or None]}.
Facts of TF's OpDefs only: tftk fills the attrs TF's OpDef requires from these when it writes a node.
"""

import json
import sys

from google.protobuf import json_format
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.client import pywrap_tf_session as c_api

wanted = {line.strip() for line in sys.stdin if line.strip()}
op_list = op_def_pb2.OpList()
op_list.ParseFromString(c_api.TF_GetBuffer(c_api.TF_GetAllOpList()))


def arg(a):
    return [a.name, a.type_attr, a.type, a.number_attr, a.type_list_attr]


table = {}
for op in op_list.op:
    if op.name not in wanted:
        continue
    table[op.name] = {
        "inputs": [arg(a) for a in op.input_arg],
        "outputs": [arg(a) for a in op.output_arg],
        "attrs": {a.name: [a.type, json_format.MessageToDict(a.default_value) if a.HasField("default_value") else None]
                  for a in op.attr},
    }
json.dump(table, sys.stdout, sort_keys=True, separators=(",", ":"))
sys.stdout.write("\n")
