"""`tf.graph_util`: freeze variables into constants, cut a GraphDef down to what outputs need.

All functions take and return GraphDef protos (TF's or tftk's), as TF1's graph_util does.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from tftk.formats.importer import import_graph_def
from tftk.framework import dtypes
from tftk.framework.tensor_shape import TensorShape
from tftk.proto.tensorflow import AttrValue, GraphDef, NodeDef
from tftk.summary.tensor_proto import make_tensor_proto

__all__ = ["extract_sub_graph", "convert_variables_to_constants", "remove_training_nodes",
           "import_graph_def", "tensor_shape_from_node_def_name", "must_run_on_cpu"]

# Ops TF1's device functions pin to the CPU when asked to (`pin_variables_on_cpu`).
_CPU_PINNED_VARIABLE_OPS = frozenset({"Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub",
                                      "ScatterUpdate", "TruncatedNormal", "Variable", "VariableV2"})

_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _node_name(name: str) -> str:
    return name.lstrip("^").split(":")[0]


def extract_sub_graph(graph_def: GraphDef, dest_nodes: Sequence[str]) -> GraphDef:
    """The nodes `dest_nodes` need (through data and control inputs), in their original order."""
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list of node names")
    by_name = {n.name: n for n in graph_def.node}
    keep: set[str] = set()
    stack = [_node_name(d) for d in dest_nodes]
    while stack:
        name = stack.pop()
        if name in keep:
            continue
        if name not in by_name:
            raise ValueError(f"{name} is not in graph")
        keep.add(name)
        stack.extend(_node_name(i) for i in by_name[name].input)
    out = GraphDef()
    out.CopyFrom(graph_def)
    del out.node[:]
    out.node.extend(n for n in graph_def.node if n.name in keep)
    return out


def convert_variables_to_constants(sess: Any, input_graph_def: GraphDef, output_node_names: Sequence[str],
                                   variable_names_whitelist: Iterable[str] | None = None,
                                   variable_names_blacklist: Iterable[str] | None = None) -> GraphDef:
    """The subgraph `output_node_names` need, with every variable replaced by a Const of its value
    in `sess` (reads become Identity), ready for `write_graph(..., as_text=False)`."""
    inference = extract_sub_graph(input_graph_def, output_node_names)
    allowed = set(variable_names_whitelist) if variable_names_whitelist is not None else None
    denied = set(variable_names_blacklist or ())
    frozen = [n.name for n in inference.node if n.op in _VARIABLE_OPS
              and (allowed is None or n.name in allowed) and n.name not in denied]
    values = dict(zip(frozen, sess.run([f"{name}:0" for name in frozen]))) if frozen else {}
    out = GraphDef()
    out.CopyFrom(inference)
    del out.node[:]
    for node in inference.node:
        if node.name in values:
            const = NodeDef(name=node.name, op="Const", device=node.device)
            const.attr["dtype"].CopyFrom(node.attr["dtype"])
            const.attr["value"].CopyFrom(AttrValue(tensor=make_tensor_proto(values[node.name],
                                                                            node.attr["dtype"].type)))
            out.node.append(const)
        elif node.op == "Assign" and _node_name(node.input[0]) in values:
            continue  # an initializer of a frozen variable: nothing left to assign
        else:
            out.node.append(node)
    dropped = {n.name for n in inference.node} - {n.name for n in out.node}
    for node in out.node:
        kept = [i for i in node.input if _node_name(i) not in dropped]
        del node.input[:]
        node.input.extend(kept)
    return out


def remove_training_nodes(input_graph: GraphDef, protected_nodes: Iterable[str] | None = None) -> GraphDef:
    """Drop Identity and CheckNumerics nodes (not protected, without control inputs), wiring their
    consumers to their input, as TF1 does before freezing for inference."""
    protected = set(protected_nodes or ())
    removable = {n.name: n.input[0] for n in input_graph.node
                 if n.op in ("Identity", "CheckNumerics") and n.name not in protected and n.input
                 and not any(i.startswith("^") for i in n.input)}

    def resolve(name: str) -> str:
        control = name.startswith("^")
        base, _, index = name.lstrip("^").partition(":")
        seen = set()
        while base in removable and base not in seen and not index:
            seen.add(base)
            base, _, index = removable[base].partition(":")
        full = base + (f":{index}" if index else "")
        return "^" + base if control else full

    out = GraphDef()
    out.CopyFrom(input_graph)
    del out.node[:]
    for node in input_graph.node:
        if node.name in removable:
            continue
        copy = NodeDef()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(resolve(i) for i in node.input)
        out.node.append(copy)
    return out


def tensor_shape_from_node_def_name(graph: Any, input_name: str) -> TensorShape:
    """The static shape of the tensor `input_name` names in `graph` (`"node"` means output 0)."""
    canonical = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(canonical).get_shape()


def must_run_on_cpu(node: Any, pin_variables_on_cpu: bool = False) -> bool:
    """TF1's rule for nodes with no GPU kernel: int32/string constants, int32 stitches and casts.

    `node` is an Operation or a NodeDef; with `pin_variables_on_cpu`, variable ops count too.
    """
    is_op = hasattr(node, "node_def") and not isinstance(node, NodeDef)
    op = node.type if is_op else node.op
    if pin_variables_on_cpu and op in _CPU_PINNED_VARIABLE_OPS:
        return True
    if op not in ("Const", "DynamicStitch", "ParallelDynamicStitch", "Cast"):
        return False
    if is_op:  # the dtype TF reads from an attr is the Cast's input, else the op's output
        dtype = (node.inputs[0] if op == "Cast" else node.outputs[0]).dtype.as_datatype_enum
    else:
        dtype = node.attr["SrcT" if op == "Cast" else "dtype" if op == "Const" else "T"].type
    cpu_only = {dtypes.int32.as_datatype_enum}
    if op == "Const":
        cpu_only.add(dtypes.string.as_datatype_enum)
    return dtype in cpu_only
