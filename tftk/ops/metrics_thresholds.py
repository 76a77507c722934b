"""`tf.metrics` computed from confusion counts at a list of thresholds, and the elementwise means.

The threshold metrics keep float32 counts per threshold (a prediction above the threshold is a
positive) in local variables named true_positives, false_negatives, ... under the metric's variable
scope, as TF 1.15's metrics_impl.py builds them, so values and variable names match TF's. The
elementwise means (cosine distance, relative error, percentage below, mean_tensor) reduce to
`tf.metrics.mean` or, for mean_tensor, to a running total per element.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import array_ops, gather_ops, math_ops, reduction_ops, scan_ops, state_ops
from tftk.ops.metrics_impl import _broadcast_weights, _collect, _confusion_at_thresholds, _float, _safe_div, \
    mean, metric_variable
from tftk.ops.variable_scope import variable_scope

__all__ = ["true_positives_at_thresholds", "false_positives_at_thresholds", "true_negatives_at_thresholds",
           "false_negatives_at_thresholds", "precision_at_thresholds", "recall_at_thresholds",
           "sensitivity_at_specificity", "specificity_at_sensitivity", "mean_cosine_distance",
           "mean_relative_error", "mean_tensor", "percentage_below"]

_KEPSILON = 1e-7  # TF's allowance for float error at the ends of the threshold range


def _count_at_thresholds(key: str, scope: str):
    def metric(labels: Any, predictions: Any, thresholds: list, weights: Any = None,
               metrics_collections: Any = None, updates_collections: Any = None,
               name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, scope, [predictions, labels, weights]):
            values, updates = _confusion_at_thresholds(labels, predictions, list(thresholds), weights, (key,))
            return _collect(values[key], updates[key], metrics_collections, updates_collections)
    metric.__name__ = f"{scope}_at_thresholds"
    metric.__doc__ = (f"The (weighted) number of {scope.replace('_', ' ')} at each threshold "
                      "(a prediction above the threshold is positive), float32 of shape [len(thresholds)].")
    return metric


true_positives_at_thresholds = _count_at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _count_at_thresholds("fp", "false_positives")
true_negatives_at_thresholds = _count_at_thresholds("tn", "true_negatives")
false_negatives_at_thresholds = _count_at_thresholds("fn", "false_negatives")


def _ratio_at_thresholds(kind: str, miss: str):
    def metric(labels: Any, predictions: Any, thresholds: list, weights: Any = None,
               metrics_collections: Any = None, updates_collections: Any = None,
               name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, f"{kind}_at_thresholds", [predictions, labels, weights]):
            values, updates = _confusion_at_thresholds(labels, predictions, list(thresholds), weights,
                                                       ("tp", miss))

            def ratio(counts: dict, op_name: str) -> Tensor:
                tp = counts["tp"]
                return math_ops.truediv(tp, math_ops.add(math_ops.add(tp, _KEPSILON), counts[miss]),
                                        name=f"{kind}_{op_name}")
            return _collect(ratio(values, "value"), ratio(updates, "update_op"), metrics_collections,
                            updates_collections)
    metric.__name__ = f"{kind}_at_thresholds"
    return metric


precision_at_thresholds = _ratio_at_thresholds("precision", "fp")
precision_at_thresholds.__doc__ = "tp / (tp + fp + 1e-7) at each threshold, over every batch so far."
recall_at_thresholds = _ratio_at_thresholds("recall", "fn")
recall_at_thresholds.__doc__ = "tp / (tp + fn + 1e-7) at each threshold, over every batch so far."


def _even_thresholds(num_thresholds: int, last: float) -> list:
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [last]


def _rate(numerator: Tensor, other: Tensor, index: Tensor, name: str) -> Tensor:
    """numerator[index] / (numerator[index] + other[index] + 1e-7)."""
    at = gather_ops.gather(numerator, index)
    return math_ops.truediv(at, math_ops.add(math_ops.add(at, gather_ops.gather(other, index)), _KEPSILON),
                            name=name)


def _check_fraction(name: str, value: float) -> None:
    if value < 0 or value > 1:
        raise ValueError(f"`{name}` must be in the range [0, 1], got {value}.")


def sensitivity_at_specificity(labels: Any, predictions: Any, specificity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The sensitivity at the threshold whose specificity is closest to `specificity` (first such)."""
    _check_fraction("specificity", specificity)
    with variable_scope(name, "sensitivity_at_specificity", [predictions, labels, weights]):
        thresholds = _even_thresholds(num_thresholds, 1.0 + _KEPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)

        def compute(c: dict, op_name: str) -> Tensor:
            specificities = math_ops.truediv(c["tn"], math_ops.add(math_ops.add(c["tn"], c["fp"]), _KEPSILON))
            index = scan_ops.argmin(math_ops.abs(math_ops.subtract(specificities, specificity)), 0)
            return _rate(c["tp"], c["fn"], math_ops.cast(index, dtypes.int32), op_name)
        return _collect(compute(values, "value"), compute(updates, "update_op"), metrics_collections,
                        updates_collections)


def specificity_at_sensitivity(labels: Any, predictions: Any, sensitivity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The specificity at the threshold whose sensitivity is closest to `sensitivity` (last such, as TF)."""
    _check_fraction("sensitivity", sensitivity)
    with variable_scope(name, "specificity_at_sensitivity", [predictions, labels, weights]):
        thresholds = _even_thresholds(num_thresholds, 1.0 - _KEPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)

        def compute(c: dict, op_name: str) -> Tensor:
            sensitivities = math_ops.truediv(c["tp"], math_ops.add(math_ops.add(c["tp"], c["fn"]), _KEPSILON))
            distance = math_ops.abs(math_ops.subtract(sensitivities, sensitivity))
            closest = math_ops.cast(math_ops.equal(distance, reduction_ops.reduce_min(distance)), dtypes.int64)
            # the first maximum of the running count of closest thresholds is the last closest one
            index = scan_ops.argmax(scan_ops.cumsum(closest), 0)
            return _rate(c["tn"], c["fp"], math_ops.cast(index, dtypes.int32), op_name)
        return _collect(compute(values, "value"), compute(updates, "update_op"), metrics_collections,
                        updates_collections)


# ---- elementwise means ------------------------------------------------------------------------

def mean_cosine_distance(labels: Any, predictions: Any, dim: int, weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: str | None = None) -> tuple[Tensor, Tensor]:
    """1 - the mean over rows of sum(labels * predictions) along `dim` (inputs unit-normalised by the user)."""
    radial = reduction_ops.reduce_sum(math_ops.multiply(_float(predictions), _float(labels)), [dim],
                                      keepdims=True)
    value, update = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return _collect(math_ops.subtract(1.0, value), math_ops.subtract(1.0, update), metrics_collections,
                    updates_collections)


def mean_relative_error(labels: Any, predictions: Any, normalizer: Any, weights: Any = None,
                        metrics_collections: Any = None, updates_collections: Any = None,
                        name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean of |labels - predictions| / normalizer (0 where the normalizer is 0)."""
    labels, predictions, normalizer = _float(labels), _float(predictions), _float(normalizer)
    nonzero = math_ops.not_equal(normalizer, 0.0)
    safe = gather_ops.where(nonzero, normalizer, array_ops.ones_like(normalizer))
    relative = gather_ops.where(nonzero, math_ops.truediv(math_ops.abs(math_ops.subtract(labels, predictions)),
                                                          safe), array_ops.zeros_like(labels))
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def percentage_below(values: Any, threshold: float, weights: Any = None, metrics_collections: Any = None,
                     updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The (weighted) fraction of values below `threshold` so far."""
    below = _float(math_ops.less(_float(values), threshold))
    return mean(below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")


def mean_tensor(values: Any, weights: Any = None, metrics_collections: Any = None,
                updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of each element over every batch so far (values need a static shape)."""
    with variable_scope(name, "mean", [values, weights]):
        values = _float(values)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = array_ops.ones_like(values)
        if weights is not None:
            weights = _broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights)
        update_total = state_ops.assign_add(total, values)
        update_count = state_ops.assign_add(count, num_values)
        return _collect(_safe_div(total.value(), count.value(), "value"),
                        _safe_div(update_total, update_count, "update_op"), metrics_collections, updates_collections)
