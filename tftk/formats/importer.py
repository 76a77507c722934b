"""`tf.import_graph_def`: rebuild a TensorFlow GraphDef's nodes as tftk ops (see `op_table`)."""

from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Operation, Tensor, get_default_graph, guard_scope
from tftk.formats.function_import import functional_builder
from tftk.formats.lookup_table_import import LOOKUP_BUILDERS
from tftk.formats.functions import graph_library
from tftk.formats.op_table import BUILDERS, UnsupportedNodeError
from tftk.formats.resource_variable_import import RESOURCE_BUILDERS
from tftk.formats.signature_import import as_bytes_where_needed, attrs_from_inputs, signature_builder
from tftk.formats.stack_import import STACK_BUILDERS
from tftk.formats.tensor_array_import import TENSOR_ARRAY_BUILDERS
from tftk.formats.v1_control_flow import V1_BUILDERS, Frames, LoopExit, node_guard
from tftk.proto.tensorflow import AttrValue, GraphDef
from tftk.summary.tensor_proto import make_ndarray, shape_dims

__all__ = ["import_graph_def", "decode_attr", "UnsupportedNodeError"]


def decode_attr(value: AttrValue) -> Any:
    """An AttrValue as a Python value: str, int, float, bool, DType, dims list, ndarray or a list."""
    kind = value.WhichOneof("value")
    if kind == "list":
        items = value.list
        for field in ("s", "i", "f", "b", "type", "shape", "tensor"):
            if len(getattr(items, field)):
                return [decode_attr(AttrValue(**{field: v})) for v in getattr(items, field)]
        return []
    if kind == "s":
        return value.s.decode("utf-8", errors="replace")
    if kind == "type":  # a handle's type (resource, variant) has no tftk dtype: it stays a name
        name = _numpy_name(value.type)
        return name if name in ("resource", "variant") else dtypes.as_dtype(name)
    if kind == "shape":
        return shape_dims(value.shape)
    if kind == "tensor":
        return make_ndarray(value.tensor)
    return getattr(value, kind) if kind else None


def _numpy_name(enum: int) -> str | int:
    from tftk.proto.tensorflow import DataType
    if enum not in DataType.values():  # a number tensorboardX's enum lacks (uint32, variant): as_dtype reads it
        return enum
    name = DataType.Name(enum)[3:].lower()
    return {"float": "float32", "double": "float64", "half": "float16"}.get(name, name)


def _split(name: str) -> tuple[str, int]:
    """'node:1' -> ('node', 1); 'node' -> ('node', 0)."""
    node, _, index = name.partition(":")
    return node, int(index) if index else 0


def _topological(walk: Iterable, skip: frozenset) -> list:
    """Nodes ordered so every input comes first; ValueError naming a missing input or a cycle."""
    nodes = {n.name: n for n in walk if n.name not in skip}
    order, state = [], {}
    for root in nodes:
        stack = [(root, False)]
        while stack:
            name, done = stack.pop()
            if done:
                state[name] = 2
                order.append(nodes[name])
                continue
            if state.get(name) == 2:
                continue
            if state.get(name) == 1:
                raise ValueError(f"import_graph_def: the graph has a cycle through node {name!r}")
            state[name] = 1
            stack.append((name, True))
            for raw in nodes[name].input:
                source = _split(raw.lstrip("^"))[0]
                if source not in nodes:
                    if source in skip:
                        continue
                    raise ValueError(f"import_graph_def: node {name!r} has input {raw!r}, which is not in the graph")
                if state.get(source) != 2:
                    stack.append((source, False))
    return order


def import_graph_def(graph_def: GraphDef, input_map: Mapping[str, Tensor] | None = None,
                     return_elements: Sequence[str] | None = None, name: str | None = None,
                     op_dict: Any = None, producer_op_list: Any = None,
                     skip: Iterable[str] = ()) -> list | None:
    """Import `graph_def` into the default graph under scope `name` (default "import").

    Args:
      graph_def: a GraphDef proto (TensorFlow's or tftk's).
      input_map: {"node:0" or "node": Tensor} replacing those outputs (e.g. placeholders).
      return_elements: names to return: "node:0" gives a Tensor, "node" an Operation.
      name: the name scope of the imported nodes; "" imports them under their own names.
      skip: node names not to import (import_meta_graph leaves out TF's saver ops).

    Raises:
      UnsupportedNodeError: a node's op type has no tftk equivalent; the message names it.
    """
    if not hasattr(graph_def, "node"):
        raise TypeError(f"import_graph_def needs a GraphDef proto, got {type(graph_def).__name__}")
    graph = get_default_graph()
    mapped = {(k if ":" in k else k + ":0"): v for k, v in (input_map or {}).items()}
    produced: dict[str, tuple[Operation | None, list[Tensor]]] = {}
    scope = "import" if name is None else name

    def resolve(raw: str, consumer: str = "a loop") -> Tensor:
        source, index = _split(raw)
        key = f"{source}:{index}"
        return mapped[key] if key in mapped else _output(produced, source, index, consumer)

    def control(source: str) -> Operation | None:
        return produced[source][0]

    library = functools.cache(lambda: graph_library(graph_def))  # read when a functional node needs it

    def build_node(node: Any, inputs: list[Tensor], controls: list[Operation]) -> tuple[Operation | None, list[Tensor]]:
        return _build_node(node, inputs, controls, library)

    walk = list(graph_def.node)
    if Frames.present(walk):  # TF1 loops: each frame is rebuilt as one While (v1_control_flow)
        walk = Frames({n.name: n for n in walk if n.name not in skip}).walk_nodes()
    with graph.as_default(), graph.name_scope(scope or None):
        for node in _topological(walk, frozenset(skip)):
            if isinstance(node, LoopExit):
                outputs = node.build(resolve, control, build_node)
                produced[node.name] = (outputs[0].op, outputs)
                continue
            inputs = [resolve(raw, node.name) for raw in node.input if not raw.startswith("^")]
            controls = [op for op in (control(raw[1:]) for raw in node.input if raw.startswith("^")) if op is not None]
            produced[node.name] = build_node(node, inputs, controls)
    if return_elements is None:
        return None
    out = []
    for element in return_elements:
        source, index = _split(element)
        if source not in produced:
            raise ValueError(f"Requested return_element {element!r} not found in graph_def.")
        out.append(_output(produced, source, index, "return_elements") if ":" in element else produced[source][0])
    return out


def _build_node(node: Any, inputs: list[Tensor], controls: list[Operation],
                library: Any) -> tuple[Operation | None, list[Tensor]]:
    """Rebuild one NodeDef in the default graph from its inputs, under its v1 cond guard if any;
    `library()` gives the GraphDef's functions (TF 2's functional control flow reads them)."""
    builder = functional_builder(node, library) or _tftk_builder(node) or BUILDERS.get(node.op) \
        or V1_BUILDERS.get(node.op) or RESOURCE_BUILDERS.get(node.op) \
        or TENSOR_ARRAY_BUILDERS.get(node.op) or STACK_BUILDERS.get(node.op) or LOOKUP_BUILDERS.get(node.op) \
        or signature_builder(node)
    if builder is None:
        raise UnsupportedNodeError(f"import_graph_def: op type {node.op!r} of node {node.name!r} is "
                                   f"not supported by tftk")
    attrs = {k: decode_attr(v) for k, v in node.attr.items() if not k.startswith("_")}
    attrs.update({k.decode(): None for k in node.attr["_tftk_none_attrs"].list.s}
                 if "_tftk_none_attrs" in node.attr else {})
    graph = get_default_graph()
    try:
        guard = node_guard(node.op, graph, inputs, controls)
        with graph.control_dependencies(controls), guard_scope(graph, guard):
            result = builder(inputs, attrs, node.name)
    except UnsupportedNodeError as exc:
        if node.name in str(exc):
            raise
        raise UnsupportedNodeError(f"import_graph_def: cannot rebuild node {node.name!r} ({node.op}): {exc}") from exc
    except Exception as exc:
        raise ValueError(f"import_graph_def: cannot rebuild node {node.name!r} ({node.op}): {exc}") from exc
    return _outputs(result)


def _tftk_builder(node):
    """A builder for an op only tftk has (exported with `_tftk_output_types`): the same op type,
    attrs (lists as tuples, as tftk's constructors store them) and inputs."""
    from tftk.framework import registry
    if "_tftk_output_types" not in node.attr or node.op not in registry.registered_types():
        return None
    types = [dtypes.as_dtype(_numpy_name(t)) for t in node.attr["_tftk_output_types"].list.type]
    shapes = [shape_dims(s) for s in node.attr["_output_shapes"].list.shape] if "_output_shapes" in node.attr \
        else [None] * len(types)

    own = None
    if "_tftk_attrs" in node.attr:  # a TF op type: tftk's attrs are kept apart from TF's
        own = {k: decode_attr(v) for k, v in node.attr["_tftk_attrs"].func.attr.items()}

    order = list(node.attr["_tftk_inputs"].list.i) if "_tftk_inputs" in node.attr else None

    def build(inputs, attrs, name):
        from tftk.framework.tensor_shape import TensorShape
        if own is not None:
            attrs = dict(own, **{k: v for k, v in attrs.items() if v is None and k not in own})
            if order is not None:  # attrs only the Consts hold (a Pad's paddings have no AttrValue form)
                attrs = dict(attrs_from_inputs(node.op, inputs, order, name), **attrs)
        if order is not None:  # TF's input order (and Consts for tftk's attrs) back to tftk's
            inputs = [inputs[i] for i in order]
        fixed = as_bytes_where_needed(node.op, {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()})
        return get_default_graph().create_op(node.op, inputs, [(t, TensorShape(s)) for t, s in zip(types, shapes)],
                                             name, fixed)
    return build


def _output(produced: dict, source: str, index: int, consumer: str) -> Tensor:
    outputs = produced[source][1]
    if index >= len(outputs):
        raise ValueError(f"import_graph_def: {consumer!r} uses output {index} of {source!r}, which has "
                         f"{len(outputs)}")
    return outputs[index]


def _outputs(result: Any) -> tuple[Operation | None, list[Tensor]]:
    if isinstance(result, Operation):
        return result, list(result.outputs)
    if isinstance(result, Tensor):
        return result.op, list(result.op.outputs) if result.value_index == 0 else [result]
    if hasattr(result, "_ref"):  # a Variable-like value
        tensor = result._ref()
        return tensor.op, [tensor]
    tensors = list(result)  # a list may name the op control edges from the node wait on (a Switch)
    return getattr(result, "op", tensors[0].op if tensors else None), tensors
