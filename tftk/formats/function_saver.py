"""The saver of a SavedModel written by TF 2's `tf.saved_model.save`, read from its restore function.

TF 2 writes no Saver subgraph and no variables collection: its MetaGraphDef's `saver_def` names a
`StatefulPartitionedCall` of a traced restore function (and another of a save function), fed the
checkpoint prefix through a placeholder and each variable's handle as an argument. Inside, one
`RestoreV2` reads the object-based keys (`w/.ATTRIBUTES/VARIABLE_VALUE`, ...) from a `Const` list and
an `AssignVariableOp` (through `Identity`) puts each tensor into its argument's variable.

`function_saver` reads that function statically: which outer node each checkpoint key restores, and
which nodes (the two calls and the prefix placeholder) a tftk Saver replaces. TF's own loader runs the
function; the tftk Saver built from these keys reads and writes the same checkpoint entries.
"""

from __future__ import annotations

from dataclasses import dataclass

from tftk.formats.functions import graph_library
from tftk.proto.tensorflow import FunctionDef, GraphDef, NodeDef, SaverDef

__all__ = ["FunctionSaver", "function_saver"]

_CALLS = ("PartitionedCall", "StatefulPartitionedCall")


@dataclass(frozen=True)
class FunctionSaver:
    """What a TF 2 SavedModel's save/restore functions do, for a tftk Saver to do instead.

    keys: checkpoint key -> name of the outer graph node (a VarHandleOp) that the key restores.
    replaced: the outer nodes left out of the import (the save and restore calls, the prefix placeholder).
    """

    keys: dict[str, str]
    replaced: frozenset[str]


def function_saver(graph_def: GraphDef, saver_def: SaverDef) -> FunctionSaver | None:
    """The keys and replaced nodes of `saver_def` when its restore op calls a function; None for a TF1
    Saver (whose RestoreV2 nodes sit in the graph itself). ValueError when the function does not have
    the shape TF writes (a variable assigned from something other than a RestoreV2 output)."""
    nodes = {node.name: node for node in graph_def.node}
    restore = nodes.get(saver_def.restore_op_name)
    if restore is None or restore.op not in _CALLS:
        return None
    functions = {f.signature.name: f for f in graph_library(graph_def).function}
    function = functions.get(restore.attr["f"].func.name)
    if function is None:
        raise ValueError(f"SavedModel restore op {restore.name!r} calls {restore.attr['f'].func.name!r}, "
                         f"which the graph's function library does not hold")
    outer = [_node_name(i) for i in restore.input if not i.startswith("^")]
    arguments = dict(zip((arg.name for arg in function.signature.input_arg), outer))
    keys = {key: arguments[variable] for key, variable in _restored_keys(function).items()}
    replaced = {restore.name, _node_name(saver_def.filename_tensor_name)}
    save = nodes.get(_node_name(saver_def.save_tensor_name))
    if save is not None and save.op in _CALLS:
        replaced.add(save.name)
    return FunctionSaver(keys, frozenset(replaced))


def _restored_keys(function: FunctionDef) -> dict[str, str]:
    """Checkpoint key -> the function argument (a variable's handle) it is assigned to."""
    body = {node.name: node for node in function.node_def}
    keys = {}
    for node in function.node_def:
        if node.op != "AssignVariableOp":
            continue
        handle, value = node.input[0], _source(body, node.input[1])
        if value is None or value[0].op != "RestoreV2":
            raise ValueError(f"SavedModel restore function {function.signature.name!r}: {node.name!r} assigns "
                             f"{node.input[1]!r}, not a RestoreV2 output; tftk reads only TF's own restore functions")
        restore_v2, index = value
        keys[_string_list(body, restore_v2.input[1])[index]] = handle
    return keys


def _source(body: dict[str, NodeDef], ref: str) -> tuple[NodeDef, int] | None:
    """The (node, output index) a function-body input reference comes from, through Identity nodes."""
    while True:
        name, _, rest = ref.partition(":")
        node = body.get(name)
        if node is None:
            return None
        if node.op != "Identity":
            return node, int(rest.rpartition(":")[2] or 0)
        ref = node.input[0]


def _string_list(body: dict[str, NodeDef], ref: str) -> list[str]:
    """The strings of a Const node in the function body."""
    node = body[ref.partition(":")[0]]
    return [s.decode("utf-8") for s in node.attr["value"].tensor.string_val]


def _node_name(tensor_name: str) -> str:
    return tensor_name.lstrip("^").partition(":")[0]
