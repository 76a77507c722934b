"""The premade estimators' heads (TF 1.x's canned/head.py): from logits to predictions, the loss,
the evaluation metrics and the export outputs, with TF1's names and semantics.

The training loss is reduced with `loss_reduction` (TF1's canned default: SUM over the batch, so
`loss` in evaluate() is the mean over batches of a batch's summed loss, and `average_loss` the mean
per example). Metric keys: loss, average_loss, accuracy, precision, recall, auc,
auc_precision_recall, prediction/mean, label/mean, accuracy_baseline (as TF's MetricKeys).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tftk as tf
from tftk.estimator.export_output import ClassificationOutput, PredictOutput, RegressionOutput
from tftk.estimator.mode_keys import ModeKeys
from tftk.estimator.model_fn import EstimatorSpec

__all__ = ["Head", "BinaryLogisticHead", "MultiClassHead", "RegressionHead", "classifier_head"]


def _labels_as_column(labels: Any, logits: Any, expected_dimension: int, n_classes: int | None) -> Any:
    """Labels as [batch, expected_dimension], checked against the logits' batch and last dimension."""
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Suggested Fix: check that your "
                         "input_fn returns (features, labels)")
    if isinstance(labels, dict):
        raise ValueError(f"labels must be a Tensor for a canned head, given a dict with keys {sorted(labels)}")
    labels = tf.convert_to_tensor(labels)
    if labels.shape.ndims == 1:
        labels = tf.expand_dims(labels, -1)
    dims = labels.shape.as_list() if labels.shape.ndims is not None else None
    if dims is not None and (len(dims) != 2 or dims[-1] not in (None, expected_dimension)):
        fix = (f"Classifier configured with n_classes={n_classes}" if n_classes is not None
               else f"Regressor configured with label_dimension={expected_dimension}")
        raise ValueError(f"Mismatched label shape. {fix}. Received labels of shape {labels.shape}. Suggested Fix: "
                         f"check your n_classes/label_dimension argument to the estimator and/or the shape of your "
                         f"label.")
    return labels


def _weights(features: Any, weight_column: Any, logits: Any) -> Any:
    """The per-example weights ([batch, 1]) from the weight column, or 1."""
    if weight_column is None:
        return 1.0
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if not isinstance(features, dict) or key not in features:
        available = sorted(features) if isinstance(features, dict) else []
        raise KeyError(f"weight_column {key!r} is not in the features (features: {available})")
    weights = tf.cast(features[key], tf.float32)
    if weights.shape.ndims == 1:
        weights = tf.expand_dims(weights, -1)
    return weights


def _mean_metric(values: Any, weights: Any, name: str) -> tuple:
    values = tf.cast(values, tf.float32)
    if not isinstance(weights, float):
        weights = weights * tf.ones_like(values)
        return tf.metrics.mean(values, weights=weights, name=name)
    return tf.metrics.mean(values, name=name)


class Head:
    """A head: `create_estimator_spec(features, mode, logits, labels, train_op_fn)` -> EstimatorSpec."""

    logits_dimension: int

    def __init__(self, weight_column: Any = None, loss_reduction: str = "weighted_sum"):
        if loss_reduction in (None, "none"):
            raise ValueError("Invalid loss_reduction: none (use tf.losses.Reduction.SUM or SUM_OVER_BATCH_SIZE)")
        self._weight_column = weight_column
        self._loss_reduction = loss_reduction

    # subclasses: _predictions(logits) -> dict, _unreduced_loss(labels, logits) -> (loss, processed labels),
    # _metrics(...) -> dict, _export_outputs(predictions) -> dict, _labels(labels, logits)

    def create_estimator_spec(self, features: Any, mode: str, logits: Any, labels: Any = None,
                              train_op_fn: Callable[[Any], Any] | None = None) -> EstimatorSpec:
        with tf.name_scope("head"):
            with tf.name_scope("predictions"):
                predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            labels = self._labels(labels, logits)
            unreduced = self._unreduced_loss(labels, logits)
            weights = _weights(features, self._weight_column, logits)
            training_loss = tf.losses.compute_weighted_loss(unreduced, weights=weights,
                                                            reduction=self._loss_reduction)
            if mode == ModeKeys.EVAL:
                with tf.name_scope("metrics"):
                    metrics = {"average_loss": _mean_metric(unreduced, weights, "average_loss")}
                    metrics.update(self._metrics(labels, predictions, weights))
                return EstimatorSpec(mode, predictions=predictions, loss=training_loss, eval_metric_ops=metrics)
            if train_op_fn is None:
                raise ValueError("train_op_fn must be given in TRAIN mode")
            train_op = train_op_fn(training_loss)
            mean_loss = None
            if self._loss_reduction == tf.losses.Reduction.SUM:
                mean_loss = training_loss / tf.reduce_sum(weights * tf.ones_like(unreduced))
        with tf.name_scope(None):
            tf.summary.scalar("loss", training_loss)
            if mean_loss is not None:
                tf.summary.scalar("average_loss", mean_loss)
        return EstimatorSpec(mode, predictions=predictions, loss=training_loss, train_op=train_op)


def _class_strings(n_classes: int, label_vocabulary: Any) -> list[bytes]:
    return [str(v).encode() if not isinstance(v, bytes) else v
            for v in (label_vocabulary if label_vocabulary else range(n_classes))]


class _ClassifierHead(Head):
    def __init__(self, n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: str):
        super().__init__(weight_column, loss_reduction)
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)) or len(label_vocabulary) != n_classes:
                raise ValueError(f"label_vocabulary must be a list of {n_classes} strings (one per class), given "
                                 f"{label_vocabulary!r}")
        self._n_classes = n_classes
        self._label_vocabulary = list(label_vocabulary) if label_vocabulary is not None else None

    def _class_ids_of_labels(self, labels: Any) -> Any:
        """Integer class ids of the labels: looked up in the vocabulary, else checked to lie in [0, n_classes)."""
        if self._label_vocabulary is not None:
            if labels.dtype != tf.string:
                raise ValueError(f"Labels dtype should be string when label_vocabulary is given; got {labels.dtype.name}")
            vocabulary = tf.constant(np.array(_class_strings(self._n_classes, self._label_vocabulary), dtype=object))
            matches = tf.equal(tf.expand_dims(labels, -1), vocabulary)
            with tf.control_dependencies([tf.Assert(tf.reduce_all(tf.reduce_any(matches, -1)),
                                                    ["Labels must be in label_vocabulary", labels])]):
                return tf.argmax(tf.cast(matches, tf.int32), -1)
        if labels.dtype == tf.string:
            raise ValueError("Labels are strings: give the estimator a label_vocabulary")
        checks = [tf.assert_non_negative(labels, message="Labels must >= 0"),
                  tf.assert_less(labels, tf.cast(self._n_classes, labels.dtype),
                                 message=f"Labels must <= n_classes - 1 = {self._n_classes - 1}")]
        with tf.control_dependencies(checks):
            return tf.identity(labels)

    def _class_predictions(self, scores_logits: Any) -> dict:
        class_ids = tf.expand_dims(tf.argmax(scores_logits, -1, name="class_ids"), -1)
        strings = tf.constant(np.array(_class_strings(self._n_classes, self._label_vocabulary), dtype=object))
        classes = tf.gather(strings, class_ids) if self._label_vocabulary else tf.as_string(class_ids, name="str_classes")
        all_class_ids = tf.cast(tf.zeros_like(scores_logits), tf.int32) + tf.range(self._n_classes)
        all_classes = tf.gather(strings, all_class_ids)
        return {"class_ids": class_ids, "classes": classes, "all_class_ids": all_class_ids,
                "all_classes": all_classes}

    def _classification_output(self, probabilities: Any) -> ClassificationOutput:
        strings = tf.constant(np.array(_class_strings(self._n_classes, self._label_vocabulary), dtype=object))
        all_class_ids = tf.cast(tf.zeros_like(probabilities), tf.int32) + tf.range(self._n_classes)
        return ClassificationOutput(scores=probabilities, classes=tf.gather(strings, all_class_ids))


class BinaryLogisticHead(_ClassifierHead):
    """Two classes, one logit: sigmoid cross-entropy; predictions logits, logistic, probabilities,
    class_ids, classes, all_class_ids, all_classes."""

    logits_dimension = 1

    def __init__(self, weight_column: Any = None, label_vocabulary: Any = None, loss_reduction: str = "weighted_sum"):
        super().__init__(2, weight_column, label_vocabulary, loss_reduction)

    def _predictions(self, logits: Any) -> dict:
        two_class_logits = tf.concat([tf.zeros_like(logits), logits], -1, name="two_class_logits")
        return {"logits": logits, "logistic": tf.sigmoid(logits, name="logistic"),
                "probabilities": tf.nn.softmax(two_class_logits, name="probabilities"),
                **self._class_predictions(two_class_logits)}

    def _labels(self, labels: Any, logits: Any) -> Any:
        labels = _labels_as_column(labels, logits, 1, 2)
        return tf.cast(self._class_ids_of_labels(labels), tf.float32)

    def _unreduced_loss(self, labels: Any, logits: Any) -> Any:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def _metrics(self, labels: Any, predictions: dict, weights: Any) -> dict:
        w = None if isinstance(weights, float) else weights
        label_mean = _mean_metric(labels, weights, "label/mean")
        baseline = (tf.maximum(label_mean[0], 1.0 - label_mean[0]), tf.maximum(label_mean[1], 1.0 - label_mean[1]))
        class_ids, logistic = predictions["class_ids"], predictions["logistic"]
        return {"accuracy": tf.metrics.accuracy(labels, class_ids, weights=w, name="accuracy"),
                "precision": tf.metrics.precision(labels, class_ids, weights=w, name="precision"),
                "recall": tf.metrics.recall(labels, class_ids, weights=w, name="recall"),
                "prediction/mean": _mean_metric(logistic, weights, "prediction/mean"),
                "label/mean": label_mean, "accuracy_baseline": baseline,
                "auc": tf.metrics.auc(labels, logistic, weights=w, name="auc"),
                "auc_precision_recall": tf.metrics.auc(labels, logistic, weights=w, curve="PR",
                                                       name="auc_precision_recall")}

    def _export_outputs(self, predictions: dict) -> dict:
        classification = self._classification_output(predictions["probabilities"])
        return {"serving_default": classification, "classification": classification,
                "regression": RegressionOutput(predictions["logistic"]), "predict": PredictOutput(predictions)}


class MultiClassHead(_ClassifierHead):
    """n_classes > 2: sparse softmax cross-entropy; predictions logits, probabilities, class_ids, classes, ..."""

    def __init__(self, n_classes: int, weight_column: Any = None, label_vocabulary: Any = None,
                 loss_reduction: str = "weighted_sum"):
        if n_classes is None or n_classes <= 2:
            raise ValueError(f"n_classes must be > 2 for a multi-class head, given {n_classes}")
        super().__init__(n_classes, weight_column, label_vocabulary, loss_reduction)
        self.logits_dimension = n_classes

    def _predictions(self, logits: Any) -> dict:
        return {"logits": logits, "probabilities": tf.nn.softmax(logits, name="probabilities"),
                **self._class_predictions(logits)}

    def _labels(self, labels: Any, logits: Any) -> Any:
        return tf.cast(self._class_ids_of_labels(_labels_as_column(labels, logits, 1, self._n_classes)), tf.int64)

    def _unreduced_loss(self, labels: Any, logits: Any) -> Any:
        return tf.expand_dims(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.squeeze(labels, -1),
                                                                            logits=logits), -1)

    def _metrics(self, labels: Any, predictions: dict, weights: Any) -> dict:
        w = None if isinstance(weights, float) else weights
        return {"accuracy": tf.metrics.accuracy(labels, predictions["class_ids"], weights=w, name="accuracy")}

    def _export_outputs(self, predictions: dict) -> dict:
        classification = self._classification_output(predictions["probabilities"])
        return {"serving_default": classification, "classification": classification,
                "predict": PredictOutput(predictions)}


class RegressionHead(Head):
    """Squared error over `label_dimension` values; prediction key 'predictions'."""

    def __init__(self, label_dimension: int = 1, weight_column: Any = None, loss_reduction: str = "weighted_sum"):
        if label_dimension < 1:
            raise ValueError(f"Invalid label_dimension {label_dimension}: must be >= 1")
        super().__init__(weight_column, loss_reduction)
        self.logits_dimension = label_dimension

    def _predictions(self, logits: Any) -> dict:
        return {"predictions": tf.identity(logits, name="predictions")}

    def _labels(self, labels: Any, logits: Any) -> Any:
        return tf.cast(_labels_as_column(labels, logits, self.logits_dimension, None), tf.float32)

    def _unreduced_loss(self, labels: Any, logits: Any) -> Any:
        return tf.squared_difference(logits, labels)

    def _metrics(self, labels: Any, predictions: dict, weights: Any) -> dict:
        return {"prediction/mean": _mean_metric(predictions["predictions"], weights, "prediction/mean"),
                "label/mean": _mean_metric(labels, weights, "label/mean")}

    def _export_outputs(self, predictions: dict) -> dict:
        outputs = {"predict": PredictOutput(predictions)}
        if self.logits_dimension == 1:
            regression = RegressionOutput(predictions["predictions"])
            outputs.update({"serving_default": regression, "regression": regression})
        else:
            outputs["serving_default"] = PredictOutput(predictions)
        return outputs


def classifier_head(n_classes: int, weight_column: Any, label_vocabulary: Any, loss_reduction: str) -> Head:
    """TF1's choice: a binary logistic head for 2 classes, a softmax head above."""
    if n_classes == 2:
        return BinaryLogisticHead(weight_column, label_vocabulary, loss_reduction)
    return MultiClassHead(n_classes, weight_column, label_vocabulary, loss_reduction)
