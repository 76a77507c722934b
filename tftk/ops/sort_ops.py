"""Sorting, searching and counting: sort, argsort, searchsorted, unique_with_counts, setdiff1d,
histogram_fixed_width(_bins), confusion_matrix, is_non_decreasing, is_strictly_increasing.

Ties keep the lower index first, as TF's top_k-based sort gives them. Only `sort` is
differentiable: its gradient puts each output gradient back at the position its value came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.constant_value import constant_value

__all__ = ["sort", "argsort", "searchsorted", "unique_with_counts", "setdiff1d", "histogram_fixed_width",
           "histogram_fixed_width_bins", "confusion_matrix", "is_non_decreasing", "is_strictly_increasing"]


def _order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    return np.argsort(-x if descending else x, axis=axis, kind="stable")


def _sort(x: np.ndarray, axis: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    order = _order(x, axis, descending)
    return np.take_along_axis(x, order, axis=axis), order


def _unsort(grad: np.ndarray, order: np.ndarray, axis: int) -> np.ndarray:
    out = np.zeros_like(grad)
    np.put_along_axis(out, order, grad, axis=axis)
    return out


register_array_op("Sort", _sort, differentiable=True)
register_array_op("ArgSort", lambda x, axis, descending: _order(x, axis, descending))
register_array_op("SortGrad", _unsort)


@registry.register_gradient("Sort")
def _sort_grad(op, grad, _order_grad):
    return [array_op("SortGrad", [grad, op.outputs[1]], [(grad.dtype, grad.shape)],
                     attrs={"axis": op.get_attr("axis")})]


def _direction(direction: str) -> bool:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f'Unknown direction: {direction!r} (use "ASCENDING" or "DESCENDING")')
    return direction == "DESCENDING"


def _axis(x: Tensor, axis: int, what: str) -> int:
    rank = x.shape.ndims
    if rank is None:
        if axis < 0:
            raise ValueError(f"{what}: a negative axis needs an input of known rank")
        return axis
    if not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis} is out of bounds for a tensor of rank {rank}")
    return axis % rank


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """`values` sorted along `axis` (differentiable)."""
    with name_scope(name, "sort", [values]):
        x = convert_to_tensor(values, name="values")
        attrs = {"axis": _axis(x, axis, "sort"), "descending": _direction(direction)}
        return array_op("Sort", [x], [(x.dtype, x.shape), (dtypes.int32, x.shape)], attrs=attrs)[0]


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """The int32 indices that sort `values` along `axis` (ties: lower index first, so always stable)."""
    with name_scope(name, "argsort", [values]):
        x = convert_to_tensor(values, name="values")
        attrs = {"axis": _axis(x, axis, "argsort"), "descending": _direction(direction)}
        return array_op("ArgSort", [x], [(dtypes.int32, x.shape)], attrs=attrs)


def _searchsorted(sequence: np.ndarray, values: np.ndarray, side: str) -> np.ndarray:
    if sequence.shape[:-1] != values.shape[:-1]:
        raise ValueError(f"searchsorted: leading dimensions of sorted_sequence {list(sequence.shape)} and "
                         f"values {list(values.shape)} must match")
    rows_s = sequence.reshape(-1, sequence.shape[-1])
    rows_v = values.reshape(-1, values.shape[-1])
    out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(rows_s, rows_v)]) if len(rows_v) else \
        np.zeros(rows_v.shape, np.int64)
    return out.reshape(values.shape)


register_array_op("SearchSorted", _searchsorted)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = dtypes.int32,
                 name: str | None = None) -> Tensor:
    """Where each of `values` would go in its row of `sorted_sequence` (side 'left' or 'right')."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    with name_scope(name, "searchsorted", [sorted_sequence, values]):
        s = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        v = convert_to_tensor(values, dtype=s.dtype, name="values")
        if s.shape.ndims == 0 or v.shape.ndims == 0:
            raise ValueError("searchsorted: sorted_sequence and values must have rank >= 1")
        op_type = "LowerBound" if side == "left" else "UpperBound"
        return array_op("SearchSorted", [s, v], [(dtypes.as_dtype(out_type), v.shape)], op_type,
                        attrs={"side": side})


def _unique_with_counts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")  # first-occurrence order, as TF
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return values[order], rank[inverse.reshape(-1)], counts[order]


register_array_op("UniqueWithCounts", _unique_with_counts)


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(y, idx, count): distinct values of a vector in first-seen order, x == y[idx], occurrences."""
    t = convert_to_tensor(x, name="x")
    if t.shape.ndims not in (None, 1):
        raise ValueError(f"unique_with_counts: x must be a vector, got shape {t.shape}")
    index = dtypes.as_dtype(out_idx)
    y, idx, count = array_op("UniqueWithCounts", [t], [(t.dtype, [None]), (index, t.shape), (index, [None])],
                             name)
    return y, idx, count


def _setdiff1d(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = np.flatnonzero(~np.isin(x, y))
    return x[keep], keep


register_array_op("ListDiff", _setdiff1d)


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(out, idx): the entries of vector x not in y, in order (duplicates kept), and their positions."""
    a = convert_to_tensor(x, name="x")
    b = convert_to_tensor(y, dtype=a.dtype, name="y")
    for t, what in ((a, "x"), (b, "y")):
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"setdiff1d: {what} must be a vector, got shape {t.shape}")
    out, idx = array_op("ListDiff", [a, b], [(a.dtype, [None]), (dtypes.as_dtype(index_dtype), [None])], name)
    return out, idx


def _histogram_bins(values: np.ndarray, value_range: np.ndarray, nbins: np.ndarray) -> np.ndarray:
    n = int(nbins)
    if n <= 0:
        raise ValueError(f"histogram: nbins must be positive, got {n}")
    lo, hi = value_range.astype(np.float64)
    if hi <= lo:
        raise ValueError(f"histogram: value_range must be increasing, got {value_range.tolist()}")
    scaled = (values.astype(np.float64) - lo) / (hi - lo)
    return np.clip(np.floor(scaled * n), 0, n - 1).astype(np.int64)


register_array_op("HistogramBins", _histogram_bins)
register_array_op("HistogramFixedWidth",
                  lambda v, r, n: np.bincount(_histogram_bins(v, r, n).reshape(-1), minlength=int(n)))


def _histogram_inputs(values: Any, value_range: Any, nbins: Any, range_dtype: bool) -> list[Tensor]:
    """values, value_range (of values' dtype when `range_dtype`, as TF's histogram converts it), nbins."""
    v = convert_to_tensor(values, name="values")
    r = convert_to_tensor(value_range, dtype=v.dtype if range_dtype else None, name="value_range")
    if r.dtype is not v.dtype:
        raise TypeError(f"histogram_fixed_width: value_range has type {r.dtype.name} that does not match "
                        f"type {v.dtype.name} of values")
    return [v, r,
            convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")]


def histogram_fixed_width(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32,
                          name: str | None = None) -> Tensor:
    """Counts of `values` in `nbins` equal bins over value_range (outliers go to the end bins)."""
    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        inputs = _histogram_inputs(values, value_range, nbins, True)
        n = constant_value(inputs[2])
        return array_op("HistogramFixedWidth", inputs, [(dtypes.as_dtype(dtype), [None if n is None else int(n)])],
                        scope)


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32,
                               name: str | None = None) -> Tensor:
    """The bin index of each of `values` (same shape), as histogram_fixed_width counts them."""
    with name_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        inputs = _histogram_inputs(values, value_range, nbins, False)
        return array_op("HistogramBins", inputs, [(dtypes.as_dtype(dtype), inputs[0].shape)])


def _confusion(labels: np.ndarray, predictions: np.ndarray, weights: np.ndarray, num_classes: np.ndarray):
    n = int(num_classes) if num_classes.size else int(max(labels.max(initial=-1), predictions.max(initial=-1))) + 1
    for what, v in (("labels", labels), ("predictions", predictions)):
        if v.size and (v.min() < 0 or v.max() >= n):
            raise ValueError(f"confusion_matrix: {what} must be in [0, {n}), got {v.tolist()}")
    out = np.zeros((n, n), np.float64)
    np.add.at(out, (labels.astype(np.int64), predictions.astype(np.int64)), weights if weights.size else 1)
    return out


register_array_op("ConfusionMatrix", _confusion)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, dtype: Any = dtypes.int32,
                     name: str | None = None, weights: Any = None) -> Tensor:
    """[num_classes, num_classes] counts (or summed weights) of (label, prediction) pairs."""
    with name_scope(name, "confusion_matrix", [labels, predictions, num_classes, weights]):
        lab = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        pred = math_ops.cast(convert_to_tensor(predictions, name="predictions"), dtypes.int64)
        out = dtypes.as_dtype(dtype)
        w = array_ops.zeros([0], out) if weights is None else math_ops.cast(convert_to_tensor(weights), out)
        n = array_ops.zeros([0], dtypes.int64) if num_classes is None else \
            math_ops.cast(convert_to_tensor(num_classes), dtypes.int64)
        static = num_classes if isinstance(num_classes, int) else None
        return array_op("ConfusionMatrix", [lab, pred, w, n], [(out, [static, static])])


def _monotone(x: Any, strict: bool, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [x]):
        flat = array_ops.reshape(convert_to_tensor(x, name="x"), [-1])
        left, right = flat[:-1], flat[1:]
        compare = math_ops.less if strict else math_ops.less_equal
        return reduction_ops.reduce_all(compare(left, right))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether x[i] <= x[i + 1] over x flattened in row-major order."""
    return _monotone(x, False, name, "is_non_decreasing")


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether x[i] < x[i + 1] over x flattened in row-major order."""
    return _monotone(x, True, name, "is_strictly_increasing")

