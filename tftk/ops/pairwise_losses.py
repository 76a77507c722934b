"""tf.losses.cosine_distance and tf.losses.mean_pairwise_squared_error, computed in float32 as TF does."""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, add_to_collection, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.gather_ops import where
from tftk.ops.losses import Reduction, compute_weighted_loss
from tftk.ops.safe_math_ops import divide_no_nan

__all__ = ["cosine_distance", "mean_pairwise_squared_error"]


def _float32_pair(labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    p = math_ops.cast(predictions, dtypes.float32)
    t = math_ops.cast(labels, dtypes.float32)
    p.shape.assert_is_compatible_with(t.shape)
    return t, p


def cosine_distance(labels: Any, predictions: Any, axis: int | None = None, weights: Any = 1.0,
                    scope: str | None = None, loss_collection: str = GraphKeys.LOSSES,
                    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS, dim: int | None = None) -> Tensor:
    """1 - sum(labels * predictions) along `axis` (unit-normalised inputs), weighted and reduced."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify 'axis'.")
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        t, p = _float32_pair(labels, predictions)
        losses = 1 - reduction_ops.reduce_sum(p * t, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                                loss_collection: str = GraphKeys.LOSSES) -> Tensor:
    """The mean over pairs of elements (within each batch entry) of the squared difference between
    their differences in predictions and in labels; weights per batch entry."""
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        w = math_ops.cast(weights, dtypes.float32)
        t, p = _float32_pair(labels, predictions)
        diffs = p - t
        if diffs.shape.ndims is None:
            raise ValueError("mean_pairwise_squared_error needs predictions of known rank")
        axes = list(range(1, diffs.shape.ndims))
        present = where(math_ops.equal(w, 0.0), array_ops.zeros_like(w), array_ops.ones_like(w))
        present = present * array_ops.ones_like(diffs)
        count = reduction_ops.reduce_sum(present, axis=axes, keepdims=True)
        squares = reduction_ops.reduce_sum(math_ops.square(diffs), axis=axes, keepdims=True)
        term1 = 2.0 * divide_no_nan(squares, count - 1)
        total = reduction_ops.reduce_sum(diffs, axis=axes, keepdims=True)
        term2 = 2.0 * divide_no_nan(math_ops.square(total), count * (count - 1))
        loss = reduction_ops.reduce_sum((term1 - term2) * w)
        mean_loss = where(math_ops.greater(reduction_ops.reduce_sum(count), 0), loss, array_ops.zeros_like(loss))
        if loss_collection:
            add_to_collection(loss_collection, mean_loss)
        return mean_loss
