"""`tf.estimator.DNNLinearCombinedClassifier` / `Regressor` ("wide & deep"): the linear model's logits
(scope 'linear', FTRL) plus the DNN's (scope 'dnn', Adagrad), each part trained by its own
optimizer on its own variables, one global step per training step."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import tftk as tf
from tftk.estimator.canned.dnn import check_hidden_units, dnn_logits
from tftk.estimator.canned.head import Head, RegressionHead, classifier_head
from tftk.estimator.canned.linear import linear_logits
from tftk.estimator.canned.optimizers import get_optimizer_instance
from tftk.estimator.estimator import Estimator

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor"]

_DNN_LEARNING_RATE = 0.001
_LINEAR_LEARNING_RATE = 0.005


def combined_model_fn(features: Any, labels: Any, mode: str, head: Head, linear_columns: Sequence[Any],
                      linear_optimizer: Any, dnn_columns: Sequence[Any], dnn_optimizer: Any,
                      hidden_units: Sequence[int], activation_fn: Callable, dropout: float | None,
                      sparse_combiner: str) -> Any:
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features).__name__}")
    parts = []
    if dnn_columns:
        with tf.variable_scope("dnn") as dnn_scope:
            parts.append(("dnn", dnn_scope.name, dnn_logits(features, mode, head.logits_dimension, hidden_units,
                                                            dnn_columns, activation_fn, dropout)))
    if linear_columns:
        with tf.variable_scope("linear") as linear_scope:
            parts.append(("linear", linear_scope.name,
                          linear_logits(features, linear_columns, head.logits_dimension, sparse_combiner)))
    logits = parts[0][2] if len(parts) == 1 else tf.add(parts[0][2], parts[1][2])

    def train_op_fn(loss: Any) -> Any:
        steps = []
        for kind, scope, _ in parts:
            if kind == "dnn":
                optimizer = get_optimizer_instance(dnn_optimizer, _DNN_LEARNING_RATE)
            else:
                optimizer = get_optimizer_instance(
                    linear_optimizer, min(_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(len(linear_columns))))
            steps.append(optimizer.minimize(loss, var_list=tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                                                             scope=scope + "/")))
        with tf.control_dependencies([tf.group(*steps)]):
            return tf.assign_add(tf.train.get_global_step(), 1).op
    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)


class _CombinedEstimator(Estimator):
    def __init__(self, head: Head, model_dir: Any, linear_feature_columns: Any, linear_optimizer: Any,
                 dnn_feature_columns: Any, dnn_optimizer: Any, dnn_hidden_units: Any, dnn_activation_fn: Callable,
                 dnn_dropout: float | None, config: Any, warm_start_from: Any, linear_sparse_combiner: str):
        linear_columns, dnn_columns = list(linear_feature_columns or []), list(dnn_feature_columns or [])
        if not linear_columns and not dnn_columns:
            raise ValueError("Either linear_feature_columns or dnn_feature_columns must be defined.")
        units = check_hidden_units(dnn_hidden_units) if dnn_columns else []

        def model_fn(features, labels, mode, config):
            return combined_model_fn(features, labels, mode, head, linear_columns, linear_optimizer, dnn_columns,
                                     dnn_optimizer, units, dnn_activation_fn, dnn_dropout, linear_sparse_combiner)
        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(_CombinedEstimator):
    """A wide (linear) and deep (DNN) classifier."""

    def __init__(self, model_dir: Any = None, linear_feature_columns: Sequence[Any] | None = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Sequence[Any] | None = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable = tf.nn.relu, dnn_dropout: float | None = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Sequence[str] | None = None,
                 input_layer_partitioner: Any = None, config: Any = None, warm_start_from: Any = None,
                 loss_reduction: str = tf.losses.Reduction.SUM, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum"):
        if batch_norm:
            raise ValueError("DNNLinearCombinedClassifier(batch_norm=True) is not supported by tftk")
        super().__init__(classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         linear_sparse_combiner)


class DNNLinearCombinedRegressor(_CombinedEstimator):
    """A wide (linear) and deep (DNN) regressor."""

    def __init__(self, model_dir: Any = None, linear_feature_columns: Sequence[Any] | None = None,
                 linear_optimizer: Any = "Ftrl", dnn_feature_columns: Sequence[Any] | None = None,
                 dnn_optimizer: Any = "Adagrad", dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable = tf.nn.relu, dnn_dropout: float | None = None, label_dimension: int = 1,
                 weight_column: Any = None, input_layer_partitioner: Any = None, config: Any = None,
                 warm_start_from: Any = None, loss_reduction: str = tf.losses.Reduction.SUM,
                 batch_norm: bool = False, linear_sparse_combiner: str = "sum"):
        if batch_norm:
            raise ValueError("DNNLinearCombinedRegressor(batch_norm=True) is not supported by tftk")
        super().__init__(RegressionHead(label_dimension, weight_column, loss_reduction), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         linear_sparse_combiner)
