"""Placing values by index: scatter_nd, tensor_scatter_*, dynamic_partition, dynamic_stitch.

The inverse family of gather_ops: each op writes rows or elements of `updates` at the positions
named by `indices` (the last axis of an n-d index addresses the output's leading dimensions), and
its gradient reads them back with gather / gather_nd.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.gather_ops import gather, gather_nd
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.ops.sequence_ops import range as range_op

__all__ = ["scatter_nd", "tensor_scatter_update", "tensor_scatter_add", "tensor_scatter_sub",
           "dynamic_partition", "dynamic_stitch"]


def nd_key(shape: tuple, indices: np.ndarray, what: str = "indices") -> tuple:
    """The numpy index of the positions that an [..., depth] index array names in `shape`."""
    depth = indices.shape[-1]
    if depth > len(shape):
        raise InvalidArgumentError(None, None, f"{what} has depth {depth} > rank {len(shape)} of the output")
    for i in range(depth):
        col = indices[..., i]
        bad = (col < 0) | (col >= shape[i])
        if bad.any():
            pos = tuple(int(p) for p in np.argwhere(bad)[0])
            raise InvalidArgumentError(None, None, f"{what}{list(pos)} = {indices[pos].tolist()} does not "
                                                   f"index into shape {list(shape)}")
    return tuple(np.moveaxis(indices, -1, 0))


def _nd_shape_check(indices: Tensor, updates: Tensor, shape: Sequence | None, op_type: str, name: str | None) -> None:
    if not indices.dtype.is_integer:
        raise TypeError(f"{op_type} '{name or op_type}': indices must be int32 or int64, got {indices.dtype.name}")
    idims, udims = indices.shape.as_tuple(), updates.shape.as_tuple()
    if idims is None or udims is None or shape is None or idims[-1] is None:
        return
    depth = idims[-1]
    expected = TensorShape(list(idims[:-1]) + list(shape[depth:]))
    if depth > len(shape) or not expected.is_compatible_with(updates.shape):
        raise ValueError(f"{op_type} '{name or op_type}': updates of shape {updates.shape} do not fit indices of "
                         f"shape {indices.shape} into shape {list(shape)} (expected updates {expected})")


# ---- scatter_nd / tensor_scatter_* ----------------------------------------------------------------

def _scatter_nd_kernel(indices, updates, shape):
    out = np.zeros(tuple(int(d) for d in shape), updates.dtype)
    np.add.at(out, nd_key(out.shape, indices), updates)
    return out


_TENSOR_SCATTER = {"update": "TensorScatterUpdate", "add": "TensorScatterAdd", "sub": "TensorScatterSub"}
_MODE = {op_type: mode for mode, op_type in _TENSOR_SCATTER.items()}


def _bind_tensor_scatter(op, ctx):
    mode = _MODE[op.type]

    def kernel(tensor, indices, updates):
        out = tensor.copy()
        key = nd_key(out.shape, indices)
        if mode == "update":
            out[key] = updates
        elif mode == "add":
            np.add.at(out, key, updates)
        else:
            np.subtract.at(out, key, updates)
        return out
    return kernel


registry.register_op("ScatterNd", lambda op, ctx: _scatter_nd_kernel)
for _op_type in _TENSOR_SCATTER.values():
    registry.register_op(_op_type, _bind_tensor_scatter)


@registry.register_gradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return [None, gather_nd(grad, op.inputs[0]), None]


def _tensor_scatter_grad(op, grad):
    tensor, indices, updates = op.inputs
    mode = _MODE[op.type]
    read = gather_nd(grad, indices)
    if mode == "update":
        return [_tensor_scatter("update", grad, indices, array_ops.zeros_like(updates), None), None, read]
    return [grad, None, read if mode == "add" else math_ops.negative(read)]


for _op_type in _TENSOR_SCATTER.values():
    registry.register_gradient(_op_type)(_tensor_scatter_grad)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """Zeros of `shape` with `updates` added at `indices` (duplicates accumulate)."""
    idx, upd = convert_to_tensor(indices), convert_to_tensor(updates)
    sh = convert_to_tensor(shape, dtype=idx.dtype)
    static = constant_value(sh)
    dims = None if static is None else [int(d) for d in np.atleast_1d(static)]
    _nd_shape_check(idx, upd, dims, "ScatterNd", name)
    return make_op("ScatterNd", [idx, upd, sh], upd.dtype, TensorShape(dims) if dims is not None else
                   TensorShape(None), name)


def _tensor_scatter(mode: str, tensor: Any, indices: Any, updates: Any, name: str | None) -> Tensor:
    t = convert_to_tensor(tensor)
    idx = convert_to_tensor(indices)
    upd = convert_to_tensor(updates, dtype=t.dtype)
    op_type = _TENSOR_SCATTER[mode]
    _nd_shape_check(idx, upd, t.shape.as_list() if t.shape.ndims is not None else None, op_type, name)
    return make_op(op_type, [t, idx, upd], t.dtype, t.shape, name)


def tensor_scatter_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with `updates` written at `indices`."""
    return _tensor_scatter("update", tensor, indices, updates, name)


def tensor_scatter_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with `updates` added at `indices` (duplicates accumulate)."""
    return _tensor_scatter("add", tensor, indices, updates, name)


def tensor_scatter_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of `tensor` with `updates` subtracted at `indices` (duplicates accumulate)."""
    return _tensor_scatter("sub", tensor, indices, updates, name)


# ---- dynamic_partition / dynamic_stitch -------------------------------------------------------------

def _bind_dynamic_partition(op, ctx):
    n = op.get_attr("num_partitions")

    def kernel(data, partitions):
        if data.shape[:partitions.ndim] != partitions.shape:
            raise InvalidArgumentError(None, op, f"data.shape {list(data.shape)} must start with partitions.shape "
                                                 f"{list(partitions.shape)}")
        bad = (partitions < 0) | (partitions >= n)
        if bad.any():
            pos = tuple(int(p) for p in np.argwhere(bad)[0])
            raise InvalidArgumentError(None, op, f"partitions{list(pos)} = {int(partitions[pos])} is not in "
                                                 f"[0, {n})")
        flat = data.reshape((-1,) + data.shape[partitions.ndim:])
        p = partitions.reshape(-1)
        parts = tuple(flat[p == i] for i in range(n))
        return parts if n > 1 else parts[0]
    return kernel


def _bind_dynamic_stitch(op, ctx):
    n = op.get_attr("n")

    def kernel(*args):
        indices, data = args[:n], args[n:]
        size = max((int(i.max()) + 1 for i in indices if i.size), default=0)
        element = data[0].shape[indices[0].ndim:]
        out = np.zeros((size,) + element, data[0].dtype)
        written = np.zeros(size, bool)
        for idx, d in zip(indices, data):
            if d.shape != idx.shape + element:
                raise InvalidArgumentError(None, op, f"data shape {list(d.shape)} must be indices shape "
                                                     f"{list(idx.shape)} + {list(element)}")
            out[idx.reshape(-1)] = d.reshape((-1,) + element)
            written[idx.reshape(-1)] = True
        if not written.all():
            raise InvalidArgumentError(None, op, f"dynamic_stitch: index {int(np.flatnonzero(~written)[0])} is "
                                                 f"missing from indices (every index below {size} must appear)")
        return out
    return kernel


registry.register_op("DynamicPartition", _bind_dynamic_partition)
registry.register_op("DynamicStitch", _bind_dynamic_stitch)


@registry.register_gradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    data, partitions = op.inputs
    n = op.get_attr("num_partitions")
    positions = array_ops.reshape(range_op(array_ops.size(partitions)), array_ops.shape(partitions))
    position_parts = dynamic_partition(positions, partitions, n)
    stitched = dynamic_stitch(position_parts, list(grads))
    return [array_ops.reshape_like(stitched, data), None]


@registry.register_gradient("DynamicStitch")
def _dynamic_stitch_grad(op, grad):
    n = op.get_attr("n")
    indices = op.inputs[:n]
    return [None] * n + [gather(grad, i) for i in indices]


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> list[Tensor]:
    """Split `data` into `num_partitions` tensors: out[i] holds the slices where partitions == i."""
    d = convert_to_tensor(data)
    p = convert_to_tensor(partitions)
    if p.dtype is not dtypes.int32:
        raise TypeError(f"DynamicPartition: partitions must be int32, got {p.dtype.name}")
    n = int(num_partitions)
    if n < 1:
        raise ValueError(f"DynamicPartition: num_partitions must be at least 1, got {n}")
    dd, pd = d.shape.as_tuple(), p.shape.as_tuple()
    if dd is not None and pd is not None:
        if not TensorShape(dd[:len(pd)]).is_compatible_with(p.shape):
            raise ValueError(f"DynamicPartition: data shape {d.shape} must start with partitions shape {p.shape}")
        shape = TensorShape((None,) + dd[len(pd):])
    else:
        shape = TensorShape(None)
    op = make_multi_op("DynamicPartition", [d, p], [(d.dtype, shape)] * n, name, {"num_partitions": n})
    return list(op.outputs)


def dynamic_stitch(indices: Sequence[Any], data: Sequence[Any], name: str | None = None) -> Tensor:
    """Interleave: merged[indices[m][i, ...]] = data[m][i, ...] (later writes win)."""
    idx = [convert_to_tensor(i, dtype=dtypes.int32) for i in indices]
    vals = [convert_to_tensor(v) for v in data]
    if len(idx) != len(vals) or not idx:
        raise ValueError(f"DynamicStitch: needs as many data tensors as index tensors (and at least one), got "
                         f"{len(idx)} and {len(vals)}")
    if any(v.dtype is not vals[0].dtype for v in vals):
        raise TypeError(f"DynamicStitch: data tensors must share a dtype, got {[v.dtype.name for v in vals]}")
    element = TensorShape(None)
    i0, v0 = idx[0].shape, vals[0].shape
    if i0.ndims is not None and v0.ndims is not None:
        element = TensorShape(v0.as_list()[i0.ndims:])
    statics = [constant_value(i) for i in idx]
    size = None
    if all(s is not None for s in statics):
        size = max((int(s.max()) + 1 for s in statics if s.size), default=0)
    shape = TensorShape([size]).concatenate(element)
    return make_op("DynamicStitch", idx + vals, vals[0].dtype, shape, name, {"n": len(idx)})
