"""MetaGraphDef: a graph with what is needed to restart it (TF1's framework/meta_graph.py).

A MetaGraphDef holds the GraphDef, the SaverDef and the graph's collections, so
`tf.train.import_meta_graph` can rebuild a training program from a `.meta` file alone:
variables as VariableDefs, tensors and ops (train_op, summaries, ...) as node names, numbers
as int64/float lists, strings as bytes.
"""

from __future__ import annotations

import os
from typing import Any

from tftk.atomic import atomic_write_bytes
from tftk.proto.tensorflow import CollectionDef, GraphDef, MetaGraphDef, VariableDef, message_to_text, parse_text

__all__ = ["create_meta_graph_def", "export_meta_graph", "import_meta_graph", "read_meta_graph_file",
           "import_collections", "variable_def", "TENSORFLOW_VERSION"]

# The TF version a tftk graph imitates: written to meta_info_def.tensorflow_version so TF's
# loaders treat our files as TF 1.15 files.
TENSORFLOW_VERSION = "1.15.0"
_VARIABLE_COLLECTIONS = ("variables", "trainable_variables", "local_variables", "model_variables",
                         "moving_average_variables")


def create_meta_graph_def(graph_def: GraphDef | None = None, saver_def=None, meta_info_def=None,
                          graph=None, collection_list=None) -> MetaGraphDef:
    """A MetaGraphDef of `graph_def` (and `saver_def`, and `graph`'s collections when given)."""
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.tensorflow_version = meta.meta_info_def.tensorflow_version or TENSORFLOW_VERSION
    if graph_def is not None:
        meta.graph_def.CopyFrom(graph_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    if graph is not None:
        names = graph.get_all_collection_keys() if collection_list is None else collection_list
        for key in names:
            collection = _collection_def(key, graph.get_collection(key))
            if collection is not None:
                meta.collection_def[key].CopyFrom(collection)
    return meta


def variable_def(variable) -> VariableDef:
    """A tftk Variable as TF's VariableDef (tensor names of the variable, initializer, snapshot,
    and for a part of a partitioned variable where it sits in the whole)."""
    proto = VariableDef(variable_name=variable.name, initializer_name=variable.initializer.name,
                        snapshot_name=variable.value().name, initial_value_name=variable.initial_value.name,
                        trainable=bool(variable.trainable))
    info = getattr(variable, "_save_slice_info", None)
    if info is not None:
        proto.save_slice_info_def.full_name = info.full_name
        proto.save_slice_info_def.full_shape.extend(info.full_shape)
        proto.save_slice_info_def.var_offset.extend(info.var_offset)
        proto.save_slice_info_def.var_shape.extend(info.var_shape)
    return proto


def _collection_def(key: str, items: list) -> CollectionDef | None:
    """A collection as TF stores it; None for collections of objects TF would not store either."""
    from tftk.framework.ops import Operation, Tensor
    if not items:
        return None
    collection = CollectionDef()
    if all(hasattr(i, "_ref") and hasattr(i, "initializer") for i in items):
        collection.bytes_list.value.extend(variable_def(i).SerializeToString() for i in items)
    elif all(isinstance(i, (Tensor, Operation)) for i in items):
        collection.node_list.value.extend(i.name for i in items)
    elif all(isinstance(i, bool) is False and isinstance(i, int) for i in items):
        collection.int64_list.value.extend(items)
    elif all(isinstance(i, float) for i in items):
        collection.float_list.value.extend(items)
    elif all(isinstance(i, (str, bytes)) for i in items):
        collection.bytes_list.value.extend(i.encode() if isinstance(i, str) else i for i in items)
    else:
        return None  # e.g. savers, queue runners, cond contexts: tftk objects without a proto form
    return collection


def export_meta_graph(filename: str | os.PathLike | None = None, meta_info_def=None, graph_def=None,
                      saver_def=None, collection_list=None, as_text: bool = False, graph=None,
                      export_scope=None, clear_devices: bool = False, clear_extraneous_savers: bool = False,
                      strip_default_attrs: bool = False, save_debug_info: bool = False,
                      **kwargs) -> MetaGraphDef:
    """`tf.train.export_meta_graph`: the MetaGraphDef of a graph, written to `filename` if given."""
    from tftk.framework.ops import get_default_graph
    from tftk.summary.graph_def import graph_to_graph_def
    graph = graph if graph is not None else get_default_graph()
    if graph_def is None:
        graph_def = graph_to_graph_def(graph, add_shapes=True)
    if clear_devices:
        for node in graph_def.node:
            node.device = ""
    meta = create_meta_graph_def(graph_def, saver_def, meta_info_def, graph, collection_list)
    if filename is not None:
        data = message_to_text(meta).encode() if as_text else meta.SerializeToString()
        atomic_write_bytes(filename, data)
    return meta


def read_meta_graph_file(filename: str | os.PathLike) -> MetaGraphDef:
    """A `.meta` file (binary, or text format as TF also accepts) as a MetaGraphDef."""
    from google.protobuf import message, text_format
    path = os.fspath(filename)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise OSError(f"File {path} does not exist.") from None
    try:
        return MetaGraphDef.FromString(data)
    except message.DecodeError:
        try:
            return parse_text(data.decode("utf-8"), MetaGraphDef)
        except (UnicodeDecodeError, text_format.ParseError):
            raise ValueError(f"{path} is not a MetaGraphDef (binary or text): truncated or corrupt") from None


def import_collections(meta: MetaGraphDef, graph, scope: str = "") -> None:
    """Rebuild the collections of `meta` in `graph` (whose nodes were imported under `scope`)."""
    prefix = f"{scope}/" if scope else ""
    for key, collection in meta.collection_def.items():
        kind = collection.WhichOneof("kind")
        if kind == "node_list":
            for name in collection.node_list.value:
                graph.add_to_collection(key, graph.as_graph_element(prefix + name))
        elif kind == "bytes_list" and key in _VARIABLE_COLLECTIONS:
            for raw in collection.bytes_list.value:
                variable = _variable(graph, VariableDef.FromString(raw), prefix)
                variable._trainable = variable._trainable or key == "trainable_variables"  # TF <1.14 files
                graph.add_to_collection(key, variable)
        elif kind == "bytes_list":
            for raw in collection.bytes_list.value:
                graph.add_to_collection(key, raw)
        elif kind in ("int64_list", "float_list"):
            for value in getattr(collection, kind).value:
                graph.add_to_collection(key, value)


def _variable(graph, proto: VariableDef, prefix: str) -> Any:
    """The Variable object of an imported VariableDef (one per variable, shared across collections)."""
    from tftk.ops.variables import Variable
    cache = graph.__dict__.setdefault("_tftk_imported_variables", {})
    name = prefix + proto.variable_name
    if name not in cache:
        variable = object.__new__(Variable)
        variable._variable = graph.as_graph_element(name)
        variable._initializer_op = graph.as_graph_element(prefix + proto.initializer_name)
        variable._snapshot = graph.as_graph_element(prefix + proto.snapshot_name)
        initial = proto.initial_value_name or proto.initializer_name
        variable._initial_value = graph.as_graph_element(prefix + initial) if proto.initial_value_name \
            else variable._initializer_op.inputs[1]
        variable._trainable = proto.trainable
        variable._constraint = None
        variable._save_slice_info = None
        if proto.HasField("save_slice_info_def"):
            from tftk.ops.partitioned_variables import SaveSliceInfo
            info = proto.save_slice_info_def
            variable._save_slice_info = SaveSliceInfo(info.full_name, list(info.full_shape),
                                                      list(info.var_offset), list(info.var_shape))
        cache[name] = variable
    return cache[name]


def import_meta_graph(meta_graph_or_file, clear_devices: bool = False, import_scope: str | None = None,
                      **kwargs) -> Any:
    """`tf.train.import_meta_graph`: rebuild a `.meta` file's graph and collections in the default
    graph; returns a Saver of its variables (None when it has none).

    TF's own save/restore nodes are not imported: the returned tftk Saver does their work and
    reads and writes the same V2 checkpoints. A TF 2 `tf.saved_model.save` graph's saver is a pair of
    function calls (`function_saver`); the Saver then keeps their object-based checkpoint keys.
    """
    from tftk.formats.function_saver import function_saver
    from tftk.formats.importer import import_graph_def
    from tftk.framework.ops import get_default_graph
    from tftk.train.saver import Saver
    meta = meta_graph_or_file if isinstance(meta_graph_or_file, MetaGraphDef) else read_meta_graph_file(meta_graph_or_file)
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = GraphDef.FromString(graph_def.SerializeToString())
        for node in graph_def.node:
            node.device = ""
    # Every Saver's subgraph (TF's sharded save/restore string plumbing included) stays out: the
    # scopes holding a SaveV2/RestoreV2 node. The tftk Saver returned below does their work.
    scopes = tuple({n.name.rpartition("/")[0] + "/" for n in graph_def.node
                    if n.op in ("SaveV2", "RestoreV2", "MergeV2Checkpoints") and "/" in n.name})
    skip = {n.name for n in graph_def.node if n.name.startswith(scopes)} if scopes else set()
    functional = function_saver(graph_def, meta.saver_def) if meta.HasField("saver_def") else None
    if functional is not None:
        skip |= functional.replaced
    graph = get_default_graph()
    import_graph_def(graph_def, name=import_scope or "", skip=skip)
    import_collections(meta, graph, import_scope or "")
    if functional is not None:
        prefix = f"{import_scope}/" if import_scope else ""
        return Saver(var_list={key: graph.as_graph_element(f"{prefix}{node}:0") for key, node in functional.keys.items()},
                     max_to_keep=meta.saver_def.max_to_keep or 5)
    variables = graph.get_collection("variables")
    if not variables:
        return None
    keep = meta.saver_def.max_to_keep if meta.HasField("saver_def") else 5
    return Saver(var_list={v.op.name[len(import_scope) + 1:] if import_scope else v.op.name: v
                           for v in variables}, max_to_keep=keep)
