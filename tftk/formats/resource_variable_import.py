"""Resource variables (TF 2's tf.compat.v1 default) imported onto tftk's reference variables.

A `VarHandleOp` becomes a tftk variable of its shape and dtype (named after the node, as TF's
checkpoints key it); a second handle of the same container/shared_name in the same import is
the same variable, as in TF. The ops taking its handle become the reference-variable ops `op_table`
already rebuilds: `ReadVariableOp` reads it, `AssignVariableOp`/`AssignAdd`/`AssignSub` are
`Assign`/`AssignAdd`/`AssignSub`, `ResourceApply*`/`ResourceSparseApply*` are the `Apply*`
updates, `ResourceScatter*` the `Scatter*` ones. A resource op missing here is an
UnsupportedNodeError naming node and op (importer).
"""

from __future__ import annotations

from tftk.formats.op_table import BUILDERS, Builder, UnsupportedNodeError, update_builder
from tftk.framework import dtypes, tensor_shape
from tftk.framework.ops import get_default_graph
from tftk.ops import array_ops, gather_ops, state_ops
from tftk.train.training_ops import UPDATE_KINDS

__all__ = ["RESOURCE_BUILDERS"]


def _var_handle(x, a, name):
    """A VarHandleOp as the reference tensor of a tftk variable; one per (scope, container, shared_name)."""
    if a.get("dtype") in (None, "resource", "variant"):
        raise UnsupportedNodeError(f"node {name!r}: VarHandleOp of dtype {a.get('dtype')!r} has no tftk variable")
    graph = get_default_graph()
    handles = graph.__dict__.setdefault("_tftk_imported_handles", {})
    key = (graph.get_name_scope(), a.get("container", ""), a.get("shared_name") or name)
    if key not in handles:
        handles[key] = state_ops.variable_op(tensor_shape.TensorShape(a["shape"]), a["dtype"], name)
    return handles[key]


def _resource_gather(x, a, name):
    """TF's ResourceGather (rows of a variable) as a Gather of the variable's value."""
    if a.get("batch_dims", 0):
        raise UnsupportedNodeError(f"node {name!r}: ResourceGather with batch_dims={a['batch_dims']}")
    return gather_ops.gather(x[0], x[1], name=name)


RESOURCE_BUILDERS: dict[str, Builder] = {
    "VarHandleOp": _var_handle,
    "ReadVariableOp": lambda x, a, name: array_ops.identity(x[0], name=name),
    "AssignVariableOp": BUILDERS["Assign"],
    "AssignAddVariableOp": BUILDERS["AssignAdd"],
    "AssignSubVariableOp": BUILDERS["AssignSub"],
    "VariableShape": lambda x, a, name: array_ops.shape(x[0], out_type=a.get("out_type", dtypes.int32), name=name),
    "VarIsInitializedOp": lambda x, a, name: state_ops.is_variable_initialized(x[0], name=name),
    "ResourceGather": _resource_gather,
}
RESOURCE_BUILDERS.update({"Resource" + op: BUILDERS[op] for op in ("ScatterAdd", "ScatterSub", "ScatterUpdate")})
RESOURCE_BUILDERS.update({"Resource" + op: BUILDERS[op] for op in UPDATE_KINDS})
RESOURCE_BUILDERS.update({"ResourceSparse" + op: update_builder("Sparse" + op) for op in UPDATE_KINDS
                          if op != "ApplyAdam"})  # TF's sparse Adam is ResourceScatterAdd on m and v
