"""TensorFlow FunctionDefs: the bodies of functional control flow (While, If), and the library.

A GraphDef's `library` (field 2, which tensorboardX's GraphDef does not declare) holds
FunctionDefs: a signature (an OpDef: named, typed input and output args), node_defs whose inputs
name a function arg (`x`) or a node output as `node:output_arg:index` (the output arg of the
node's OpDef, then the index inside that arg), and a `ret` map from output arg to such a name.

`FunctionBuilder` takes NodeDefs in graph form (`node:k`, as `graph_to_graph_def` writes them)
plus the function's args and returns, and writes the FunctionDef; `flat_output_index` maps a
function's `node:arg:index` back to a graph's output index (formats/function_import reads
functions into tftk graphs). Graph serialisation, like summary/graph_def: it builds no ops.
"""

from __future__ import annotations

import re
from typing import Any

from tftk.proto.tensorflow import AttrValue, FunctionDef, FunctionDefLibrary, GraphDef, GraphLibrary, NodeDef

__all__ = ["new_library", "graph_library", "set_graph_library", "unique_function_name", "FunctionBuilder",
           "func_attr", "function_output_name", "flat_output_index"]


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

    def __init__(self, name: str, reserved: set[str] = frozenset()) -> None:
        """`reserved`: names the nodes added later will have (a sub-graph's op names), kept off the args."""
        self.fdef = FunctionDef()
        self.fdef.signature.name = name
        self.nodes: list[NodeDef] = []
        self._args: set[str] = set()
        self._reserved = set(reserved)
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
        taken = self._args | self._reserved | {n.name for n in self.nodes}
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
        clash = sorted(self._args & set(by_name))
        if clash or len(by_name) != len(self.nodes):
            raise ValueError(f"function {self.name}: node names {clash or 'repeated'} clash with its args or each "
                             "other; rename the op in the loop body")
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
