"""TensorFlow FunctionDefs both ways: the bodies of functional control flow (While, If).

A GraphDef's `library` (field 2, which tensorboardX's GraphDef does not declare) holds
FunctionDefs: a signature (an OpDef: named, typed input and output args), node_defs whose inputs
name a function arg (`x`) or a node output as `node:output_arg:index` (the output arg of the
node's OpDef, then the index inside that arg), and a `ret` map from output arg to such a name.

- Export: `FunctionBuilder` takes NodeDefs in graph form (`node:k`, as `graph_to_graph_def` writes
  them) plus the function's args and returns, and writes the FunctionDef.
- Import: `functional_builder` gives import_graph_def a builder for `While`/`StatelessWhile`
  (tftk's While over FuncGraphs made from the cond/body functions), `If`/`StatelessIf` (tftk's
  cond, each branch function inlined into its branch), `PartitionedCall`/`StatefulPartitionedCall`
  (inlined) and TF's TensorList ops.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from tftk.proto.tensorflow import AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, GraphLibrary, NodeDef

__all__ = ["new_library", "graph_library", "set_graph_library", "FunctionBuilder", "functional_builder",
           "FUNCTIONAL_OP_TYPES"]

FUNCTIONAL_OP_TYPES = frozenset({"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall",
                                 "StatefulPartitionedCall"})


# ---- the library field -------------------------------------------------------------------------

def new_library() -> FunctionDefLibrary:
    return FunctionDefLibrary()


def graph_library(graph_def: GraphDef) -> FunctionDefLibrary:
    """The FunctionDefLibrary of a GraphDef (kept by protobuf as an unknown field of tensorboardX's)."""
    return GraphLibrary.FromString(graph_def.SerializeToString()).library


def set_graph_library(graph_def: GraphDef, library: FunctionDefLibrary) -> None:
    """Put `library` in `graph_def`'s field 2, where TensorFlow reads it (nothing when it is empty)."""
    if library.function or library.gradient:
        graph_def.MergeFromString(GraphLibrary(library=library).SerializeToString())


def unique_function_name(library: FunctionDefLibrary, stem: str) -> str:
    """`stem` made a valid function name (letters, digits, `_`), unique in `library`."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", stem).strip("_") or "fn"
    taken = {f.signature.name for f in library.function}
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


# ---- output args of an op type (TF's OpDef) ------------------------------------------------------

def _output_args(node: NodeDef) -> list[tuple[str, int]]:
    """(output arg name, how many tensors it holds) for a node's op type, from TF's OpDef."""
    from tftk.formats.op_signatures import _signatures
    signature = _signatures().get(node.op)
    if signature is None:  # While/If-like ops not in the table: one list output
        return [("output", 1 << 30)]
    args = []
    for name, _type_attr, _fixed, number_attr, list_attr in signature["outputs"]:
        if number_attr:
            count = node.attr[number_attr].i
        elif list_attr:
            count = len(node.attr[list_attr].list.type)
        else:
            count = 1
        args.append((name, count))
    return args


def function_output_name(node: NodeDef, index: int) -> str:
    """`node:arg:j`: output `index` of a node as a function body names it."""
    for name, count in _output_args(node):
        if index < count:
            return f"{node.name}:{name}:{index}"
        index -= count
    raise ValueError(f"node {node.name!r} ({node.op}) has no output {index}")


def flat_output_index(node: NodeDef, arg: str, index: int) -> int:
    """The flat output index of `node:arg:index` (a function's naming) in a graph."""
    offset = 0
    for name, count in _output_args(node):
        if name == arg:
            return offset + index
        offset += count
    raise ValueError(f"node {node.name!r} ({node.op}) has no output arg {arg!r}")


# ---- export ------------------------------------------------------------------------------------

def _split(ref: str) -> tuple[str, int]:
    node, _, index = ref.partition(":")
    return node, int(index) if index else 0


def func_attr(name: str) -> AttrValue:
    value = AttrValue()
    value.func.name = name
    return value


class FunctionBuilder:
    """A FunctionDef from NodeDefs in graph form: inputs `node:k`, args referenced by their name.

    `substitute` replaces a graph tensor (a sub-graph's placeholder) by another reference (an arg,
    or a node reading the value from a list) when the nodes are converted.
    """

    def __init__(self, name: str) -> None:
        self.fdef = FunctionDef()
        self.fdef.signature.name = name
        self.nodes: list[NodeDef] = []
        self._args: set[str] = set()
        self._substitutes: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self.fdef.signature.name

    def add_arg(self, name: str, dtype, shape) -> str:
        """A typed input arg (`shape` a TensorShape) named `name` (made unique, lower case)."""
        from tftk.summary.graph_def import attr_value
        arg_name = self._unique(re.sub(r"[^a-z0-9_]", "_", name.lower()) or "arg")
        self.fdef.signature.input_arg.add(name=arg_name, type=dtype.as_datatype_enum)
        pair = self.fdef.arg_attr.add(key=len(self.fdef.signature.input_arg) - 1)
        pair.value.attr["_output_shapes"].list.shape.add().CopyFrom(attr_value(shape).shape)
        self._args.add(arg_name)
        return arg_name

    def _unique(self, name: str) -> str:
        if not name[0].isalpha():
            name = "a" + name
        taken = self._args | {n.name for n in self.nodes}
        base, k = name, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        return name

    def substitute(self, tensor_name: str, ref: str) -> None:
        self._substitutes[tensor_name if ":" in tensor_name else tensor_name + ":0"] = ref

    def add_nodes(self, nodes: list[NodeDef]) -> None:
        self.nodes.extend(nodes)

    def node(self, op_type: str, name: str, inputs: list[str], **attrs: Any) -> str:
        """Add a NodeDef of TF's `op_type` (attrs as Python values, funcs as AttrValue); its output 0."""
        from tftk.summary.graph_def import attr_value
        node = NodeDef(name=self._unique(name), op=op_type, input=inputs)
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value if isinstance(value, AttrValue) else attr_value(value))
        self.nodes.append(node)
        return node.name

    def const(self, name: str, value) -> str:
        import numpy as np

        from tftk.framework import dtypes
        value = np.asarray(value)
        return self.node("Const", name, [], dtype=dtypes.as_dtype(value.dtype), value=value)

    def add_ret(self, name: str, dtype, ref: str) -> None:
        arg = self.fdef.signature.output_arg.add(name=self._unique_ret(name), type=dtype.as_datatype_enum)
        self.fdef.ret[arg.name] = ref  # converted in finish()

    def _unique_ret(self, name: str) -> str:
        taken = {a.name for a in self.fdef.signature.output_arg}
        base, k = re.sub(r"[^a-z0-9_]", "_", name.lower()) or "output", 1
        name = base
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        return name

    def _convert(self, ref: str, by_name: dict[str, NodeDef]) -> str:
        control = ref.startswith("^")
        if control:
            return ref if ref[1:] in by_name else ""
        key = ref if ":" in ref else ref + ":0"
        ref = self._substitutes.get(key, ref)
        node, index = _split(ref)
        if node in self._args:
            return node
        if node not in by_name:
            raise ValueError(f"function {self.name}: input {ref!r} is neither an arg nor a node of the function")
        return function_output_name(by_name[node], index)

    def finish(self) -> FunctionDef:
        by_name = {n.name: n for n in self.nodes}
        for node in self.nodes:
            converted = [self._convert(r, by_name) for r in node.input]
            del node.input[:]
            node.input.extend(r for r in converted if r)
            node.ClearField("device")
            for key in [k for k in node.attr if k == "_output_shapes"]:
                del node.attr[key]
        self.fdef.node_def.extend(self.nodes)
        for key in list(self.fdef.ret):
            self.fdef.ret[key] = self._convert(self.fdef.ret[key], by_name)
        return self.fdef


# ---- import ------------------------------------------------------------------------------------

def _library_functions(library: FunctionDefLibrary) -> dict[str, FunctionDef]:
    return {f.signature.name: f for f in library.function}


def _function(library: FunctionDefLibrary, name: str) -> FunctionDef:
    for fdef in library.function:
        if fdef.signature.name == name:
            return fdef
    raise ValueError(f"import_graph_def: function {name!r} is not in the graph's library")


def _as_graph_def(fdef: FunctionDef, library: FunctionDefLibrary) -> tuple[GraphDef, list[str], list[str]]:
    """A function's nodes as a GraphDef (inputs `node:k`), its arg names, and its returns in graph form."""
    by_name = {n.name: n for n in fdef.node_def}
    args = [a.name for a in fdef.signature.input_arg]

    def graph_ref(ref: str) -> str:
        if ref.startswith("^"):
            return ref
        parts = ref.split(":")
        if len(parts) == 1:
            return parts[0] if parts[0] in by_name else f"{parts[0]}:0"
        if len(parts) == 2:  # an arg, or `node:k` already
            return ref
        node, arg, index = parts
        return f"{node}:{flat_output_index(by_name[node], arg, int(index))}"

    graph_def = GraphDef()
    for node in fdef.node_def:
        copy = graph_def.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(graph_ref(r) for r in node.input if not (r.startswith("^") and r[1:] in args))
    set_graph_library(graph_def, library)
    returns = [graph_ref(fdef.ret[a.name]) for a in fdef.signature.output_arg]
    return graph_def, args, returns


def call_function(library: FunctionDefLibrary, name: str, inputs: list, scope: str | None = None) -> list:
    """Import function `name`'s nodes into the default graph with its args bound to `inputs`; its
    returns (an input returned as is stays that tensor)."""
    from tftk.formats.importer import import_graph_def
    fdef = _function(library, name)
    graph_def, args, returns = _as_graph_def(fdef, library)
    if len(args) != len(inputs):
        raise ValueError(f"function {name!r} takes {len(args)} inputs, got {len(inputs)}")
    bound = {f"{a}:0": t for a, t in zip(args, inputs)}
    direct = {r: bound[r] for r in returns if r in bound}
    wanted = [r for r in returns if r not in bound]
    got = import_graph_def(graph_def, input_map=bound, return_elements=wanted, name=scope or "",
                           skip=args) if wanted else []
    produced = dict(zip(wanted, got))
    return [direct[r] if r in direct else produced[r] for r in returns]


def function_graph(library: FunctionDefLibrary, name: str, outer, specs: list[tuple]):
    """A FuncGraph holding function `name`: placeholders for its args (dtypes/shapes `specs`)."""
    from tftk.framework.func_graph import FuncGraph
    from tftk.ops.constant_op import placeholder
    graph = FuncGraph(outer, name)
    with graph.as_default():
        graph.inputs = [placeholder(dt, shape, name=f"arg_{i}") for i, (dt, shape) in enumerate(specs)]
        graph.outputs = call_function(library, name, graph.inputs)
    return graph


def _build_while(library: FunctionDefLibrary, inputs: list, attrs: dict, name: str):
    from tftk.framework.ops import get_default_graph
    from tftk.framework.tensor_shape import TensorShape
    from tftk.ops.while_loop import add_while_op
    shapes = attrs.get("output_shapes") or []
    specs = [(t.dtype, TensorShape(shapes[i]) if len(shapes) == len(inputs) else t.shape)
             for i, t in enumerate(inputs)]
    outer = get_default_graph()
    cond_graph = function_graph(library, attrs["cond"].name, outer, specs)
    body_graph = function_graph(library, attrs["body"].name, outer, specs)
    return add_while_op(outer, list(inputs), specs, cond_graph, body_graph, name)


def _build_if(library: FunctionDefLibrary, inputs: list, attrs: dict, name: str):
    from tftk.ops.control_flow_ops import cond
    pred, args = inputs[0], list(inputs[1:])
    with _scope(name):
        outs = cond(pred, lambda: call_function(library, attrs["then_branch"].name, args),
                    lambda: call_function(library, attrs["else_branch"].name, args), strict=True)
    return list(outs)


def _build_call(library: FunctionDefLibrary, inputs: list, attrs: dict, name: str):
    with _scope(name):
        return call_function(library, attrs["f"].name, list(inputs))


def _scope(name: str):
    from tftk.framework.ops import get_default_graph
    return get_default_graph().name_scope(name)


_BUILDERS = {"While": _build_while, "StatelessWhile": _build_while, "If": _build_if, "StatelessIf": _build_if,
             "PartitionedCall": _build_call, "StatefulPartitionedCall": _build_call}


def functional_builder(node: NodeDef, library: Callable[[], FunctionDefLibrary]) -> Callable | None:
    """import_graph_def's builder for a functional node or a TensorList op; None for other ops.

    `library` returns the graph's FunctionDefLibrary (read only when a functional node needs it).
    """
    from tftk.ops.list_ops import LIST_OP_TYPES, build_list_op
    if node.op in LIST_OP_TYPES:
        return lambda inputs, attrs, name: build_list_op(node.op, list(inputs), attrs, name)
    build = _BUILDERS.get(node.op)
    if build is None:
        return None
    return lambda inputs, attrs, name: build(library(), inputs, attrs, name)
