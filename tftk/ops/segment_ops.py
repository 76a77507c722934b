"""Segment reductions: segment_sum / segment_mean (sorted ids) and unsorted_segment_sum.

Kernels are the Numba scatter loops of tftk/kernels/segment.py; gradients gather the output
gradient back to each row's segment.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_value import constant_value
from tftk.ops.gather_ops import gather
from tftk.ops.op_builder import make_op

__all__ = ["segment_sum", "segment_mean", "unsorted_segment_sum"]


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


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Sum of the entries of `data` per id, ids in any order (shape a prefix of data's)."""
    d, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    n = convert_to_tensor(num_segments)
    if not ids.dtype.is_integer or not n.dtype.is_integer:
        raise TypeError("UnsortedSegmentSum: segment_ids and num_segments must be integers")
    dd, idims = d.shape.as_tuple(), ids.shape.as_tuple()
    nv = constant_value(n)
    shape = TensorShape(None)
    if dd is not None and idims is not None:
        if not TensorShape(dd[:len(idims)]).is_compatible_with(ids.shape):
            raise ValueError(f"UnsortedSegmentSum: segment_ids shape {ids.shape} must be a prefix of data "
                             f"shape {d.shape}")
        shape = TensorShape((None if nv is None else int(nv),) + dd[len(idims):])
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
