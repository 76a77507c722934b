"""TensorFlow functions read into tftk graphs: functional control flow and TensorList nodes.

`functional_builder` gives import_graph_def a builder for `While`/`StatelessWhile` (tftk's While
over FuncGraphs made from the cond and body functions), `If`/`StatelessIf` (tftk's cond, each branch
function's nodes imported into its branch), `PartitionedCall`/`StatefulPartitionedCall` (the
function's nodes imported in place), TF's TensorList ops (ops/list_ops) and Optional ops (an If's
gradient reads the taken branch's intermediates through them, ops/optional_ops).
"""

from __future__ import annotations

from typing import Callable

from tftk.formats.functions import flat_output_index, set_graph_library
from tftk.proto.tensorflow import FunctionDef, FunctionDefLibrary, GraphDef, NodeDef

__all__ = ["functional_builder", "call_function", "function_graph"]


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


def call_function(library: FunctionDefLibrary, name: str, inputs: list) -> list:
    """Import function `name`'s nodes into the default graph, under the current name scope, with its
    args bound to `inputs`; its returns (an input returned as is stays that tensor)."""
    from tftk.formats.importer import import_graph_def
    from tftk.framework.ops import get_default_graph
    scope = get_default_graph().get_name_scope()
    fdef = _function(library, name)
    graph_def, args, returns = _as_graph_def(fdef, library)
    if len(args) != len(inputs):
        raise ValueError(f"function {name!r} takes {len(args)} inputs, got {len(inputs)}")
    bound = {f"{a}:0": t for a, t in zip(args, inputs)}
    direct = {r: bound[r] for r in returns if r in bound}
    wanted = [r for r in returns if r not in bound]
    got = import_graph_def(graph_def, input_map=bound, return_elements=wanted, name=f"{scope}/" if scope else "",
                           skip=args)
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
    """The function's nodes under the call's scope, its results as an IdentityN named after the call
    (a signature names them `call:0`, `call:1`...; TF 2's SavedModels fetch `StatefulPartitionedCall:0`),
    or a NoOp when it returns nothing. Either waits for the body's side effects: TF runs every stateful
    node of a called function, so a control edge on the call (a SavedModel's init op on its table
    initializer) must run them."""
    from tftk.framework.ops import get_default_graph
    from tftk.ops.control_flow_ops import no_op
    from tftk.ops.custom_gradient import identity_n
    graph = get_default_graph()
    before = len(graph.get_operations())
    with _scope(name) as scope:
        outputs = call_function(library, attrs["f"].name, list(inputs))
    with graph.control_dependencies(_side_effects(graph.get_operations()[before:])):
        return identity_n(outputs, name=scope) if outputs else no_op(name=scope)  # a scope name is taken exactly


def _side_effects(body: list) -> list:
    """The ops of a function body nothing else in it waits for, and that do something when run: stateful
    ops, ops without outputs, and groups (ops with control inputs)."""
    from tftk.framework import registry
    used = {t.op for op in body for t in op.inputs} | {c for op in body for c in op.control_inputs}
    return [op for op in body if op not in used
            and (registry.lookup(op.type).stateful or not op.outputs or op.control_inputs)]


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
    from tftk.ops.optional_ops import OPTIONAL_OP_TYPES, build_optional_op
    if node.op in LIST_OP_TYPES:
        return lambda inputs, attrs, name: build_list_op(node.op, list(inputs), attrs, name)
    if node.op in OPTIONAL_OP_TYPES:
        return lambda inputs, attrs, name: build_optional_op(node.op, list(inputs), attrs, name)
    build = _BUILDERS.get(node.op)
    if build is None:
        return None
    return lambda inputs, attrs, name: build(library(), inputs, attrs, name)
