"""`tf.metrics` over the k best-ranked classes: precision, recall and average precision at k.

Labels are class ids, [batch] or [batch, n] (a set per row); predictions are scores [batch, classes]
(the *_at_k names, ranked with top_k: ties go to the lower class id) or already-ranked class ids
[batch, k] (the *_at_top_k names). Totals are float64 local variables named as TF 1.15 names them
(true_positive_at_2, max, total, ...), and the ratios are plain divisions as TF's: NaN before any
label or prediction was counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops, state_ops
from tftk.ops.metrics_impl import _collect, _safe_div, metric_variable
from tftk.ops.nn_ops import top_k
from tftk.ops.op_builder import make_op
from tftk.ops.variable_scope import variable_scope

__all__ = ["precision_at_k", "recall_at_k", "precision_at_top_k", "recall_at_top_k", "sparse_precision_at_k",
           "average_precision_at_k", "sparse_average_precision_at_k"]


def _rows(predictions_idx: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranked ids and label ids as [rows, k] and [rows, n]."""
    predictions_idx = predictions_idx.reshape(-1, predictions_idx.shape[-1])
    return predictions_idx, labels.reshape(len(predictions_idx), -1)


def _bind_top_k_counts(op: Any, ctx: Any):
    class_id = op.get_attr("class_id")

    def kernel(predictions_idx: np.ndarray, labels: np.ndarray) -> np.ndarray:
        predictions_idx, labels = _rows(predictions_idx, labels)
        counts = np.zeros((len(labels), 3), np.float64)  # true pos, false pos, false neg per row
        for i, (row_top, row_labels) in enumerate(zip(predictions_idx, labels)):
            wanted, got = set(row_labels.tolist()), set(row_top.tolist())
            if class_id is not None:
                wanted, got = wanted & {class_id}, got & {class_id}
            counts[i] = (len(wanted & got), len(got - wanted), len(wanted - got))
        return counts

    return kernel


def _bind_average_precision(op: Any, ctx: Any):
    def kernel(predictions_idx: np.ndarray, labels: np.ndarray, num_classes: np.ndarray) -> np.ndarray:
        predictions_idx, labels = _rows(predictions_idx, labels)
        k = predictions_idx.shape[1]
        valid = (labels >= 0) & (labels < num_classes)  # TF drops labels no score can rank
        relevant = np.array([np.isin(row_top, row_labels[row_valid])
                             for row_top, row_labels, row_valid in zip(predictions_idx, labels, valid)],
                            np.float64).reshape(len(labels), k)
        precision_per_k = np.cumsum(relevant, axis=1) / np.arange(1, k + 1, dtype=np.float64)
        num_relevant = np.minimum(valid.sum(axis=1), k).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # a row without labels is NaN, as TF's
            return (precision_per_k * relevant).sum(axis=1) / num_relevant

    return kernel


registry.register_op("TopKLabelCounts", _bind_top_k_counts, fresh=True)
registry.not_differentiable("TopKLabelCounts")
registry.register_op("AveragePrecisionAtTopK", _bind_average_precision, fresh=True)
registry.not_differentiable("AveragePrecisionAtTopK")


def _at_k_name(kind: str, k: int | None, class_id: int | None = None) -> str:
    name = f"{kind}_at_{int(k)}" if k is not None else f"{kind}_at_k"
    return name if class_id is None else f"{name}_class{class_id}"


def _batch_rows(predictions_idx: Tensor) -> Any:
    return predictions_idx.shape[0] if predictions_idx.shape.ndims == 2 else None


def _ratio_of_top_k_counts(kind: str, miss_column: int, labels: Any, predictions_idx: Tensor, k: int | None,
                           class_id: int | None, weights: Any, metrics_collections: Any,
                           updates_collections: Any) -> tuple[Tensor, Tensor]:
    """tp / (tp + misses) of ranked ids against label ids, inside the metric's scope."""
    miss_name = "false_positive" if miss_column == 1 else "false_negative"
    predictions_idx = math_ops.cast(predictions_idx, dtypes.int64)
    counts = make_op("TopKLabelCounts", [predictions_idx, convert_to_tensor(labels)], dtypes.float64,
                     TensorShape([_batch_rows(predictions_idx), 3]), "top_k_counts", {"class_id": class_id})
    if weights is not None:
        weights = math_ops.cast(convert_to_tensor(weights), dtypes.float64)
        counts = math_ops.multiply(counts, array_ops.reshape(weights, [-1, 1]))
    totals = reduction_ops.reduce_sum(counts, 0)
    tp_var = metric_variable([], dtypes.float64, name=_at_k_name("true_positive", k, class_id))
    miss_var = metric_variable([], dtypes.float64, name=_at_k_name(miss_name, k, class_id))
    tp_update = state_ops.assign_add(tp_var, totals[0])
    miss_update = state_ops.assign_add(miss_var, totals[miss_column])
    value = math_ops.truediv(tp_var.value(), math_ops.add(tp_var.value(), miss_var.value()), name="value")
    update = math_ops.truediv(tp_update, math_ops.add(tp_update, miss_update), name="update")
    return _collect(value, update, metrics_collections, updates_collections)


def _top_k_metrics(kind: str, miss_column: int) -> tuple:
    def at_top_k(labels: Any, predictions_idx: Any, k: int | None = None, class_id: int | None = None,
                 weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                 name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, _at_k_name(kind, k, class_id), [predictions_idx, labels, weights]):
            return _ratio_of_top_k_counts(kind, miss_column, labels, convert_to_tensor(predictions_idx), k,
                                          class_id, weights, metrics_collections, updates_collections)

    def at_k(labels: Any, predictions: Any, k: int, class_id: int | None = None, weights: Any = None,
             metrics_collections: Any = None, updates_collections: Any = None,
             name: str | None = None) -> tuple[Tensor, Tensor]:
        with variable_scope(name, _at_k_name(kind, k, class_id), [predictions, labels, weights]):
            _, predictions_idx = top_k(predictions, k)
            return _ratio_of_top_k_counts(kind, miss_column, labels, predictions_idx, k, class_id, weights,
                                          metrics_collections, updates_collections)

    at_top_k.__name__, at_k.__name__ = f"{kind}_at_top_k", f"{kind}_at_k"
    at_k.__doc__ = (f"{kind} of the top-k predicted classes against the label ids (labels [batch] or "
                    "[batch, n]); with class_id, of that class only. float64, as TF's.")
    at_top_k.__doc__ = f"{kind} of already-ranked class ids [batch, k] against the label ids, as {kind}_at_k."
    return at_top_k, at_k


precision_at_top_k, precision_at_k = _top_k_metrics("precision", 1)
recall_at_top_k, recall_at_k = _top_k_metrics("recall", 2)
sparse_precision_at_k = precision_at_k  # TF 1.x's older name for the same metric


def average_precision_at_k(labels: Any, predictions: Any, k: int, weights: Any = None,
                           metrics_collections: Any = None, updates_collections: Any = None,
                           name: str | None = None) -> tuple[Tensor, Tensor]:
    """The mean over rows of the average precision of the top-k classes against the label ids.

    A row's average precision is the sum, over ranks i where the class is a label, of the precision
    at i, divided by min(k, number of labels); the mean is weighted by `weights` (one per row).
    """
    with variable_scope(name, _at_k_name("average_precision", k), [predictions, labels, weights]):
        predictions = convert_to_tensor(predictions)
        _, predictions_idx = top_k(predictions, k)
        num_classes = math_ops.cast(array_ops.shape(predictions)[-1], dtypes.int64)
        per_row = make_op("AveragePrecisionAtTopK", [math_ops.cast(predictions_idx, dtypes.int64),
                                                     convert_to_tensor(labels), num_classes], dtypes.float64,
                          TensorShape([_batch_rows(predictions_idx)]), "average_precision", {})
        if weights is None:
            batch_max = math_ops.cast(array_ops.size(per_row), dtypes.float64)
        else:
            weights = math_ops.multiply(math_ops.cast(convert_to_tensor(weights), dtypes.float64),
                                        array_ops.ones_like(per_row))
            per_row = math_ops.multiply(per_row, weights)
            batch_max = reduction_ops.reduce_sum(weights)
        # TF's variable is max_1: its label cleaning first makes a Max op, and op names are unique
        # regardless of case
        max_var = metric_variable([], dtypes.float64, name="max_1")
        total_var = metric_variable([], dtypes.float64, name="total")
        max_update = state_ops.assign_add(max_var, batch_max)
        total_update = state_ops.assign_add(total_var, reduction_ops.reduce_sum(per_row))
        return _collect(_safe_div(total_var.value(), max_var.value(), "mean"),
                        _safe_div(total_update, max_update, "update"), metrics_collections, updates_collections)


sparse_average_precision_at_k = average_precision_at_k  # TF 1.x's older name for the same metric
