"""`tf.estimator.DNNClassifier` / `DNNRegressor`: `tf.feature_column.input_layer`, then fully connected
hidden layers and a logits layer, under the variable scope 'dnn' with TF's variable names
(dnn/hiddenlayer_<i>/kernel, .../bias, dnn/logits/kernel, .../bias; glorot-uniform kernels,
zero biases), Adagrad (learning rate 0.05) by default."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import tftk as tf
from tftk.estimator.canned.head import Head, RegressionHead, classifier_head
from tftk.estimator.canned.optimizers import get_optimizer_instance
from tftk.estimator.estimator import Estimator
from tftk.estimator.mode_keys import ModeKeys

__all__ = ["DNNClassifier", "DNNRegressor", "dnn_logits"]

_LEARNING_RATE = 0.05


def _layer_summary(value: Any, tag: str) -> None:
    tf.summary.scalar(f"{tag}/fraction_of_zero_values", tf.nn.zero_fraction(value))
    tf.summary.histogram(f"{tag}/activation", value)


def dnn_logits(features: Any, mode: str, units: int, hidden_units: Sequence[int], feature_columns: Sequence[Any],
               activation_fn: Callable, dropout: float | None) -> Any:
    """The DNN's logits (call inside the 'dnn' variable scope)."""
    from tftk.feature_column import input_layer
    with tf.variable_scope("input_from_feature_columns"):
        net = input_layer(features, feature_columns)
    scope = tf.get_variable_scope().name
    for layer_id, width in enumerate(hidden_units):
        net = tf.layers.dense(net, width, activation=activation_fn, kernel_initializer=tf.glorot_uniform_initializer(),
                              name=f"hiddenlayer_{layer_id}")
        if dropout is not None and mode == ModeKeys.TRAIN:
            net = tf.layers.dropout(net, rate=dropout, training=True)
        _layer_summary(net, f"{scope}/hiddenlayer_{layer_id}")
    logits = tf.layers.dense(net, units, kernel_initializer=tf.glorot_uniform_initializer(), name="logits")
    _layer_summary(logits, f"{scope}/logits")
    return logits


def check_hidden_units(hidden_units: Any) -> list[int]:
    units = list(hidden_units or [])
    if not units or any(int(u) <= 0 for u in units):
        raise ValueError(f"hidden_units must be a non-empty list of positive layer widths, given {hidden_units!r}")
    return [int(u) for u in units]


def dnn_model_fn(features: Any, labels: Any, mode: str, head: Head, hidden_units: Sequence[int],
                 feature_columns: Sequence[Any], optimizer: Any, activation_fn: Callable, dropout: float | None) -> Any:
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features).__name__}")
    with tf.variable_scope("dnn"):
        logits = dnn_logits(features, mode, head.logits_dimension, hidden_units, feature_columns, activation_fn,
                            dropout)

    def train_op_fn(loss: Any) -> Any:
        chosen = get_optimizer_instance(optimizer, _LEARNING_RATE)
        return chosen.minimize(loss, global_step=tf.train.get_global_step())
    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)


class _DNNEstimator(Estimator):
    def __init__(self, head: Head, hidden_units: Any, feature_columns: Any, model_dir: Any, optimizer: Any,
                 activation_fn: Callable, dropout: float | None, config: Any, warm_start_from: Any):
        units = check_hidden_units(hidden_units)
        columns = list(feature_columns or [])
        if not columns:
            raise ValueError("feature_columns must not be empty: give the feature columns the model reads")

        def model_fn(features, labels, mode, config):
            return dnn_model_fn(features, labels, mode, head, units, columns, optimizer, activation_fn, dropout)
        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(_DNNEstimator):
    """A feed-forward classifier."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Sequence[Any], model_dir: Any = None,
                 n_classes: int = 2, weight_column: Any = None, label_vocabulary: Sequence[str] | None = None,
                 optimizer: Any = "Adagrad", activation_fn: Callable = tf.nn.relu, dropout: float | None = None,
                 input_layer_partitioner: Any = None, config: Any = None, warm_start_from: Any = None,
                 loss_reduction: str = tf.losses.Reduction.SUM, batch_norm: bool = False):
        if batch_norm:
            raise ValueError("DNNClassifier(batch_norm=True) is not supported by tftk")
        super().__init__(classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout, config, warm_start_from)


class DNNRegressor(_DNNEstimator):
    """A feed-forward regressor with a squared-error loss."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Sequence[Any], model_dir: Any = None,
                 label_dimension: int = 1, weight_column: Any = None, optimizer: Any = "Adagrad",
                 activation_fn: Callable = tf.nn.relu, dropout: float | None = None, input_layer_partitioner: Any = None,
                 config: Any = None, warm_start_from: Any = None, loss_reduction: str = tf.losses.Reduction.SUM,
                 batch_norm: bool = False):
        if batch_norm:
            raise ValueError("DNNRegressor(batch_norm=True) is not supported by tftk")
        super().__init__(RegressionHead(label_dimension, weight_column, loss_reduction), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout, config, warm_start_from)
