"""Ops on the innermost matrices of a tensor: diagonals and trace."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels.scatter import scatter_into_zeros
from tftk.ops import math_ops
from tftk.ops.op_builder import make_op

__all__ = ["matrix_diag_part", "trace"]



# ---- matrix_diag_part / trace ------------------------------------------------------------------

def _diag_part(x):
    return np.diagonal(x, axis1=-2, axis2=-1).copy()


def _diag_part_grad(x, grad):
    n = grad.shape[-1]
    return scatter_into_zeros(x.shape, grad, (Ellipsis, np.arange(n), np.arange(n)))


registry.register_op("MatrixDiagPart", lambda op, ctx: _diag_part)
registry.register_op("MatrixDiagPartGrad", lambda op, ctx: _diag_part_grad)
registry.not_differentiable("MatrixDiagPartGrad")


@registry.register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    return [make_op("MatrixDiagPartGrad", [x, grad], grad.dtype, x.shape)]


def matrix_diag_part(input: Any, name: str | None = None) -> Tensor:
    """The main diagonals of the innermost matrices: shape [..., min(M, N)]."""
    x = convert_to_tensor(input)
    dims = x.shape.as_tuple()
    if dims is not None and len(dims) < 2:
        raise ValueError(f"MatrixDiagPart '{name or 'MatrixDiagPart'}': input must be at least rank 2, "
                         f"got shape {x.shape}")
    if dims is None:
        shape = TensorShape(None)
    else:
        m, n = dims[-2:]
        shape = TensorShape(dims[:-2] + (None if m is None or n is None else min(m, n),))
    return make_op("MatrixDiagPart", [x], x.dtype, shape, name)


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of each innermost matrix."""
    with name_scope(name, "Trace", [x]):
        return math_ops.reduce_sum(matrix_diag_part(x), axis=-1)

