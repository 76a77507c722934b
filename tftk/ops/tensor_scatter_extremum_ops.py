"""tensor_scatter_nd_max / tensor_scatter_nd_min, and broadcast_dynamic_shape, to_complex64/128 and
sparse_matmul (TF1 names of plain ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import array_ops, math_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.gather_ops import gather_nd
from tftk.ops.scatter_ops import nd_key, scatter_nd

__all__ = ["tensor_scatter_nd_max", "tensor_scatter_nd_min", "broadcast_dynamic_shape", "to_complex64",
           "to_complex128", "sparse_matmul"]


def _scatter_extremum(tensor: np.ndarray, indices: np.ndarray, updates: np.ndarray, maximum: bool) -> np.ndarray:
    out = tensor.copy()
    (np.maximum if maximum else np.minimum).at(out, nd_key(out.shape, indices), updates)
    return out


register_array_op("TensorScatterExtremum", _scatter_extremum, differentiable=True)


@registry.register_gradient("TensorScatterExtremum")
def _scatter_extremum_grad(op, grad):
    """Ties share the gradient, as TF's _TensorScatterMinOrMaxGrad divides it."""
    x, indices, y = op.inputs
    output = op.outputs[0]
    x_hits = math_ops.cast(math_ops.equal(x, output), grad.dtype)
    y_hits = math_ops.cast(math_ops.equal(y, gather_nd(output, indices)), grad.dtype)
    count = x_hits + scatter_nd(indices, y_hits, array_ops.shape(x, out_type=indices.dtype))
    return [grad * x_hits / count, None, gather_nd(grad / count, indices) * y_hits]


def _extremum(tensor: Any, indices: Any, updates: Any, maximum: bool, name: str | None) -> Tensor:
    t = convert_to_tensor(tensor, name="tensor")
    idx = convert_to_tensor(indices, name="indices")
    upd = convert_to_tensor(updates, dtype=t.dtype, name="updates")
    if not idx.dtype.is_integer:
        raise TypeError(f"indices must be int32 or int64, got {idx.dtype.name}")
    return array_op("TensorScatterExtremum", [t, idx, upd], [(t.dtype, t.shape)],
                    name or ("TensorScatterMax" if maximum else "TensorScatterMin"), {"maximum": maximum})


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with each indexed element the maximum of itself and its updates."""
    return _extremum(tensor, indices, updates, True, name)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with each indexed element the minimum of itself and its updates."""
    return _extremum(tensor, indices, updates, False, name)


register_array_op("BroadcastArgs", lambda x, y: np.array(np.broadcast_shapes(tuple(x.tolist()), tuple(y.tolist()))))


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The shape two tensors of shapes shape_x and shape_y broadcast to (numpy's rule), as a tensor."""
    x = convert_to_tensor(shape_x, name="shape_x")
    y = convert_to_tensor(shape_y, dtype=x.dtype, name="shape_y")
    return array_op("BroadcastArgs", [x, y], [(x.dtype, [None])], "BroadcastArgs")


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    """x cast to complex64."""
    return math_ops.cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    """x cast to complex128."""
    return math_ops.cast(x, dtypes.complex128, name=name)


def sparse_matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, a_is_sparse: bool = False,
                  b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """matmul of float32 matrices (the sparsity hints only chose TF's kernel)."""
    x = convert_to_tensor(a, name="a")
    if x.dtype is not dtypes.float32:
        raise TypeError(f"Value passed to parameter 'a' has DataType {x.dtype.name} not in list of allowed values: "
                        f"float32, bfloat16")
    return math_ops.matmul(x, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)
