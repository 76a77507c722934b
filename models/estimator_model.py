"""Models given as a `tf.estimator` model_fn, run by `tftk train` like any registered model.

A subclass of `ModelFnClassifier` provides `model_fn(features, labels, mode, params)` — the same
function `tf.estimator.Estimator(model_fn)` takes — and tftk's run machinery does the rest: the
graph is the model_fn's TRAIN spec (its train_op and loss, its `tf.summary` ops written to the run
folder), checkpoints are the run folder's `model.ckpt-N`, evaluation and `tftk infer` use the
PREDICT spec's `class_ids`, and the metrics feed the best-config store as for the other models.

The PREDICT spec is built in the same graph with variables reused, so the model_fn must create its
variables with `tf.get_variable` or `tf.layers` (as an Estimator's model_fn does); one creating
`tf.Variable`s in PREDICT mode is refused, since its predictions would not use the trained weights.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import Field

import tftk as tf
from tftk.config import ModelParams
from tftk.ops import summary_ops
from tftk.user_input import UserInputError

from models.image_classifier import ImageClassifier

__all__ = ["ModelFnClassifier", "EstimatorMLP", "EstimatorMLPParams"]


class ModelFnClassifier(ImageClassifier):
    """An image classifier whose graph comes from `model_fn(features={"images": ...}, labels, mode, params)`.

    `params` is the run config's hyperparameters (lr, nb_units, initial_stddev, ...) and the model
    section, as one dict; the PREDICT spec's predictions must hold `class_ids` ([batch] or [batch, 1]).
    """

    FEATURE_KEY: ClassVar[str] = "images"

    def model_fn(self, features: dict, labels: Any, mode: str, params: dict) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.model_fn")

    def model_fn_params(self) -> dict[str, Any]:
        """What the model_fn receives as `params`."""
        fields = ("lr", "nb_units", "initial_mean", "initial_stddev", "batch_size")
        return {**{name: getattr(self, name) for name in fields}, "num_classes": self.num_classes,
                **self.params.model_dump()}

    def build_graph(self, graph: tf.Graph) -> None:
        from tftk.estimator import EstimatorSpec, ModeKeys
        self.images_placeholder, self.labels_placeholder = self.placeholder_inputs()
        features, params = {self.FEATURE_KEY: self.images_placeholder}, self.model_fn_params()
        train = self.model_fn(features, self.labels_placeholder, ModeKeys.TRAIN, params)
        if not isinstance(train, EstimatorSpec):
            raise UserInputError(f"{type(self).__name__}.model_fn should return a tf.estimator.EstimatorSpec, it "
                                 f"returned {type(train).__name__}")
        created = len(tf.global_variables())
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            predict = self.model_fn(features, None, ModeKeys.PREDICT, params)
        if len(tf.global_variables()) != created:
            raise UserInputError(f"{type(self).__name__}.model_fn created new variables in PREDICT mode: create them "
                                 f"with tf.get_variable or tf.layers so that every mode uses the trained weights")
        if not isinstance(predict.predictions, dict) or "class_ids" not in predict.predictions:
            raise UserInputError(f"{type(self).__name__}.model_fn's PREDICT spec must have a 'class_ids' prediction "
                                 f"(the predicted class of each example)")
        self.total_loss, self.train_op = train.loss, train.train_op
        if not any(s.op.name == "loss" for s in tf.get_collection(tf.GraphKeys.SUMMARIES)):
            summary_ops.scalar("loss", self.total_loss)  # as Estimator.train adds one
        self.predictions = tf.reshape(tf.cast(predict.predictions["class_ids"], tf.int64), [-1], name="predictions")
        self.eval_correct = tf.reduce_sum(tf.cast(tf.equal(self.predictions, tf.to_int64(self.labels_placeholder)),
                                                  tf.int32))
        self.summary = summary_ops.merge_all()


class EstimatorMLPParams(ModelParams):
    """The `model:` section of EstimatorMLP."""

    hidden2: int = Field(32, gt=0, description="units of the second hidden layer")


class EstimatorMLP(ModelFnClassifier):
    """MnistMLP's network (two ReLU layers, softmax) written as a tf.estimator model_fn: the same function
    trains with `tftk train` and with `tf.estimator.Estimator(EstimatorMLP.estimator_model_fn, params=...)`."""

    Params = EstimatorMLPParams

    def model_fn(self, features: dict, labels: Any, mode: str, params: dict) -> Any:
        return self.estimator_model_fn(features, labels, mode, params)

    @staticmethod
    def estimator_model_fn(features: dict, labels: Any, mode: str, params: dict) -> Any:
        """model_fn(features={"images": [batch, pixels]}, labels=[batch] int, mode, params) -> EstimatorSpec."""
        from tftk.estimator import EstimatorSpec, ModeKeys
        init = tf.truncated_normal_initializer(params.get("initial_mean", 0.0), params["initial_stddev"])
        hidden1 = tf.layers.dense(features["images"], params["nb_units"], tf.nn.relu, kernel_initializer=init,
                                  name="hidden1")
        hidden2 = tf.layers.dense(hidden1, params["hidden2"], tf.nn.relu, kernel_initializer=init, name="hidden2")
        logits = tf.layers.dense(hidden2, params["num_classes"], kernel_initializer=init, name="softmax_linear")
        class_ids = tf.argmax(logits, 1)
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions={"class_ids": class_ids, "probabilities": tf.nn.softmax(logits)})
        loss = tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)
        summary_ops.scalar("cross_entropy", loss)
        train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(loss, global_step=tf.train.get_global_step())
        accuracy = tf.metrics.accuracy(labels, class_ids)
        return EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"accuracy": accuracy})

    @classmethod
    def random_params(cls, rng: np.random.Generator) -> dict[str, Any]:
        params = super().random_params(rng)
        params["model.hidden2"] = int(rng.choice([16, 32, 64]))
        return params
