"""`tf.estimator.LinearClassifier` / `LinearRegressor`: `tf.feature_column.linear_model` under the
variable scope 'linear' (variables linear/linear_model/<column>/weights and
linear/linear_model/bias_weights, as TF names them), FTRL by default."""

from __future__ import annotations

import math
from typing import Any, Sequence

import tftk as tf
from tftk.estimator.canned.head import Head, RegressionHead, classifier_head
from tftk.estimator.canned.optimizers import get_optimizer_instance
from tftk.estimator.estimator import Estimator

__all__ = ["LinearClassifier", "LinearRegressor", "linear_logits"]

_LEARNING_RATE = 0.2


def _default_learning_rate(feature_columns: Sequence[Any]) -> float:
    return min(_LEARNING_RATE, 1.0 / math.sqrt(len(feature_columns)))


def linear_logits(features: Any, feature_columns: Sequence[Any], units: int, sparse_combiner: str) -> Any:
    """The linear model's logits, with TF's 'bias' and 'fraction_of_zero_weights' summaries."""
    from tftk.feature_column import linear_model
    cols_to_vars: dict = {}
    logits = linear_model(features, feature_columns, units=units, sparse_combiner=sparse_combiner,
                          cols_to_vars=cols_to_vars)
    bias = cols_to_vars.pop("bias")
    if units > 1:
        tf.summary.histogram("bias", bias[0])
    else:
        tf.summary.scalar("bias", bias[0][0])
    weights = [v for variables in cols_to_vars.values() for v in variables]
    if weights:
        zeros = tf.add_n([tf.reduce_sum(tf.cast(tf.equal(v, 0.0), tf.float32)) for v in weights])
        total = float(sum(v.shape.num_elements() for v in weights))
        tf.summary.scalar("fraction_of_zero_weights", zeros / total)
    return logits


def _check_columns(feature_columns: Any, what: str) -> list:
    columns = list(feature_columns or [])
    if not columns:
        raise ValueError(f"{what} must not be empty: give the feature columns the model reads")
    return columns


def linear_model_fn(features: Any, labels: Any, mode: str, head: Head, feature_columns: Sequence[Any],
                    optimizer: Any, sparse_combiner: str) -> Any:
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: {type(features).__name__}")
    with tf.variable_scope("linear"):
        logits = linear_logits(features, feature_columns, head.logits_dimension, sparse_combiner)

    def train_op_fn(loss: Any) -> Any:
        chosen = get_optimizer_instance(optimizer, _default_learning_rate(feature_columns))
        return chosen.minimize(loss, global_step=tf.train.get_global_step())
    return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)


class _LinearEstimator(Estimator):
    def __init__(self, head: Head, feature_columns: Any, model_dir: Any, optimizer: Any, config: Any,
                 warm_start_from: Any, sparse_combiner: str):
        columns = _check_columns(feature_columns, "feature_columns")
        if sparse_combiner not in ("mean", "sqrtn", "sum"):
            raise ValueError(f"sparse_combiner must be one of 'mean', 'sqrtn', 'sum', given {sparse_combiner!r}")

        def model_fn(features, labels, mode, config):
            return linear_model_fn(features, labels, mode, head, columns, optimizer, sparse_combiner)
        super().__init__(model_fn, model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifier(_LinearEstimator):
    """A linear classifier (logistic regression for 2 classes, softmax above)."""

    def __init__(self, feature_columns: Sequence[Any], model_dir: Any = None, n_classes: int = 2,
                 weight_column: Any = None, label_vocabulary: Sequence[str] | None = None, optimizer: Any = "Ftrl",
                 config: Any = None, partitioner: Any = None, warm_start_from: Any = None,
                 loss_reduction: str = tf.losses.Reduction.SUM, sparse_combiner: str = "sum"):
        head = classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from, sparse_combiner)


class LinearRegressor(_LinearEstimator):
    """Linear regression with a squared-error loss."""

    def __init__(self, feature_columns: Sequence[Any], model_dir: Any = None, label_dimension: int = 1,
                 weight_column: Any = None, optimizer: Any = "Ftrl", config: Any = None, partitioner: Any = None,
                 warm_start_from: Any = None, loss_reduction: str = tf.losses.Reduction.SUM,
                 sparse_combiner: str = "sum"):
        head = RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config, warm_start_from, sparse_combiner)
