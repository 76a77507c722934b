"""Ops that walk an axis: argmax/argmin, cumulative sums and products, bincount."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import math_ops, reduction_ops
from tftk.ops.constant_value import static_axis
from tftk.ops.op_builder import make_op

__all__ = ["argmax", "argmin", "cumsum", "cumprod", "bincount"]



# ---- argmax / argmin ---------------------------------------------------------------------------

def _arg_extremum(op_type: str, fn: Any) -> Any:
    def factory(op, ctx):
        axis, npd = op.get_attr("axis"), op.outputs[0].dtype.as_numpy_dtype

        def kernel(x):
            if x.shape[axis] == 0:
                raise ValueError(f"Reduction axis {axis} is empty in shape {x.shape}")
            return fn(x, axis=axis).astype(npd, copy=False)
        return kernel
    registry.register_op(op_type, factory, rows=batch_rows.along_axis())
    registry.not_differentiable(op_type)

    def constructor(input: Any, axis: Any = None, name: str | None = None, dimension: Any = None,
                    output_type: Any = dtypes.int64) -> Tensor:
        x = convert_to_tensor(input)
        axis = dimension if axis is None else axis
        axis = 0 if axis is None else axis  # TF1's default
        dims = x.shape.as_tuple()
        if dims is not None and not dims:
            raise ValueError(f"{op_type} '{name or op_type}': input must have rank >= 1, got a scalar")
        a = static_axis(axis, None if dims is None else len(dims), op_type)
        out = dtypes.as_dtype(output_type)
        if out not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"{op_type}: output_type must be int32 or int64, got {out.name}")
        shape = TensorShape(None) if dims is None else TensorShape(dims[:a] + dims[a + 1:])
        return make_op(op_type, [x], out, shape, name, {"axis": a})

    constructor.__name__ = op_type
    constructor.__doc__ = f"Index of the {op_type[3:].lower()}imum along `axis` (first one on ties)."
    return constructor


argmax = _arg_extremum("ArgMax", np.argmax)
argmin = _arg_extremum("ArgMin", np.argmin)


# ---- cumsum / cumprod --------------------------------------------------------------------------

def _scan(fn: Any, identity: int) -> Any:
    def factory(op, ctx):
        axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")

        def kernel(x):
            y = np.flip(x, axis) if reverse else x
            out = fn(y, axis=axis, dtype=x.dtype)
            if exclusive:
                out = np.moveaxis(out, axis, 0)
                shifted = np.full_like(out, identity)
                shifted[1:] = out[:-1]
                out = np.moveaxis(shifted, 0, axis)
            return np.flip(out, axis) if reverse else out
        return kernel
    return factory


registry.register_op("Cumsum", _scan(np.cumsum, 0))
registry.register_op("Cumprod", _scan(np.cumprod, 1))


def _scan_op(op_type: str, x: Any, axis: Any, exclusive: bool, reverse: bool, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    a = static_axis(axis, t.shape.ndims, op_type)
    if t.shape.ndims == 0:
        raise ValueError(f"{op_type} '{name or op_type}': input must have rank >= 1")
    return make_op(op_type, [t], t.dtype, t.shape, name,
                   {"axis": a, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Running sum along `axis`; exclusive starts at 0, reverse runs from the end."""
    return _scan_op("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """Running product along `axis`; exclusive starts at 1, reverse runs from the end."""
    return _scan_op("Cumprod", x, axis, exclusive, reverse, name)


@registry.register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.get_attr("axis"), op.get_attr("exclusive"), not op.get_attr("reverse"))]


@registry.register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    """TF's rule (needs non-zero inputs): cumsum(prod * grad, reversed) / x."""
    x = op.inputs[0]
    axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive, reverse)
    out = cumsum(math_ops.multiply(prod, grad), axis, exclusive, not reverse)
    return [math_ops.realdiv(out, x)]



# ---- bincount ------ ------------------------------------------------------------------------------

def _bind_bincount(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(arr, size, weights):
        flat = arr.reshape(-1)
        if flat.size and flat.min() < 0:
            raise ValueError(f"bincount: input must be non-negative, got {int(flat.min())}")
        w = None if weights.size == 0 else weights.reshape(-1)
        return np.bincount(flat, weights=w, minlength=int(size))[:int(size)].astype(npd)
    return kernel


registry.register_op("Bincount", _bind_bincount)
registry.not_differentiable("Bincount")


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = dtypes.int32) -> Tensor:
    """Counts (or summed weights) of each value in a non-negative int32 array."""
    with name_scope(None, "bincount", [arr]):
        a = convert_to_tensor(arr, dtype=dtypes.int32)
        size = math_ops.add(reduction_ops.reduce_max(a), 1) if a.shape.num_elements() != 0 else \
            convert_to_tensor(0)
        if minlength is not None:
            size = math_ops.maximum(size, convert_to_tensor(minlength, dtype=dtypes.int32))
        if maxlength is not None:
            size = math_ops.minimum(size, convert_to_tensor(maxlength, dtype=dtypes.int32))
        out = dtypes.as_dtype(dtype)
        if weights is None:
            w = convert_to_tensor(np.zeros((0,), out.as_numpy_dtype))
        else:
            w = convert_to_tensor(weights)
            out = w.dtype
        return make_op("Bincount", [a, size, w], out, [None])

