"""tftk.proto's TensorFlow messages: field numbers and types equal TF's own, bytes round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tftk.proto import tensorflow as tfp
from tests.tf_oracle import run_script_in_tf

DECLARED = [name for name in tfp._MESSAGES]
# tftk's names for messages TF spells otherwise: the text twins (GraphDef with its library, and the
# messages holding one), GraphDef's library field alone, and function.proto's uint32-keyed map entries
TF_NAME = {"GraphDefText": "GraphDef", "MetaGraphDefText": "MetaGraphDef", "SavedModelText": "SavedModel",
           "GraphLibrary": "GraphDef", "FunctionDef.ArgAttrPair": "FunctionDef.ArgAttrEntry",
           "FunctionDef.ResourceIdPair": "FunctionDef.ResourceArgUniqueIdEntry"}
ONE_FIELD_VIEWS = {"GraphLibrary"}  # declares only `library`, to read it from tensorboardX's GraphDef


def _fields(name: str) -> dict[str, list]:
    descriptor = tfp._CLASSES[name.split(".")[0]].DESCRIPTOR
    for part in name.split(".")[1:]:
        descriptor = descriptor.nested_types_by_name[part]
    return {f.name: [f.number, f.type, f.is_repeated] for f in descriptor.fields}


@pytest.mark.slow  # runs real TensorFlow in a subprocess
def test_fields_match_tensorflow():
    script = str(Path(__file__).with_name("tf_proto_fields.py"))
    theirs = json.loads(run_script_in_tf(script, *sorted({TF_NAME.get(n, n) for n in DECLARED})))
    for name in DECLARED:
        ours, tf_fields = _fields(name), theirs[TF_NAME.get(name, name)]
        # Fields we leave undeclared (kept as unknown fields) may be missing, never different.
        assert {k: tf_fields[k] for k in ours} == ours, name
        missing = set(tf_fields) - set(ours)
        assert name in ONE_FIELD_VIEWS or missing <= {"handle_data", "experimental_full_type", "object_graph_def",
                                                      "composite_tensor", "debug_info"}, (name, missing)


def test_meta_graph_round_trip_keeps_unknown_fields():
    meta = tfp.MetaGraphDef()
    meta.meta_info_def.tags.append("serve")
    meta.collection_def["variables"].bytes_list.value.append(b"\n\x03w:0")
    meta.signature_def["serving_default"].inputs["x"].name = "x:0"
    meta.saver_def.version = tfp.SaverDef.V2
    data = meta.SerializeToString() + b"\x3a\x02\x08\x01"  # field 7 (object_graph_def), undeclared
    again = tfp.MetaGraphDef.FromString(data)
    assert again.SerializeToString() == data
    assert again.signature_def["serving_default"].inputs["x"].name == "x:0"


def test_bundle_entry_fixed32_crc():
    entry = tfp.BundleEntryProto(dtype=1, shard_id=0, offset=8, size=16, crc32c=0xDEADBEEF)
    entry.slices.add().extent.add(start=0, length=2)
    assert tfp.BundleEntryProto.FromString(entry.SerializeToString()) == entry
    assert b"\x35\xef\xbe\xad\xde" in entry.SerializeToString()  # tag 6, wire type 5, little-endian
