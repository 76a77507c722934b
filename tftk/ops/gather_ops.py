"""Picking elements by index or by condition: gather, gather_nd, where (select)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops
from tftk.ops.constant_value import static_axis
from tftk.ops.op_builder import binary_inputs, make_op

__all__ = ["gather", "gather_nd", "where"]


def _index_error(op, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, op, message)



# ---- gather / gather_nd ---------------------------------------------------------------------

def _check_indices(indices: np.ndarray, limit: int, what: str) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = np.flatnonzero((indices < 0) | (indices >= limit))[0]
        pos = ", ".join(str(int(p)) for p in np.unravel_index(bad, indices.shape))
        raise _index_error(None, f"{what}[{pos}] = {indices.flat[bad]} is not in [0, {limit})")


def _bind_gather(op, ctx):
    axis = op.get_attr("axis")

    def kernel(params, indices):
        _check_indices(indices, params.shape[axis], "indices")
        return np.take(params, indices, axis=axis)
    return kernel


def _bind_gather_grad(op, ctx):
    axis = op.get_attr("axis")

    def kernel(params, indices, grad):
        from tftk.kernels.segment import scatter_add_rows
        k = indices.ndim
        moved = np.moveaxis(grad, list(builtins.range(axis, axis + k)), list(builtins.range(k)))
        out = np.zeros((params.shape[axis],) + params.shape[:axis] + params.shape[axis + 1:], grad.dtype)
        scatter_add_rows(out, indices, moved)
        return np.moveaxis(out, 0, axis)
    return kernel


registry.register_op("GatherV2", _bind_gather)
registry.register_op("GatherGrad", _bind_gather_grad)
registry.not_differentiable("GatherGrad")


def gather(params: Any, indices: Any, validate_indices: Any = None, name: str | None = None,
           axis: int = 0) -> Tensor:
    """Slices of `params` along `axis` at `indices`: shape params[:axis] + indices + params[axis+1:]."""
    p = params.value() if hasattr(params, "_ref") else convert_to_tensor(params)
    idx = convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"GatherV2 '{name or 'GatherV2'}': indices must be int32 or int64, got {idx.dtype.name}")
    pd, idims = p.shape.as_tuple(), idx.shape.as_tuple()
    axis = static_axis(axis, None if pd is None else len(pd), "GatherV2")
    if pd is None or idims is None:
        shape = TensorShape(None)
    else:
        shape = TensorShape(pd[:axis] + idims + pd[axis + 1:])
    return make_op("GatherV2", [p, idx], p.dtype, shape, name, {"axis": axis})


@registry.register_gradient("GatherV2")
def _gather_grad(op, grad):
    params, indices = op.inputs
    axis = op.get_attr("axis")
    if axis != 0:
        return [make_op("GatherGrad", [params, indices, grad], grad.dtype, params.shape,
                        attrs={"axis": axis}), None]
    pd = params.shape.as_tuple()
    if params.shape.is_fully_defined():
        from tftk.ops.constant_op import constant
        dense_shape = constant(np.asarray(pd, dtype=np.int32))
        values = array_ops.reshape(grad, [-1] + list(pd[1:]))
    else:
        dense_shape = array_ops.shape(params)
        values = array_ops.reshape(grad, array_ops.concat([[-1], dense_shape[1:]], 0))
    return [IndexedSlices(values, array_ops.reshape(indices, [-1]), dense_shape), None]


def _gather_nd_key(params: np.ndarray, indices: np.ndarray) -> tuple:
    depth = indices.shape[-1]
    if depth > params.ndim:  # only known at run time when the graph left the index depth open
        raise InvalidArgumentError(f"GatherNd: index innermost dimension length {depth} must be <= params "
                                   f"rank {params.ndim}")
    for i in np.arange(depth):
        _check_indices(indices[..., i], params.shape[i], f"indices[..., {i}]")
    return tuple(np.moveaxis(indices, -1, 0))


def _gather_nd_kernel(params, indices):
    return params[_gather_nd_key(params, indices)]


def _gather_nd_grad_kernel(params, indices, grad):
    out = np.zeros(params.shape, dtype=grad.dtype)
    np.add.at(out, _gather_nd_key(params, indices), grad)
    return out


registry.register_op("GatherNd", lambda op, ctx: _gather_nd_kernel)
registry.register_op("GatherNdGrad", lambda op, ctx: _gather_nd_grad_kernel)
registry.not_differentiable("GatherNdGrad")


def gather_nd(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """`params[indices[..., 0], indices[..., 1], ...]`: the last axis of `indices` indexes params."""
    p, idx = convert_to_tensor(params), convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"GatherNd: indices must be int32 or int64, got {idx.dtype.name}")
    pd, idims = p.shape.as_tuple(), idx.shape.as_tuple()
    shape = TensorShape(None)
    if idims is not None and not idims:
        raise ValueError(f"GatherNd '{name or 'GatherNd'}': indices must have rank >= 1, got a scalar")
    if pd is not None and idims is not None and idims[-1] is not None:
        if idims[-1] > len(pd):
            raise ValueError(f"GatherNd '{name or 'GatherNd'}': index depth {idims[-1]} exceeds the rank "
                             f"of params (shape {p.shape})")
        shape = TensorShape(idims[:-1] + pd[idims[-1]:])
    return make_op("GatherNd", [p, idx], p.dtype, shape, name)


@registry.register_gradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return [make_op("GatherNdGrad", [params, indices, grad], grad.dtype, params.shape), None]



# ---- where / select ---------------------------------------------------------------------------

def _where_coords(condition):
    return np.argwhere(condition).astype(np.int64)


def _select(cond, x, y):
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise ValueError(f"condition of shape {cond.shape} must match the first dimension of x {x.shape}")
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    elif cond.ndim and cond.shape != x.shape:
        raise ValueError(f"condition shape {cond.shape} must equal the shape of x {x.shape}")
    return np.where(cond, x, y)


registry.register_op("Where", lambda op, ctx: _where_coords)
registry.register_op("Select", lambda op, ctx: _select)
registry.not_differentiable("Where")


@registry.register_gradient("Select")
def _select_grad(op, grad):
    c = op.inputs[0]
    zeros = array_ops.zeros_like(grad)
    return [None, where(c, grad, zeros), where(c, zeros, grad)]


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """One argument: int64 coordinates of True entries. Three: elements of x where true, else y."""
    c = convert_to_tensor(condition)
    if c.dtype is not dtypes.bool:
        raise TypeError(f"Where: condition must be bool, got {c.dtype.name}")
    if x is None and y is None:
        return make_op("Where", [c], dtypes.int64, [None, c.shape.ndims], name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    x, y = binary_inputs(x, y, "Select")
    if not x.shape.is_compatible_with(y.shape):
        raise ValueError(f"Select '{name or 'Select'}': x and y must have the same shape, got {x.shape} "
                         f"and {y.shape}")
    shape = x.shape.merge_with(y.shape)
    cr, xr = c.shape.ndims, shape.ndims
    if cr is not None and xr is not None and cr != 0 and cr != xr and not (cr == 1 and xr > 1):
        raise ValueError(f"Select '{name or 'Select'}': condition of shape {c.shape} must be a scalar, a "
                         f"vector matching x's first dimension, or x's shape {shape}")
    if cr == 1 and xr is not None and xr > 1 and not c.shape.is_compatible_with(shape.as_list()[:1]):
        raise ValueError(f"Select '{name or 'Select'}': condition of shape {c.shape} must match the first "
                         f"dimension of x (shape {shape})")
    if cr is not None and xr is not None and cr == xr and not c.shape.is_compatible_with(shape):
        raise ValueError(f"Select '{name or 'Select'}': condition shape {c.shape} does not match {shape}")
    return make_op("Select", [c, x, y], x.dtype, shape, name)


