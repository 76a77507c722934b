"""`tf.check_numerics` and `tf.add_check_numerics_ops`: fail a run at the first NaN or Inf.

`check_numerics(t, message)` passes `t` through unchanged and raises InvalidArgumentError
("<message> : Tensor had NaN values") when it holds NaN or Inf; its gradient checks the gradient
the same way. `add_check_numerics_ops()` puts one such check on every floating-point output
in the graph and groups them, so running the group alongside a train op names the first bad op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, get_default_graph, guard_scope
from tftk.ops.op_builder import make_op

__all__ = ["check_numerics", "add_check_numerics_ops"]


def _bind_check_numerics(op: Operation, ctx: Any):
    message = op.get_attr("message")

    def kernel(x):
        if not np.all(np.isfinite(x)):
            kind = "NaN" if np.isnan(x).any() else "Inf"
            raise errors.InvalidArgumentError(None, op, f"{message} : Tensor had {kind} values "
                                              f"(check {op.name})")
        return x
    return kernel


registry.register_op("CheckNumerics", _bind_check_numerics)


@registry.register_gradient("CheckNumerics")
def _check_numerics_grad(op: Operation, grad: Tensor) -> list:
    message = "Not a number (NaN) or infinity (Inf) values detected in gradient. " + op.get_attr("message")
    return [check_numerics(grad, message)]


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """`tensor` unchanged; running it raises InvalidArgumentError naming `message` if it holds NaN/Inf.

    Raises:
      TypeError: `tensor` is not floating point (only floats can hold NaN or Inf).
    """
    x = convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"check_numerics needs a floating-point tensor, got {x.name} of {x.dtype.name}")
    return make_op("CheckNumerics", [x], x.dtype, x.shape, name or "CheckNumerics", {"message": message})


def _unchecked(op: Operation) -> bool:
    """Checks and variables (references: TF1 skips refs) get no check of their own."""
    return op.type == "CheckNumerics" or registry.lookup(op.type).inline is registry.Inline.VARIABLE


def add_check_numerics_ops() -> Operation:
    """A group of check_numerics ops, one per floating-point output of every op now in the graph.

    Each check sits in the same tf.cond branch as the tensor it checks, so an untaken branch is
    not checked. The messages name the checked op, e.g. "loss/truediv:0".
    """
    from tftk.ops.control_flow_ops import group
    graph = get_default_graph()
    checks = []
    for op in list(graph.get_operations()):
        if _unchecked(op):
            continue
        for tensor in op.outputs:
            if tensor.dtype.is_floating:
                with guard_scope(graph, op.guard), graph.control_dependencies(None):
                    checks.append(check_numerics(tensor, f"{tensor.name}"))
    return group(*checks)
