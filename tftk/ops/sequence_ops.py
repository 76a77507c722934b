"""Ops that make or relabel integer sequences: range, linspace, sequence_mask, one_hot, unique,
invert_permutation."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import math_ops, reduction_ops
from tftk.ops.constant_value import constant_value, static_ints
from tftk.ops.op_builder import make_multi_op, make_op, op_scope

__all__ = ["range", "linspace", "lin_space", "sequence_mask", "one_hot", "unique", "invert_permutation"]



# ---- range / linspace ---------------------------------------------------------------------------

def _bind_range(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(start, limit, delta):
        if delta == 0:
            raise ValueError("Requires delta != 0")
        return np.arange(start, limit, delta, dtype=npd)
    return kernel


registry.register_op("Range", _bind_range)
registry.not_differentiable("Range")


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Tensor:  # noqa: A001
    """[start, start + delta, ...) up to `limit` (exclusive); range(n) counts from 0."""
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if dtype is not None:
        out = dtypes.as_dtype(dtype)
    else:
        kinds = [v.dtype if isinstance(v, Tensor) else convert_to_tensor(v).dtype for v in values]
        order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
        out = max(kinds, key=lambda d: order.index(d) if d in order else 0)
    tensors = [v if isinstance(v, Tensor) else convert_to_tensor(np.asarray(v, dtype=out.as_numpy_dtype))
               for v in values]
    tensors = [math_ops.cast(t, out) for t in tensors]
    statics = [constant_value(t) for t in tensors]
    length = None
    if all(s is not None for s in statics):
        s0, s1, sd = (s.item() for s in statics)
        if sd == 0:
            raise ValueError(f"Range '{name}': delta must not be 0")
        length = max(0, int(np.ceil((s1 - s0) / sd)))
    return make_op("Range", tensors, out, [length], name)


def _bind_linspace(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype
    return lambda start, stop, num: np.linspace(start, stop, int(num), dtype=npd)


registry.register_op("LinSpace", _bind_linspace)
registry.not_differentiable("LinSpace")


def linspace(start: Any, stop: Any, num: Any, name: str | None = None) -> Tensor:
    """`num` evenly spaced values from start to stop inclusive (float32/float64)."""
    s = convert_to_tensor(start)
    if not s.dtype.is_floating:
        raise TypeError(f"LinSpace: start must be float32 or float64, got {s.dtype.name}")
    e = convert_to_tensor(stop, dtype=s.dtype)
    n = convert_to_tensor(num)
    if not n.dtype.is_integer:
        raise TypeError(f"LinSpace: num must be an integer, got {n.dtype.name}")
    nv = constant_value(n)
    if nv is not None and int(nv) <= 0:
        raise ValueError(f"LinSpace: num must be positive, got {int(nv)}")
    return make_op("LinSpace", [s, e, n], s.dtype, [None if nv is None else int(nv)], name)


lin_space = linspace


# ---- sequence_mask / broadcast_to / unique / invert_permutation / shape_n / meshgrid ----------

def _bind_sequence_mask(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(lengths, maxlen):
        return (np.arange(int(maxlen)) < lengths[..., None]).astype(npd, copy=False)
    return kernel


registry.register_op("SequenceMask", _bind_sequence_mask)
registry.not_differentiable("SequenceMask")


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None) -> Tensor:
    """mask[i..., j] = j < lengths[i...]; maxlen defaults to max(lengths)."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lens = convert_to_tensor(lengths)
        if not lens.dtype.is_integer:
            raise TypeError(f"sequence_mask: lengths must be integers, got {lens.dtype.name}")
        m = reduction_ops.reduce_max(lens) if maxlen is None else math_ops.cast(convert_to_tensor(maxlen), lens.dtype)
        mv = constant_value(m)
        dims = lens.shape.as_tuple()
        shape = TensorShape(None) if dims is None else TensorShape(dims + (None if mv is None else int(mv),))
        return make_op("SequenceMask", [lens, m], dtypes.as_dtype(dtype), shape)




# ---- one_hot / unique / invert_permutation ------------------------------------------------------

def _one_hot(indices: np.ndarray, depth: int, on: np.ndarray, off: np.ndarray, axis: int, npd: Any) -> np.ndarray:
    hot = np.expand_dims(indices, axis) == np.arange(depth).reshape((-1,) + (1,) * (indices.ndim - axis))
    return np.where(hot, on, off).astype(npd, copy=False)


def _bind_one_hot(op, ctx):
    axis, depth = op.get_attr("axis"), op.get_attr("depth")
    npd = op.outputs[0].dtype.as_numpy_dtype
    return lambda indices, on, off: _one_hot(indices, depth, on, off, axis, npd)


def _bind_one_hot_dynamic(op, ctx):
    """OneHotDynamic(indices, depth, on, off): the depth a scalar known at run time (TF's OneHot's inputs)."""
    axis, npd = op.get_attr("axis"), op.outputs[0].dtype.as_numpy_dtype

    def kernel(indices, depth, on, off):
        if int(depth) < 0:
            from tftk.framework import errors
            raise errors.InvalidArgumentError(None, op, f"depth must be non-negative, got {int(depth)}")
        return _one_hot(indices, int(depth), on, off, axis, npd)
    return kernel


# a new axis (never axis 0 of rows: the constructor puts it last unless asked) for each index
registry.register_op("OneHot", _bind_one_hot, rows=batch_rows.along_axis(extra_rank=1, weights=(1, 2)))
registry.register_op("OneHotDynamic", _bind_one_hot_dynamic, rows=batch_rows.along_axis(extra_rank=1, weights=(1, 2, 3)))
registry.not_differentiable("OneHot", "OneHotDynamic")


def one_hot(indices: Any, depth: int, on_value: Any = None, off_value: Any = None, axis: int | None = None,
            dtype: Any = None, name: str | None = None) -> Tensor:
    """A one-hot tensor: a new axis of size `depth` (last unless `axis`) holding on/off values."""
    idx = convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"OneHot: indices must be integers, got {idx.dtype.name}")
    run_time_depth = None
    if isinstance(depth, Tensor) and constant_value(depth) is None:
        run_time_depth, depth = math_ops.cast(depth, dtypes.int32), None
    else:
        depth = int(static_ints(depth, "depth", "OneHot")[0])
        if depth < 0:
            raise ValueError(f"OneHot: depth must be non-negative, got {depth}")
    given = [v for v in (on_value, off_value) if v is not None]
    if dtype is not None:
        out = dtypes.as_dtype(dtype)
    elif given:
        out = convert_to_tensor(given[0]).dtype if isinstance(given[0], Tensor) else \
            dtypes.as_dtype(np.asarray(given[0]).dtype if isinstance(given[0], np.ndarray) else
                            convert_to_tensor(given[0]).dtype)
    else:
        out = dtypes.float32
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=out)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=out)
    dims = idx.shape.as_tuple()
    rank = None if dims is None else len(dims)
    if axis is None or axis == -1:
        axis = rank if rank is not None else -1
    if axis == -1:
        raise ValueError("OneHot: axis=-1 needs indices of known rank")
    if rank is not None and not 0 <= axis <= rank:
        raise ValueError(f"OneHot: axis {axis} must be in [-1, {rank}]")
    shape = TensorShape(None) if dims is None else TensorShape(dims[:axis] + (depth,) + dims[axis:])
    with op_scope(name, "one_hot", [idx]) as scope:  # TF names the op after its scope: 'one_hot'
        if run_time_depth is not None:
            return make_op("OneHotDynamic", [idx, run_time_depth, on, off], out, shape, scope, {"axis": axis})
        return make_op("OneHot", [idx, on, off], out, shape, scope, {"axis": axis, "depth": depth})




def _bind_unique(op, ctx):
    idx_type = op.outputs[1].dtype.as_numpy_dtype

    def kernel(x):
        values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # TF keeps first-occurrence order
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return values[order], rank[inverse.reshape(-1)].astype(idx_type)
    return kernel


registry.register_op("Unique", _bind_unique)
registry.not_differentiable("Unique")


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(y, idx): the distinct values of a vector in first-seen order, and x == y[idx]."""
    t = convert_to_tensor(x)
    if t.shape.ndims is not None and t.shape.ndims != 1:
        raise ValueError(f"Unique: x must be a vector, got shape {t.shape}")
    op = make_multi_op("Unique", [t], [(t.dtype, [None]), (dtypes.as_dtype(out_idx), t.shape)], name)
    return op.outputs[0], op.outputs[1]


def _invert_permutation(x):
    if sorted(x.tolist()) != list(np.arange(x.size)):
        raise ValueError(f"{x.tolist()} is not a permutation of 0..{x.size - 1}")
    out = np.empty_like(x)
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


registry.register_op("InvertPermutation", lambda op, ctx: _invert_permutation)
registry.not_differentiable("InvertPermutation")


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """y[x[i]] = i for a permutation vector x."""
    t = convert_to_tensor(x)
    if not t.dtype.is_integer or t.shape.ndims not in (None, 1):
        raise ValueError(f"InvertPermutation: x must be an integer vector, got {t.dtype.name} {t.shape}")
    return make_op("InvertPermutation", [t], t.dtype, t.shape, name)


