"""`tf.estimator.BaselineClassifier` / `BaselineRegressor`: ignore the features and learn one bias per
logit (variable baseline/bias) — the prior of the labels, a yardstick for real models."""

from __future__ import annotations

from typing import Any, Sequence

import tftk as tf
from tftk.estimator.canned.head import Head, RegressionHead, classifier_head
from tftk.estimator.canned.optimizers import get_optimizer_instance
from tftk.estimator.estimator import Estimator

__all__ = ["BaselineClassifier", "BaselineRegressor"]

_LEARNING_RATE = 0.3


def _batch_size(features: Any) -> Any:
    """The first dimension of the features (any feature when they are a dict)."""
    values = list(features.values()) if isinstance(features, dict) else [features]
    if not values:
        raise ValueError("features should not be empty: the baseline needs one feature to know the batch size")
    first = values[0]
    first = first.dense_shape if isinstance(first, tf.SparseTensor) else tf.shape(first)
    return first[0]


def baseline_model_fn(features: Any, labels: Any, mode: str, head: Head, optimizer: Any) -> Any:
    with tf.variable_scope("baseline"):
        bias = tf.get_variable("bias", shape=[head.logits_dimension], initializer=tf.zeros_initializer())
        ones = tf.ones(tf.stack([tf.cast(_batch_size(features), tf.int32), head.logits_dimension]))
        logits = tf.reshape(bias * ones, [-1, head.logits_dimension])  # the rank known at build time

    def train_op_fn(loss: Any) -> Any:
        chosen = get_optimizer_instance(optimizer, _LEARNING_RATE)
        return chosen.minimize(loss, global_step=tf.train.get_global_step())
    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)


class _BaselineEstimator(Estimator):
    def __init__(self, head: Head, model_dir: Any, optimizer: Any, config: Any):
        def model_fn(features, labels, mode, config):
            return baseline_model_fn(features, labels, mode, head, optimizer)
        super().__init__(model_fn, model_dir=model_dir, config=config)


class BaselineClassifier(_BaselineEstimator):
    """Predicts the training labels' class distribution for every example."""

    def __init__(self, model_dir: Any = None, n_classes: int = 2, weight_column: Any = None,
                 label_vocabulary: Sequence[str] | None = None, optimizer: Any = "Ftrl", config: Any = None,
                 loss_reduction: str = tf.losses.Reduction.SUM):
        super().__init__(classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction), model_dir,
                         optimizer, config)


class BaselineRegressor(_BaselineEstimator):
    """Predicts the training labels' mean for every example."""

    def __init__(self, model_dir: Any = None, label_dimension: int = 1, weight_column: Any = None,
                 optimizer: Any = "Ftrl", config: Any = None, loss_reduction: str = tf.losses.Reduction.SUM):
        super().__init__(RegressionHead(label_dimension, weight_column, loss_reduction), model_dir, optimizer, config)
