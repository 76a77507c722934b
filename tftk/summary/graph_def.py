"""A tftk graph as a TensorFlow `GraphDef` proto, for TensorBoard's Graphs tab and `write_graph`.

Node names keep their name-scope slashes, so TensorBoard collapses each scope into one group.
The converter reads only the public graph interface: `graph.get_operations()` and, per op,
`name`, `type`, `inputs`, `control_inputs`, `device`, `attrs` and `outputs`.
"""

from __future__ import annotations

import numbers
import os

import numpy as np
from tensorboardX.proto.attr_value_pb2 import AttrValue
from tensorboardX.proto.graph_pb2 import GraphDef
from tensorboardX.proto.node_def_pb2 import NodeDef

from tftk.atomic import atomic_write_bytes
from tftk.summary.tensor_proto import make_tensor_proto, shape_proto

__all__ = ["GraphDef", "graph_to_graph_def", "ops_nodes", "op_nodes", "as_graph_def", "node_def", "attr_value", "write_graph"]


def graph_to_graph_def(graph, add_shapes: bool = False) -> GraphDef:
    """The GraphDef of a tftk graph, nodes in creation order (what `Graph.as_graph_def` returns).

    Args:
      graph: an object with `get_operations()`.
      add_shapes: add each node's `_output_shapes` attr (TensorBoard labels edges with them).
    """
    from tftk.formats.functions import new_library, set_graph_library
    library = new_library()
    graph_def = GraphDef(node=ops_nodes(graph, graph.get_operations(), add_shapes, library))
    set_graph_library(graph_def, library)
    return graph_def


def ops_nodes(graph, ops: list, add_shapes: bool = False, library=None) -> list[NodeDef]:
    """The NodeDefs of `ops` of `graph` (see op_nodes), cond branches as TF1's Switch/Merge."""
    from tftk.formats.cond_export import write_conds
    return write_conds(graph, [(op, op_nodes(op, add_shapes, library)) for op in ops])


def op_nodes(op, add_shapes: bool = False, library=None) -> list[NodeDef]:
    """The NodeDefs standing for one tftk op (one, or several where TF spells it as several nodes);
    functions they call (a While's condition and body) are added to `library` (a FunctionDefLibrary)."""
    from tftk.formats.op_export import expanded_nodes, tf_form
    expanded = expanded_nodes(op, library)
    if expanded is not None:
        for node in expanded if add_shapes and op.outputs else ():
            if node.name == op.name:  # the node standing for the op itself
                _add_output_shapes(node, op)
        return expanded
    form = tf_form(op)
    if form is None:
        return _generic_node(op, add_shapes)
    attrs, extra_inputs = form
    nodes = []
    for input_name, value in extra_inputs:  # tftk's build-time attrs as TF's Const inputs
        nodes.append(NodeDef(name=f"{op.name}/{input_name}", op="Const", device=op.device or "",
                             attr={"dtype": attr_value(_dtype_of(value)),
                                   "value": AttrValue(tensor=make_tensor_proto(value))}))
    node = node_def(op, add_shapes, attrs)
    node.input[len(op.inputs):len(op.inputs)] = [f"{op.name}/{n}" for n, _ in extra_inputs]
    return nodes + [node]


def _dtype_of(value: np.ndarray):
    from tftk.framework import dtypes
    return dtypes.as_dtype(value.dtype)


def _generic_node(op, add_shapes: bool) -> list[NodeDef]:
    """An op without a hand-written TF form, as TF's OpDef has it where TF has the op type (attrs
    TF takes as inputs written as Const nodes); tftk's attrs and input order are kept in
    `_tftk_attrs` / `_tftk_inputs` for tftk's importer. Ops TF lacks keep tftk's attrs."""
    from tftk.formats.op_signatures import tf_node_form
    form = tf_node_form(op)
    if form is None:
        node = node_def(op, add_shapes)
        _mark_tftk_only(node, op)
        return [node]
    attrs, inputs, order = form
    nodes, names = [], []
    for value in inputs:
        if hasattr(value, "op"):
            names.append(_input_name(value))
            continue
        names.append(f"{op.name}/{value.arg}")
        nodes.append(NodeDef(name=names[-1], op="Const", device=op.device or "",
                             attr={"dtype": attr_value(value.dtype),
                                   "value": AttrValue(tensor=make_tensor_proto(value.value))}))
    node = node_def(op, add_shapes, attrs)
    node.input[:len(op.inputs)] = names
    own = node.attr["_tftk_attrs"].func
    own.name = op.type
    for key, value in op.attrs.items():
        written = attr_value(value)
        if written is not None:
            own.attr[key].CopyFrom(written)
    if order != list(range(len(names))):  # reordered, or Consts added for attrs
        node.attr["_tftk_inputs"].list.i.extend(order)
    _mark_tftk_only(node, op)
    return nodes + [node]


def _mark_tftk_only(node: NodeDef, op) -> None:
    """Record what tftk's importer needs to rebuild an op TF does not have: output types, None attrs."""
    node.attr["_tftk_output_types"].list.type.extend(t.dtype.as_datatype_enum for t in op.outputs)
    node.attr["_tftk_output_types"].list.SetInParent()  # present (empty) for ops without outputs
    none_attrs = sorted(k for k, v in op.attrs.items() if v is None)
    if none_attrs:
        node.attr["_tftk_none_attrs"].list.s.extend(k.encode() for k in none_attrs)


def as_graph_def(graph_or_graph_def, add_shapes: bool) -> GraphDef:
    """A GraphDef proto as given, or a tftk graph converted by `graph_to_graph_def`."""
    if isinstance(graph_or_graph_def, GraphDef):
        return graph_or_graph_def
    if not hasattr(graph_or_graph_def, "get_operations"):
        raise TypeError(f"expected a Graph or a GraphDef, got {type(graph_or_graph_def).__name__}")
    return graph_to_graph_def(graph_or_graph_def, add_shapes)


def node_def(op, add_shapes: bool = False, attrs: dict | None = None) -> NodeDef:
    """One op as a NodeDef: data inputs `producer[:k]` (k > 0), then control inputs `^producer`.

    `attrs` replaces the op's own attrs (graph_to_graph_def passes TF's form of them).
    """
    node = NodeDef(name=op.name, op=op.type, device=op.device or "")
    node.input.extend(_input_name(tensor) for tensor in op.inputs)
    node.input.extend("^" + control.name for control in op.control_inputs)
    for key, value in sorted((op.attrs if attrs is None else attrs).items()):
        attr = attr_value(value)
        if attr is not None:
            node.attr[key].CopyFrom(attr)
    if add_shapes and op.outputs:
        _add_output_shapes(node, op)
    return node


def _add_output_shapes(node: NodeDef, op) -> None:
    node.attr["_output_shapes"].list.shape.extend(_static_shape(t) for t in op.outputs)


def _input_name(tensor) -> str:
    return tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"


def _static_shape(tensor):
    try:
        return shape_proto(tensor.shape.as_list())
    except ValueError:  # unknown rank
        return shape_proto(None)


def attr_value(value) -> AttrValue | None:
    """An AttrValue for a plain Python/numpy attr value, or None when it has no AttrValue form.

    bool → b, int → i, float → f, str/bytes → s, DType → type, shape → shape, numpy array → tensor,
    and homogeneous lists of the scalar kinds → list.
    """
    if isinstance(value, (list, tuple)):
        return _list_attr(value)
    if isinstance(value, np.ndarray):
        try:
            return AttrValue(tensor=make_tensor_proto(value))
        except ValueError:
            return None
    field = _scalar_field(value)
    if field is None:
        return None
    return AttrValue(**{field: _scalar_payload(field, value)})


def _list_attr(values) -> AttrValue | None:
    fields = {_scalar_field(v) for v in values}
    if len(fields) > 1 and fields <= {"i", "f"}:
        fields = {"f"}  # ints mixed with floats: a list(float), as TensorFlow would infer
    if None in fields or len(fields) > 1:
        return None
    attr = AttrValue(list=AttrValue.ListValue())
    if fields:
        field = fields.pop()
        getattr(attr.list, field).extend(_scalar_payload(field, v) for v in values)
    return attr


def _scalar_field(value) -> str | None:
    """The AttrValue field a scalar attr value goes in (None if it cannot be represented)."""
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, numbers.Integral):
        return "i"
    if isinstance(value, numbers.Real):
        return "f"
    if isinstance(value, (str, bytes)):
        return "s"
    if hasattr(value, "as_datatype_enum"):
        return "type"
    if hasattr(value, "as_list"):
        return "shape"
    return None


def _scalar_payload(field: str, value):
    if field == "s":
        return value.encode("utf-8") if isinstance(value, str) else value
    if field == "type":
        return value.as_datatype_enum
    if field == "shape":
        try:
            return shape_proto(value.as_list())
        except ValueError:
            return shape_proto(None)
    return {"b": bool, "i": int, "f": float}[field](value)


def write_graph(graph_or_graph_def, logdir: str | os.PathLike, name: str, as_text: bool = True) -> str:
    """`tf.train.write_graph`: write the GraphDef to logdir/name atomically, pbtxt or binary.

    Returns the path written. Like TF1, a Graph is written without `_output_shapes`.
    """
    graph_def = as_graph_def(graph_or_graph_def, add_shapes=False)
    path = os.path.join(os.fspath(logdir), name)
    from tftk.proto.tensorflow import message_to_text
    data = message_to_text(graph_def).encode("utf-8") if as_text else graph_def.SerializeToString()
    atomic_write_bytes(path, data)
    return path
