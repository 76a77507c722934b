"""Segment reductions: segment_* (sorted ids), unsorted_segment_* and sparse_segment_*.

Sum and mean use the Numba scatter loops of tftk/kernels/segment.py; max, min and prod use numpy's
ufunc.at. Gradients gather the output gradient back to each row's segment (max/min share it among
the rows that attain the extremum, as TF does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.gather_ops import gather, gather_nd
from tftk.ops.op_builder import make_op

__all__ = ["segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod", "unsorted_segment_sum",
           "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_mean",
           "unsorted_segment_sqrt_n", "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n"]


def _bind_segment(name: str):
    def factory(op, ctx):
        from tftk.kernels import segment
        return getattr(segment, name)
    return factory


registry.register_op("SegmentSum", _bind_segment("segment_sum"))
registry.register_op("SegmentMean", _bind_segment("segment_mean"))


def _bind_unsorted_segment_sum(op, ctx):
    from tftk.kernels.segment import unsorted_segment_sum as kernel
    return lambda data, ids, num: kernel(data, ids, int(num))


registry.register_op("UnsortedSegmentSum", _bind_unsorted_segment_sum)


def _segment_shape(data: Tensor, ids: Tensor, op_name: str) -> TensorShape:
    dd, idims = data.shape.as_tuple(), ids.shape.as_tuple()
    if not ids.dtype.is_integer:
        raise TypeError(f"{op_name}: segment_ids must be int32 or int64, got {ids.dtype.name}")
    if idims is not None and len(idims) != 1:
        raise ValueError(f"{op_name}: segment_ids must be a vector, got shape {ids.shape}")
    if dd is None:
        return TensorShape(None)
    if not dd:
        raise ValueError(f"{op_name}: data must have rank >= 1")
    if idims is not None and idims[0] is not None and dd[0] is not None and idims[0] != dd[0]:
        raise ValueError(f"{op_name}: segment_ids has {idims[0]} entries but data has {dd[0]} rows")
    static = constant_value(ids)
    rows = int(static[-1]) + 1 if static is not None and static.size else None
    return TensorShape((rows,) + dd[1:])


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Sum of the rows of `data` sharing a (sorted) segment id; output row s is segment s."""
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    return make_op("SegmentSum", [d, ids], d.dtype, _segment_shape(d, ids, "SegmentSum"), name)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Mean of the rows of `data` sharing a (sorted) segment id (0 for an empty segment)."""
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    return make_op("SegmentMean", [d, ids], d.dtype, _segment_shape(d, ids, "SegmentMean"), name)


def _unsorted_inputs(data: Any, segment_ids: Any, num_segments: Any, op_type: str,
                     name: str | None) -> tuple[Tensor, Tensor, Tensor, TensorShape]:
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    n = convert_to_tensor(num_segments)
    if not ids.dtype.is_integer or not n.dtype.is_integer:
        raise TypeError(f"{op_type}: segment_ids and num_segments must be integers")
    dd, idims = d.shape.as_tuple(), ids.shape.as_tuple()
    nv = constant_value(n)
    shape = TensorShape(None)
    if dd is not None and idims is not None:
        if not TensorShape(dd[:len(idims)]).is_compatible_with(ids.shape):
            raise ValueError(f"{op_type}: segment_ids shape {ids.shape} must be a prefix of data "
                             f"shape {d.shape}")
        shape = TensorShape((None if nv is None else int(nv),) + dd[len(idims):])
    return d, ids, n, shape


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Sum of the entries of `data` per id, ids in any order (shape a prefix of data's)."""
    d, ids, n, shape = _unsorted_inputs(data, segment_ids, num_segments, "UnsortedSegmentSum", name)
    return make_op("UnsortedSegmentSum", [d, ids, n], d.dtype, shape, name)


def _segment_mean_grad_kernel(grad, ids):
    counts = np.bincount(ids, minlength=grad.shape[0]).reshape((-1,) + (1,) * (grad.ndim - 1))
    return (grad / np.maximum(counts, 1)).astype(grad.dtype, copy=False)[ids]


def _gather_drop_negatives(grad, ids):
    out = grad[np.maximum(ids, 0)]
    out[ids < 0] = 0
    return out


registry.register_op("SegmentMeanGrad", lambda op, ctx: _segment_mean_grad_kernel)
registry.register_op("GatherDropNegatives", lambda op, ctx: _gather_drop_negatives)
registry.not_differentiable("SegmentMeanGrad", "GatherDropNegatives")


@registry.register_gradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return [gather(grad, op.inputs[1]), None]


@registry.register_gradient("SegmentMean")
def _segment_mean_grad(op, grad):
    data, ids = op.inputs
    return [make_op("SegmentMeanGrad", [grad, ids], grad.dtype, data.shape), None]


@registry.register_gradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    data, ids, _ = op.inputs
    return [make_op("GatherDropNegatives", [grad, ids], grad.dtype, data.shape), None, None]


# ---- max / min / prod ---------------------------------------------------------------------------------

_REDUCERS = {"Max": np.maximum, "Min": np.minimum, "Prod": np.multiply}


def _identity(kind: str, dtype: np.dtype) -> Any:
    if kind == "Prod":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if kind == "Max" else info.max  # TF's empty max is the lowest finite value


def _segment_reduce(kind: str, data: np.ndarray, ids: np.ndarray, num: int, empty_is_zero: bool) -> np.ndarray:
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    keep = flat_ids >= 0
    out = np.full((num,) + rows.shape[1:], _identity(kind, data.dtype), data.dtype)
    _REDUCERS[kind].at(out, flat_ids[keep], rows[keep])
    if empty_is_zero and kind != "Prod":
        out[np.bincount(flat_ids[keep], minlength=num)[:num] == 0] = 0
    return out


def _bind_segment_reduce(op, ctx):
    sorted_ids = op.type.startswith("Segment")
    kind = op.type.replace("UnsortedSegment", "").replace("Segment", "")

    def kernel(data, ids, *num):
        if sorted_ids:
            if ids.size and (np.diff(ids) < 0).any():
                raise ValueError("segment ids are not increasing")
            n = int(ids[-1]) + 1 if ids.size else 0
        else:
            n = int(num[0])
        if ids.size and ids.max() >= n:
            raise ValueError(f"segment_ids[{int(np.argmax(ids.reshape(-1) >= n))}] = {int(ids.max())} is out of "
                             f"range [0, {n})")
        return _segment_reduce(kind, data, ids, n, empty_is_zero=sorted_ids)  # sorted max/min: 0 if empty
    return kernel


def _extremum_grad_kernel(data, ids, out, grad):
    """Share each segment's gradient equally among the entries equal to its max (or min)."""
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    safe = np.maximum(flat_ids, 0)
    selected = (rows == out[safe]) & (flat_ids >= 0).reshape((-1,) + (1,) * (rows.ndim - 1))
    counts = np.zeros(out.shape, np.int64)
    np.add.at(counts, safe, selected)
    shared = grad / np.maximum(counts, 1)
    return np.where(selected, shared[safe], 0).astype(grad.dtype).reshape(data.shape)


def _prod_grad_kernel(data, ids, out, grad):
    """d prod / d x_i = product of the other entries of x_i's segment (exact with zeros)."""
    flat_ids = ids.reshape(-1)
    rows = data.reshape((flat_ids.size,) + data.shape[ids.ndim:])
    safe = np.maximum(flat_ids, 0)
    valid = (flat_ids >= 0).reshape((-1,) + (1,) * (rows.ndim - 1))
    zero = rows == 0
    zeros = np.zeros(out.shape, np.int64)
    np.add.at(zeros, safe, zero & valid)
    nonzero_prod = np.ones(out.shape, data.dtype)
    np.multiply.at(nonzero_prod, safe, np.where(zero | ~valid, 1, rows))
    others = np.where(zero, np.where(zeros[safe] == 1, nonzero_prod[safe], 0),
                      np.where(zeros[safe] == 0, nonzero_prod[safe] / np.where(zero, 1, rows), 0))
    result = np.where(valid, others * grad[safe], 0)
    return result.astype(grad.dtype).reshape(data.shape)


for _kind in _REDUCERS:
    registry.register_op(f"Segment{_kind}", _bind_segment_reduce)
    registry.register_op(f"UnsortedSegment{_kind}", _bind_segment_reduce)
registry.register_op("SegmentExtremumGrad", lambda op, ctx: _extremum_grad_kernel)
registry.register_op("SegmentProdGrad", lambda op, ctx: _prod_grad_kernel)
registry.not_differentiable("SegmentExtremumGrad", "SegmentProdGrad")


def _reduce_grad(op, grad):
    data, ids = op.inputs[:2]
    grad_type = "SegmentProdGrad" if op.type.endswith("Prod") else "SegmentExtremumGrad"
    return [make_op(grad_type, [data, ids, op.outputs[0], grad], grad.dtype, data.shape)] + \
        [None] * (len(op.inputs) - 1)


for _kind in _REDUCERS:
    registry.register_gradient(f"Segment{_kind}")(_reduce_grad)
    registry.register_gradient(f"UnsortedSegment{_kind}")(_reduce_grad)


def _sorted_reduction(kind: str):
    def reduce(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
        d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        return make_op(f"Segment{kind}", [d, ids], d.dtype, _segment_shape(d, ids, f"Segment{kind}"), name)
    reduce.__name__ = f"segment_{kind.lower()}"
    reduce.__doc__ = f"{kind} of the rows of `data` sharing a (sorted) segment id (0 for an empty segment)."
    return reduce


def _unsorted_reduction(kind: str):
    def reduce(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
        d, ids, n, shape = _unsorted_inputs(data, segment_ids, num_segments, f"UnsortedSegment{kind}", name)
        return make_op(f"UnsortedSegment{kind}", [d, ids, n], d.dtype, shape, name)
    reduce.__name__ = f"unsorted_segment_{kind.lower()}"
    reduce.__doc__ = (f"{kind} of the entries of `data` per id, ids in any order (an empty segment holds "
                      f"the reduction's identity).")
    return reduce


segment_max, segment_min, segment_prod = (_sorted_reduction(k) for k in ("Max", "Min", "Prod"))
unsorted_segment_max, unsorted_segment_min, unsorted_segment_prod = (
    _unsorted_reduction(k) for k in ("Max", "Min", "Prod"))


# ---- mean / sqrt_n and the sparse_segment_* forms -------------------------------------------------------

def _counts(data: Tensor, ids: Tensor, num_segments: Any) -> Tensor:
    """Rows per segment, shaped to divide the per-segment sums: [num, 1, ..., 1]."""
    ones = array_ops.ones_like(ids, dtype=data.dtype)
    counts = unsorted_segment_sum(ones, ids, num_segments)
    extra = (data.shape.ndims or 0) - (ids.shape.ndims or 0)
    return array_ops.reshape(math_ops.maximum(counts, 1), [-1] + [1] * extra)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Mean of the entries of `data` per id (0 for an empty segment)."""
    with name_scope(name, "UnsortedSegmentMean", [data, segment_ids]):
        d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        return unsorted_segment_sum(d, ids, num_segments) / _counts(d, ids, num_segments)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Sum of the entries of `data` per id divided by sqrt(number of entries)."""
    with name_scope(name, "UnsortedSegmentSqrtN", [data, segment_ids]):
        d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        return unsorted_segment_sum(d, ids, num_segments) / math_ops.sqrt(_counts(d, ids, num_segments))


def _sparse_segment(data: Any, indices: Any, segment_ids: Any, num_segments: Any, scale: str,
                    name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [data, indices, segment_ids]):
        rows = gather_nd(convert_to_tensor(data), array_ops.expand_dims(indices, -1))  # dense gradient, as TF
        ids = convert_to_tensor(segment_ids)
        if num_segments is None:
            num_segments = math_ops.add(reduction_ops.reduce_max(ids), 1)
        total = unsorted_segment_sum(rows, ids, num_segments)
        if scale == "sum":
            return total
        counts = _counts(rows, ids, num_segments)
        return total / (counts if scale == "mean" else math_ops.sqrt(counts))


def sparse_segment_sum(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                       num_segments: Any = None) -> Tensor:
    """segment_sum over the rows data[indices]."""
    return _sparse_segment(data, indices, segment_ids, num_segments, "sum", name, "SparseSegmentSum")


def sparse_segment_mean(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                        num_segments: Any = None) -> Tensor:
    """segment_mean over the rows data[indices]."""
    return _sparse_segment(data, indices, segment_ids, num_segments, "mean", name, "SparseSegmentMean")


def sparse_segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
                          num_segments: Any = None) -> Tensor:
    """Sum over the rows data[indices] per segment, divided by sqrt(rows in the segment)."""
    return _sparse_segment(data, indices, segment_ids, num_segments, "sqrt_n", name, "SparseSegmentSqrtN")
