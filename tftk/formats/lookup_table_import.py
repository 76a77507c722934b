"""Lookup tables in TF's graph files: `HashTableV2` and the ops that fill and read it.

TF1 graphs (tf.contrib.lookup, feature-column vocabularies) and TF 2 SavedModels (tf.lookup, whose
init op calls a function holding `LookupTableImportV2`) write the same few ops. Each becomes the
tftk op of `ops/lookup_ops` (a per-session table behind the handle op): `InitializeTableV2` and
`LookupTableImportV2` fill it once from tensors, `InitializeTableFromTextFileV2` from a vocabulary
file, `LookupTableFindV2` reads it with a default, `LookupTableSizeV2` counts it. Mutable tables are
not rebuilt (UnsupportedNodeError).
"""

from __future__ import annotations

from tftk.formats.op_table import Builder, UnsupportedNodeError
from tftk.framework import dtypes
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.lookup_ops import initialize_table_from_text_file
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["LOOKUP_BUILDERS"]


def _hash_table(x, a, name):
    return make_op("HashTableV2", [], dtypes.string, TensorShape([]), name,
                   {"key_dtype": a["key_dtype"], "value_dtype": a["value_dtype"]})


def _fill(x, a, name):
    return make_multi_op("InitializeTableV2", x[:3], [], name, {"Tkey": x[1].dtype, "Tval": x[2].dtype})


def _text_file(x, a, name):
    table = x[0].op
    while table.type == "Identity":
        table = table.inputs[0].op
    if table.type != "HashTableV2":
        raise UnsupportedNodeError(f"node {name!r}: InitializeTableFromTextFileV2 of a {table.type} table")
    return initialize_table_from_text_file(x[0], x[1], a["key_index"], a["value_index"], a.get("vocab_size", -1),
                                           a.get("delimiter", "\t"), a.get("offset", 0), table.get_attr("key_dtype"),
                                           table.get_attr("value_dtype"), name=name)


def _find(x, a, name):
    return make_op("LookupTableFindV2", x[:3], dtypes.as_dtype(a["Tout"]), x[1].shape, name,
                   {"Tin": x[1].dtype, "Tout": dtypes.as_dtype(a["Tout"])})


LOOKUP_BUILDERS: dict[str, Builder] = {
    "HashTableV2": _hash_table,
    "InitializeTableV2": _fill,
    "LookupTableImportV2": _fill,  # TF 2's KeyValueTensorInitializer: the same fill of an empty table
    "InitializeTableFromTextFileV2": _text_file,
    "LookupTableFindV2": _find,
    "LookupTableSizeV2": lambda x, a, name: make_op("LookupTableSizeV2", x[:1], dtypes.int64, TensorShape([]), name, {}),
}
