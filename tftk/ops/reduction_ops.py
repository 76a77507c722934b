"""Reductions (reduce_sum, reduce_mean, ... count_nonzero): constructor, shape rule, kernel, gradient."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.constant_value import constant_value
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.array_ops import reshape, shape, zeros_like
from tftk.ops.gather_ops import where
from tftk.ops.math_ops import (add, broadcast_like, cast, equal, exp, is_finite, log, multiply, not_equal, realdiv,
                               subtract)
from tftk.ops.op_builder import make_op

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
           "reduce_logsumexp", "count_nonzero"]


def _normalize_axis(axis: Any, rank: int | None, op_name: str) -> tuple[int, ...] | None:
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        value = constant_value(axis)
        if value is None:
            raise ValueError(f"{op_name}: reduction axes must be known when the graph is built")
        axis = value.tolist()
    axes = [int(a) for a in np.atleast_1d(np.asarray(axis)).tolist()]
    if rank is not None:
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions "
                                 f"in '{op_name}'")
        axes = [a % rank for a in axes]
    return tuple(sorted(set(axes)))


def _reduced_shape(shape: TensorShape, axes: tuple | None, keepdims: bool) -> TensorShape:
    dims = shape.as_tuple()
    if dims is None:
        return TensorShape(None)
    if axes is None:
        return TensorShape([1] * len(dims) if keepdims else [])
    if any(a < 0 for a in axes):
        return TensorShape(None)
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def _bind_reduce(fn: Callable) -> Callable:
    def factory(op, ctx):
        axes, keep = op.get_attr("axis"), op.get_attr("keepdims")
        out_dtype = op.outputs[0].dtype.as_numpy_dtype

        def kernel(x):
            out = fn(x, axis=axes, keepdims=keep)
            return out if out.dtype == out_dtype else np.asarray(out, dtype=out_dtype)
        return kernel
    return factory


def _reduction(op_type: str, fn: Callable, bool_only: bool = False, rows: Callable | None = None) -> Callable:
    registry.register_op(op_type, _bind_reduce(fn), rows=rows or batch_rows.reduction(linear=False))

    def constructor(input_tensor: Any, axis: Any = None, keepdims: bool | None = None,
                    name: str | None = None, reduction_indices: Any = None,
                    keep_dims: bool | None = None) -> Tensor:
        x = convert_to_tensor(input_tensor)
        if bool_only and x.dtype is not dtypes.bool:
            raise TypeError(f"{op_type} needs a bool tensor, got {x.dtype.name}")
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        axes = _normalize_axis(axis, x.shape.ndims, name or op_type)
        if axes == () and axis is not None:
            return x
        shape = _reduced_shape(x.shape, axes, keep)
        return make_op(op_type, [x], x.dtype, shape, name, {"axis": axes, "keepdims": keep})

    constructor.__name__ = op_type
    constructor.__doc__ = f"{op_type} over `axis` (all axes when None), TF1 signature."
    return constructor


def _mean(x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":  # TF's integer mean truncates
        total = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
        count = x.size // max(np.size(total), 1) if x.size else 1
        return (total // count if count else total).astype(x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims)


reduce_sum = _reduction("Sum", np.sum, rows=batch_rows.reduction())
reduce_mean = _reduction("Mean", _mean, rows=batch_rows.reduction(mean=True))
reduce_max = _reduction("Max", np.max)
reduce_min = _reduction("Min", np.min)
reduce_prod = _reduction("Prod", np.prod)
reduce_any = _reduction("Any", np.any, bool_only=True)
reduce_all = _reduction("All", np.all, bool_only=True)
registry.not_differentiable("Any", "All")


def _keepdims_grad(op, grad: Tensor) -> Tensor:
    """The output gradient reshaped so it broadcasts against the input."""
    if op.get_attr("keepdims"):
        return grad
    axes = op.get_attr("axis")
    return make_op("ExpandReduced", [grad], grad.dtype, _expanded_shape(grad.shape, axes), attrs={"axis": axes})


def _expanded_shape(shape: TensorShape, axes: tuple | None) -> TensorShape:
    """A reduced value's static shape with the reduced `axes` put back as 1s (None: it stays a scalar)."""
    dims = shape.as_list() if shape.ndims is not None else None
    if axes is None or dims is None:
        return shape if axes is None else TensorShape(None)
    for axis in sorted(axes):
        if not 0 <= axis <= len(dims):
            return TensorShape(None)
        dims.insert(axis, 1)
    return TensorShape(dims)


def _bind_expand_reduced(op, ctx):
    axes = op.get_attr("axis")
    if axes is None:  # a full reduction gave a scalar: it broadcasts as it is
        return lambda g: g
    return lambda g: np.expand_dims(g, axes)


registry.register_op("ExpandReduced", _bind_expand_reduced, rows=batch_rows.expand_reduced)


@registry.register_gradient("ExpandReduced")
def _expand_reduced_grad(op, grad):
    return [make_op("Squeeze", [grad], grad.dtype, op.inputs[0].shape, attrs={"squeeze_dims": op.get_attr("axis")})]


@registry.register_gradient("Sum")
def _sum_grad(op, grad):
    return [broadcast_like(_keepdims_grad(op, grad), op.inputs[0])]


@registry.register_gradient("Mean")
def _mean_grad(op, grad):
    x = op.inputs[0]
    summed = broadcast_like(_keepdims_grad(op, grad), x)
    count = make_op("ReducedCount", [x, op.outputs[0]], grad.dtype, [])
    return [realdiv(summed, count)]


registry.register_op("ReducedCount", lambda op, ctx: _reduced_count(op.outputs[0].dtype.as_numpy_dtype),
                     rows=batch_rows.count_of_reduction)
registry.not_differentiable("ReducedCount")


def _reduced_count(dtype) -> Callable:
    return lambda x, y: np.asarray(x.size // max(y.size, 1), dtype=dtype)


def _extremum_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    y_kept = _keepdims_grad(op, y)
    g_kept = _keepdims_grad(op, grad)
    indicators = cast(equal(x, y_kept), grad.dtype)
    count = make_op("SumKeep", [indicators], grad.dtype, TensorShape(None), attrs={"axis": op.get_attr("axis")})
    return [multiply(realdiv(indicators, count), g_kept)]


registry.register_op("SumKeep", lambda op, ctx: _sum_keep(op.get_attr("axis")))
registry.not_differentiable("SumKeep")


def _sum_keep(axes):
    return lambda x: np.sum(x, axis=axes, keepdims=True)


registry.register_gradient("Max")(_extremum_grad)
registry.register_gradient("Min")(_extremum_grad)


def _prod_grad_kernel(axes):
    def kernel(x, g):
        """d prod / d x_i = product of the others, via exclusive cumulative products (zero-safe)."""
        ax = tuple(range(x.ndim)) if axes is None else axes
        rest = [i for i in range(x.ndim) if i not in ax]
        perm = rest + list(ax)
        xt = np.transpose(x, perm)
        lead = xt.shape[:len(rest)]
        flat = xt.reshape(lead + (-1,))
        ones = np.ones(lead + (1,), dtype=x.dtype)
        left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
        right = np.cumprod(np.concatenate([ones, flat[..., ::-1][..., :-1]], axis=-1), axis=-1)[..., ::-1]
        others = (left * right).reshape(xt.shape)
        gk = np.reshape(g, lead + (1,) * len(ax))
        return np.transpose((np.conj(others) if np.iscomplexobj(others) else others) * gk, np.argsort(perm))
    return kernel


registry.register_op("ProdGrad", lambda op, ctx: _prod_grad_kernel(op.get_attr("axis")))
registry.not_differentiable("ProdGrad")


@registry.register_gradient("Prod")
def _prod_grad(op, grad):
    x = op.inputs[0]
    return [make_op("ProdGrad", [x, grad], x.dtype, x.shape, attrs={"axis": op.get_attr("axis")})]


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                     name: str | None = None, reduction_indices: Any = None,
                     keep_dims: bool | None = None) -> Tensor:
    """log(sum(exp(x))) computed stably (max subtracted first)."""
    keep = bool(keepdims or keep_dims)
    axis = axis if axis is not None else reduction_indices
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis=axis, keepdims=True)
        finite_max = where(is_finite(raw_max), raw_max, zeros_like(raw_max))
        m = make_op("StopGradient", [finite_max], x.dtype, raw_max.shape)  # -inf rows give -inf, not NaN
        result = log(reduce_sum(exp(subtract(x, m)), axis=axis, keepdims=keep))
        if not keep:
            m = reshape(m, shape(result))
        return add(result, m, name=scope)


def count_nonzero(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                  dtype: Any = dtypes.int64, name: str | None = None) -> Tensor:
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        zero = np.zeros((), dtype=x.dtype.as_numpy_dtype) if x.dtype is not dtypes.string else b""
        return reduce_sum(cast(not_equal(x, zero), dtype), axis=axis, keepdims=keepdims)
