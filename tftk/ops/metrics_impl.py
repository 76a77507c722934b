"""`tf.metrics`: streaming metrics as TF1 builds them, each returning (value, update_op).

Every metric keeps its running totals in local variables (collections LOCAL_VARIABLES and
METRIC_VARIABLES, not trainable) under a variable scope named after it; running `update_op`
folds one batch in and returns the metric so far, `value` reads it without updating, and
`tf.local_variables_initializer()` resets it. Ratios are 0 where the denominator is 0 (TF's
div_no_nan), and the formulas follow TF 1.15's metrics_impl.py so values match to float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, add_to_collections, convert_to_tensor
from tftk.ops import array_ops, gather_ops, math_ops, reduction_ops, state_ops
from tftk.ops.matrix_ops import matrix_diag_part
from tftk.ops.variable_scope import variable_scope
from tftk.ops.variables import Variable

__all__ = ["mean", "accuracy", "mean_squared_error", "mean_absolute_error", "root_mean_squared_error",
           "true_positives", "false_positives", "true_negatives", "false_negatives", "precision",
           "recall", "auc", "mean_iou", "mean_per_class_accuracy",
           "metric_variable"]


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: str | None = None) -> Variable:
    """A zero-initialised local variable holding a metric's running total."""
    dtype = dtypes.as_dtype(dtype)
    return Variable(array_ops.zeros(shape, dtype), trainable=False, name=name, validate_shape=validate_shape,
                    collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES])


def _safe_div(numerator: Tensor, denominator: Tensor, name: str | None = None) -> Tensor:
    """numerator / denominator, 0 where the denominator is 0."""
    positive = math_ops.greater(denominator, 0)
    safe = gather_ops.where(positive, denominator, array_ops.ones_like(denominator))
    return gather_ops.where(positive, math_ops.truediv(numerator, safe), array_ops.zeros_like(numerator),
                               name=name)


def _collect(value: Tensor, update: Tensor, metrics_collections: Any, updates_collections: Any) -> tuple:
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update)
    return value, update


def _float(x: Any) -> Tensor:
    x = convert_to_tensor(x)
    return x if x.dtype is dtypes.float32 else math_ops.cast(x, dtypes.float32)


def _broadcast_weights(weights: Any, values: Tensor) -> Tensor:
    """Weights as values' shape (TF: same rank and each dim 1 or equal)."""
    if weights is None:
        return array_ops.ones_like(values)
    return math_ops.multiply(_float(weights), array_ops.ones_like(values))


def mean(values: Any, weights: Any = None, metrics_collections: Any = None,
         updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of every value seen so far."""
    with variable_scope(name, "mean", [values, weights]):
        values = _float(values)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            weights = _broadcast_weights(weights, values)
            values = math_ops.multiply(values, weights)
            num_values = reduction_ops.reduce_sum(weights)
        update_total = state_ops.assign_add(total, reduction_ops.reduce_sum(values))
        update_count = state_ops.assign_add(count, num_values)
        value = _safe_div(total.value(), count.value(), "value")
        update = _safe_div(update_total, update_count, "update_op")
        return _collect(value, update, metrics_collections, updates_collections)


def accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    """How often predictions equal labels."""
    predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
    if labels.dtype is not predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = _float(math_ops.equal(predictions, labels))
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                       updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    squared = math_ops.squared_difference(_float(predictions), _float(labels))
    return mean(squared, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def mean_absolute_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                        updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    absolute = math_ops.abs(math_ops.subtract(_float(predictions), _float(labels)))
    return mean(absolute, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def root_mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                            updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return _collect(math_ops.sqrt(mse), math_ops.sqrt(update_mse), metrics_collections, updates_collections)


# ---- counts of a binary condition -------------------------------------------------------------

def _count(condition: Tensor, weights: Any, metrics_collections: Any, updates_collections: Any) -> tuple:
    count = metric_variable([], dtypes.float32, name="count")
    hits = _float(condition)
    if weights is not None:
        hits = math_ops.multiply(hits, _float(weights))
    update = state_ops.assign_add(count, reduction_ops.reduce_sum(hits))
    return _collect(array_ops.identity(count.value()), update, metrics_collections, updates_collections)


def _as_bool(x: Any) -> Tensor:
    x = convert_to_tensor(x)
    return x if x.dtype is dtypes.bool else math_ops.cast(x, dtypes.bool)


def _confusion_count(kind: str, want_label: bool, want_prediction: bool):
    def metric(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, kind, [predictions, labels, weights]):
            is_label = _as_bool(labels) if want_label else math_ops.logical_not(_as_bool(labels))
            is_prediction = _as_bool(predictions) if want_prediction else \
                math_ops.logical_not(_as_bool(predictions))
            return _count(math_ops.logical_and(is_label, is_prediction), weights,
                          metrics_collections, updates_collections)
    metric.__name__ = kind
    metric.__doc__ = f"The (weighted) number of {kind.replace('_', ' ')} seen so far."
    return metric


true_positives = _confusion_count("true_positives", True, True)
false_positives = _confusion_count("false_positives", False, True)
true_negatives = _confusion_count("true_negatives", False, False)
false_negatives = _confusion_count("false_negatives", True, False)


def _ratio(kind: str, other) -> Any:
    def metric(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, kind, [predictions, labels, weights]):
            tp, tp_update = true_positives(labels, predictions, weights)
            miss, miss_update = other(labels, predictions, weights)
            value = _safe_div(tp, math_ops.add(tp, miss), "value")
            update = _safe_div(tp_update, math_ops.add(tp_update, miss_update), "update_op")
            return _collect(value, update, metrics_collections, updates_collections)
    metric.__name__ = kind
    return metric


precision = _ratio("precision", false_positives)
precision.__doc__ = "true positives / (true positives + false positives), over every batch so far."
recall = _ratio("recall", false_negatives)
recall.__doc__ = "true positives / (true positives + false negatives), over every batch so far."


# ---- AUC --------------------------------------------------------------------------------------

def auc(labels: Any, predictions: Any, weights: Any = None, num_thresholds: int = 200,
        metrics_collections: Any = None, updates_collections: Any = None, curve: str = "ROC",
        name: str | None = None, summation_method: str = "trapezoidal", thresholds: Any = None) -> tuple:
    """Area under the ROC or PR curve, from confusion counts at `num_thresholds` thresholds.

    summation_method: 'trapezoidal', 'minoring' or 'majoring' (TF's Riemann sums).
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be either ROC or PR, {curve} unknown")
    if summation_method not in ("trapezoidal", "minoring", "majoring"):
        raise ValueError(f"Invalid summation_method: {summation_method}")
    with variable_scope(name, "auc", [labels, predictions, weights]):
        if thresholds is None:
            kepsilon = 1e-7
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
        counts, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights)
        value = _auc_from_counts(*(counts[k] for k in ("tp", "fn", "tn", "fp")), curve, summation_method,
                                 "value")
        update = _auc_from_counts(*(updates[k] for k in ("tp", "fn", "tn", "fp")), curve, summation_method,
                                  "update_op")
        return _collect(value, update, metrics_collections, updates_collections)


def _confusion_at_thresholds(labels: Any, predictions: Any, thresholds: list, weights: Any,
                             includes: tuple = ("tp", "fn", "tn", "fp")) -> tuple[dict, dict]:
    """Confusion counts per threshold (prediction > threshold counts as positive), as TF's
    _confusion_matrix_at_thresholds: {key: variable value} and {key: op adding one batch}, for the
    keys of `includes` among tp, fn, tn, fp (float32 local variables named true_positives, ...)."""
    n = len(thresholds)
    predictions = _float(predictions)
    w = None if weights is None else array_ops.reshape(_broadcast_weights(weights, predictions), [-1, 1])
    predictions = array_ops.reshape(predictions, [-1, 1])
    labels = array_ops.reshape(_as_bool(labels), [-1, 1])
    above = math_ops.greater(predictions, array_ops.reshape(
        convert_to_tensor(np.asarray(thresholds, np.float32)), [1, n]))
    below = math_ops.logical_not(above)
    positive, negative = labels, math_ops.logical_not(labels)
    values, updates = {}, {}
    for key, name, a, b in (("tp", "true_positives", positive, above), ("fn", "false_negatives", positive, below),
                            ("tn", "true_negatives", negative, below), ("fp", "false_positives", negative, above)):
        if key not in includes:
            continue
        var = metric_variable([n], dtypes.float32, name=name)
        hits = _float(math_ops.logical_and(a, b))
        if w is not None:
            hits = math_ops.multiply(hits, w)
        values[key] = var.value()
        updates[key] = state_ops.assign_add(var, reduction_ops.reduce_sum(hits, 0))
    return values, updates


def _auc_from_counts(tp: Tensor, fn: Tensor, tn: Tensor, fp: Tensor, curve: str, method: str,
                     name: str) -> Tensor:
    epsilon = 1.0e-6
    rec = math_ops.truediv(math_ops.add(tp, epsilon), math_ops.add(math_ops.add(tp, fn), epsilon))
    if curve == "ROC":
        x = math_ops.truediv(fp, math_ops.add(math_ops.add(fp, tn), epsilon))
        y = rec
    else:
        x = rec
        y = math_ops.truediv(math_ops.add(tp, epsilon), math_ops.add(math_ops.add(tp, fp), epsilon))
    dx = math_ops.subtract(x[:-1], x[1:])
    if method == "trapezoidal":
        heights = math_ops.multiply(math_ops.add(y[:-1], y[1:]), 0.5)
    elif method == "minoring":
        heights = math_ops.minimum(y[:-1], y[1:])
    else:
        heights = math_ops.maximum(y[:-1], y[1:])
    return reduction_ops.reduce_sum(math_ops.multiply(dx, heights), name=name)


# ---- per-class metrics ------------------------------------------------------------------------

def _confusion_update(labels: Any, predictions: Any, num_classes: int, weights: Any) -> tuple:
    """A [num_classes, num_classes] float64 total and the op adding one batch (rows: labels)."""
    from tftk.ops.segment_ops import unsorted_segment_sum
    total = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
    labels = math_ops.cast(array_ops.reshape(convert_to_tensor(labels), [-1]), dtypes.int64)
    predictions = math_ops.cast(array_ops.reshape(convert_to_tensor(predictions), [-1]), dtypes.int64)
    cells = math_ops.add(math_ops.multiply(labels, num_classes), predictions)
    w = array_ops.ones_like(cells, dtype=dtypes.float64) if weights is None else \
        math_ops.cast(array_ops.reshape(convert_to_tensor(weights), [-1]), dtypes.float64)
    batch = array_ops.reshape(unsorted_segment_sum(w, cells, num_classes * num_classes),
                              [num_classes, num_classes])
    return total, state_ops.assign_add(total, batch)


def mean_iou(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
             metrics_collections: Any = None, updates_collections: Any = None,
             name: str | None = None) -> tuple[Tensor, Tensor]:
    """Mean intersection-over-union over the classes that occur (labels or predictions)."""
    with variable_scope(name, "mean_iou", [predictions, labels, weights]):
        total, update = _confusion_update(labels, predictions, num_classes, weights)

        def compute(cm: Tensor, op_name: str) -> Tensor:
            """TF's compute_mean_iou: classes absent from labels and predictions do not count."""
            sum_over_row = math_ops.cast(reduction_ops.reduce_sum(cm, 0), dtypes.float32)
            sum_over_col = math_ops.cast(reduction_ops.reduce_sum(cm, 1), dtypes.float32)
            diag = math_ops.cast(matrix_diag_part(cm), dtypes.float32)
            denominator = math_ops.subtract(math_ops.add(sum_over_row, sum_over_col), diag)
            valid = reduction_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), dtypes.float32))
            denominator = gather_ops.where(math_ops.greater(denominator, 0), denominator,
                                              array_ops.ones_like(denominator))
            iou = math_ops.truediv(diag, denominator)
            return _safe_div(reduction_ops.reduce_sum(iou), valid, op_name)

        value = compute(total.value(), "mean_iou")
        return _collect(value, update, metrics_collections, updates_collections)  # TF: update is the matrix


def mean_per_class_accuracy(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean over classes of each class's accuracy (classes never seen count as 0)."""
    with variable_scope(name, "mean_accuracy", [predictions, labels, weights]):
        labels = math_ops.cast(array_ops.reshape(convert_to_tensor(labels), [-1]), dtypes.int64)
        predictions = math_ops.cast(array_ops.reshape(convert_to_tensor(predictions), [-1]), dtypes.int64)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = array_ops.ones_like(labels, dtype=dtypes.float32)
        is_correct = _float(math_ops.equal(predictions, labels))
        if weights is not None:
            w = array_ops.reshape(_float(weights), [-1])
            ones, is_correct = math_ops.multiply(ones, w), math_ops.multiply(is_correct, w)
        update_total = state_ops.scatter_add(total, labels, ones)
        update_count = state_ops.scatter_add(count, labels, is_correct)
        value = reduction_ops.reduce_mean(_safe_div(count.value(), total.value()), name="mean_accuracy")
        update = _safe_div(update_count, update_total, "update_op")  # TF: per class, not averaged
        return _collect(value, update, metrics_collections, updates_collections)
