"""Ops on the innermost matrices of a tensor: eye, diagonals, band parts, transpose, trace.

All are batched over leading dimensions, as TF's matrix_* ops are."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels.scatter import scatter_into_zeros
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.constant_op import constant
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op
from tftk.ops.spectral_ops import complex as make_complex, imag, real

__all__ = ["eye", "diag", "diag_part", "matrix_diag", "matrix_diag_part", "matrix_set_diag",
           "matrix_band_part", "matrix_transpose", "adjoint", "trace"]

# ---- matrix_diag_part / trace ------------------------------------------------------------------

def _diag_part(x):
    return np.diagonal(x, axis1=-2, axis2=-1).copy()


def _matrix_diag_part_grad_kernel(x, grad):
    n = grad.shape[-1]
    return scatter_into_zeros(x.shape, grad, (Ellipsis, np.arange(n), np.arange(n)))


registry.register_op("MatrixDiagPart", lambda op, ctx: _diag_part)
registry.register_op("MatrixDiagPartGrad", lambda op, ctx: _matrix_diag_part_grad_kernel)
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
        return reduction_ops.reduce_sum(matrix_diag_part(x), axis=-1)



def _matrix_input(x: Any, op_type: str, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    if t.shape.ndims is not None and t.shape.ndims < 2:
        raise ValueError(f"{op_type} '{name or op_type}': input must be at least rank 2, got shape {t.shape}")
    return t


# ---- matrix_diag / matrix_set_diag / diag / diag_part -------------------------------------------

def _matrix_diag(d):
    n = d.shape[-1]
    out = np.zeros(d.shape + (n,), d.dtype)
    out[..., np.arange(n), np.arange(n)] = d
    return out


def _set_diag(x, d):
    out = x.copy()
    k = min(x.shape[-2:])
    if d.shape != x.shape[:-2] + (k,):
        raise ValueError(f"diagonal must have shape {list(x.shape[:-2] + (k,))}, got {list(d.shape)}")
    out[..., np.arange(k), np.arange(k)] = d
    return out


registry.register_op("MatrixDiag", lambda op, ctx: _matrix_diag)
registry.register_op("MatrixSetDiag", lambda op, ctx: _set_diag)


@registry.register_gradient("MatrixDiag")
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad)]


@registry.register_gradient("MatrixSetDiag")
def _set_diag_grad(op, grad):
    x, d = op.inputs
    return [matrix_set_diag(grad, array_ops.zeros_like(d)), matrix_diag_part(grad)]


def matrix_diag(diagonal: Any, name: str | None = None) -> Tensor:
    """Batched square matrices [..., N, N] with `diagonal` [..., N] on the main diagonal."""
    d = convert_to_tensor(diagonal)
    if d.shape.ndims == 0:
        raise ValueError(f"MatrixDiag '{name or 'MatrixDiag'}': diagonal must be at least rank 1")
    dims = d.shape.as_tuple()
    shape = TensorShape(None) if dims is None else TensorShape(dims + dims[-1:])
    return make_op("MatrixDiag", [d], d.dtype, shape, name)


def matrix_set_diag(input: Any, diagonal: Any, name: str | None = None) -> Tensor:
    """`input` with the main diagonal of each innermost matrix replaced by `diagonal`."""
    x = _matrix_input(input, "MatrixSetDiag", name)
    d = convert_to_tensor(diagonal, dtype=x.dtype)
    dims = x.shape.as_tuple()
    if dims is not None and d.shape.ndims is not None:
        k = None if None in dims[-2:] else min(dims[-2:])
        if not d.shape.is_compatible_with(TensorShape(dims[:-2] + (k,))):
            raise ValueError(f"MatrixSetDiag '{name or 'MatrixSetDiag'}': diagonal shape {d.shape} does not "
                             f"match input shape {x.shape}")
    return make_op("MatrixSetDiag", [x, d], x.dtype, x.shape, name)


def _diag_kernel(d):
    return np.diag(d.reshape(-1)).reshape(d.shape + d.shape)


def _diag_part_kernel(x):
    k = x.ndim // 2
    if x.shape[:k] != x.shape[k:]:
        raise ValueError(f"diag_part: input shape {list(x.shape)} must be [D1..Dk, D1..Dk]")
    n = int(np.prod(x.shape[:k]))
    return np.diagonal(x.reshape(n, n)).reshape(x.shape[:k]).copy()


registry.register_op("Diag", lambda op, ctx: _diag_kernel)
registry.register_op("DiagPart", lambda op, ctx: _diag_part_kernel)


@registry.register_gradient("Diag")
def _diag_grad(op, grad):
    return [diag_part(grad)]


@registry.register_gradient("DiagPart")
def _diag_part_grad_rule(op, grad):
    return [diag(grad)]


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """A tensor of rank 2k with `diagonal` (rank k) on its diagonal: out[i..., i...] = diagonal[i...]."""
    d = convert_to_tensor(diagonal)
    if d.shape.ndims == 0:
        raise ValueError(f"Diag '{name or 'Diag'}': input must be at least rank 1, got a scalar")
    dims = d.shape.as_tuple()
    return make_op("Diag", [d], d.dtype, TensorShape(None) if dims is None else TensorShape(dims + dims), name)


def diag_part(input: Any, name: str | None = None) -> Tensor:
    """The diagonal of a [D1..Dk, D1..Dk] tensor: shape [D1..Dk]."""
    x = convert_to_tensor(input)
    dims = x.shape.as_tuple()
    if dims is not None and (len(dims) % 2 or not dims or
                             not TensorShape(dims[:len(dims) // 2]).is_compatible_with(TensorShape(dims[len(dims) // 2:]))):
        raise ValueError(f"DiagPart '{name or 'DiagPart'}': input must have even rank with matching halves, "
                         f"got shape {x.shape}")
    shape = TensorShape(None) if dims is None else TensorShape(dims[:len(dims) // 2])
    return make_op("DiagPart", [x], x.dtype, shape, name)


# ---- eye / band_part / transpose -----------------------------------------------------------------

def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None, dtype: Any = dtypes.float32,
        name: str | None = None) -> Tensor:
    """Identity matrices [*batch_shape, num_rows, num_columns] (ones on the main diagonal)."""
    with name_scope(name, "eye"):
        sizes = [num_rows] + ([] if num_columns is None else [num_columns])
        if any(isinstance(v, Tensor) and constant_value(v) is None for v in sizes):
            return _eye_at_run_time(num_rows, num_columns, batch_shape, dtype)
        rows = int(constant_value(num_rows))
        cols = rows if num_columns is None else int(constant_value(num_columns))
        batch = [] if batch_shape is None else [int(v) for v in np.atleast_1d(constant_value(batch_shape))]
        value = np.broadcast_to(np.eye(rows, cols, dtype=dtypes.as_dtype(dtype).as_numpy_dtype),
                                batch + [rows, cols])
        return constant(np.ascontiguousarray(value), name="eye")


def _eye_at_run_time(num_rows: Any, num_columns: Any, batch_shape: Any, dtype: Any) -> Tensor:
    """An identity whose size is known only at run time, as TF builds it: ones on a diagonal of
    min(rows, columns) entries, set into zeros (or made a square diagonal matrix)."""
    batch = [] if batch_shape is None else [int(v) for v in np.atleast_1d(constant_value(batch_shape))]
    rows = convert_to_tensor(num_rows, dtype=dtypes.int32)
    cols = rows if num_columns is None else convert_to_tensor(num_columns, dtype=dtypes.int32)
    ones = array_ops.ones(batch + [math_ops.minimum(rows, cols) if num_columns is not None else rows], dtype)
    if num_columns is None:
        return matrix_diag(ones)
    return matrix_set_diag(array_ops.zeros(batch + [rows, cols], dtype), ones)


def _bind_band_part(op, ctx):
    def kernel(x, lower, upper):
        m, n = x.shape[-2:]
        lo, up = int(lower), int(upper)
        i, j = np.arange(m)[:, None], np.arange(n)[None, :]
        keep = ((lo < 0) | (i - j <= lo)) & ((up < 0) | (j - i <= up))
        return np.where(keep, x, np.zeros((), x.dtype))
    return kernel


registry.register_op("MatrixBandPart", _bind_band_part)


@registry.register_gradient("MatrixBandPart")
def _band_part_grad(op, grad):
    return [matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None]


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:
    """Keep `num_lower` sub-diagonals and `num_upper` super-diagonals (-1: all) of each matrix."""
    x = _matrix_input(input, "MatrixBandPart", name)
    lo = convert_to_tensor(num_lower, dtype=dtypes.int64)
    up = convert_to_tensor(num_upper, dtype=dtypes.int64)
    return make_op("MatrixBandPart", [x, lo, up], x.dtype, x.shape, name)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Swap the last two dimensions (conjugating complex entries when `conjugate`)."""
    x = _matrix_input(a, "matrix_transpose", name)
    if x.shape.ndims is None:
        raise ValueError("matrix_transpose needs an input of known rank")
    rank = x.shape.ndims
    out = array_ops.transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2], name=name)
    if conjugate and x.dtype.is_complex:
        out = make_complex(real(out), math_ops.negative(imag(out)))
    return out


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of each innermost matrix."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)
