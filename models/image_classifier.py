"""The driver half of TF1's fully_connected_feed tutorial, shared by the image classifiers.

Summary ops come from tftk.ops.summary_ops: importing tftk.summary (FileWriter) rebinds
`tf.summary` to that package, so `tf.summary.scalar` fails in a second model of one process.

Placeholders, feed dicts, the loss, the in_top_k evaluation and `do_eval`'s printout live here;
a subclass gives `inference(images)` (the logits) and `optimizer()`.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import ClassVar

import numpy as np

import tftk as tf
from tftk.datasets import DataSet, Datasets, get_spec, load_dataset
from tftk.user_input import UserInputError
from tftk.ops import summary_ops

from models.basic_model import BasicModel
from models.record_input import record_batches, write_example_records

__all__ = ["ImageClassifier"]

EVAL_CHUNK = 1000  # examples per Session.run during evaluation and inference


class ImageClassifier(BasicModel):
    """A classifier of a dataset's images into its classes, trained on mini-batches of the train split."""

    flat_inputs: ClassVar[bool] = True  # images as rows of pixels (MLP) or as NHWC arrays (conv nets)
    METRICS = ("train_accuracy", "validation_accuracy", "test_accuracy")

    @classmethod
    def check_config(cls, config) -> None:
        super().check_config(config)
        spec = get_spec(config.dataset)
        missing = [f.name for f in spec.files if not (Path(config.data_dir) / spec.name / f.name).exists()]
        if missing:
            raise UserInputError(f"{Path(config.data_dir) / spec.name / missing[0]} not found: run `tftk download-data "
                                 f"{spec.name} --data-dir {config.data_dir}` (or place the file there by hand)")

    def set_model_props(self) -> None:
        self.spec = get_spec(self.config.dataset)
        self.num_classes = self.spec.num_classes
        self.input_shape = (self.spec.input_size,) if self.flat_inputs else self.spec.image_shape
        if self.reads_records and not self.for_inference:
            self._write_missing_records()

    @cached_property
    def data_sets(self) -> Datasets:
        """train / validation / test splits, loaded on first use (inference does not need them)."""
        return load_dataset(self.config.dataset, self.config.data_dir, seed=self.random_seed,
                            flatten=self.flat_inputs)

    @property
    def train_data(self) -> DataSet:
        return self.data_sets.train

    # ---- the graph ------------------------------------------------------------------------------
    def build_graph(self, graph: tf.Graph) -> None:
        self.images_placeholder, self.labels_placeholder = self.placeholder_inputs()
        self.logits = self.inference(self.images_placeholder)
        self.total_loss = self.loss(self.logits, self.labels_placeholder)
        self.train_op = self.training(self.total_loss)
        self.eval_correct = self.evaluation(self.logits, self.labels_placeholder)
        self.predictions = tf.argmax(self.logits, 1, name="predictions")
        self.summary = summary_ops.merge_all()

    def placeholder_inputs(self) -> tuple[tf.Tensor, tf.Tensor]:
        """Placeholders for a batch of images and their int32 labels (any batch size).

        With `model.train_records` set they default to the next batch of the TFRecord pipeline
        (models/record_input.py): training runs feed nothing, evaluation feeds numpy arrays.
        """
        if self.reads_records:
            batch_images, batch_labels = record_batches(self.params, self.input_shape, self.batch_size,
                                                        self.random_seed)
            return (tf.placeholder_with_default(batch_images, (None, *self.input_shape), name="images"),
                    tf.placeholder_with_default(batch_labels, (None,), name="labels"))
        images = tf.placeholder(tf.float32, shape=(None, *self.input_shape), name="images")
        labels = tf.placeholder(tf.int32, shape=(None,), name="labels")
        return images, labels

    @property
    def reads_records(self) -> bool:
        """Whether training batches come from TFRecord files (`model.train_records`)."""
        return getattr(self.params, "train_records", None) is not None

    def _write_missing_records(self) -> None:
        path = Path(self.params.train_records)
        if self.params.write_records and not path.exists() and not any(c in str(path) for c in "*?["):
            count = write_example_records(path, self.data_sets.train.images, self.data_sets.train.labels)
            self.log(f"Wrote {count} training examples to {path}")

    def inference(self, images: tf.Tensor) -> tf.Tensor:
        raise NotImplementedError(f"{type(self).__name__}.inference")

    def optimizer(self):
        raise NotImplementedError(f"{type(self).__name__}.optimizer")

    def loss(self, logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        """Mean softmax cross-entropy of the logits against the integer labels."""
        return tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)

    def training(self, loss: tf.Tensor) -> tf.Operation:
        """A scalar summary of the loss and the op that takes one optimizer step (counting global_step)."""
        summary_ops.scalar("loss", loss)
        return self.optimizer().minimize(loss, global_step=self.global_step)

    def evaluation(self, logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        """How many examples of the batch have the true label as their top prediction."""
        correct = tf.nn.in_top_k(logits, labels, 1)
        return tf.reduce_sum(tf.cast(correct, tf.int32))

    def training_feed(self) -> dict:
        """Extra feeds of a training step (e.g. dropout's keep_prob)."""
        return {}

    # ---- running it -----------------------------------------------------------------------------
    def fill_feed_dict(self, data_set: DataSet) -> dict:
        """The next training batch as a feed dict (only the extra feeds when tf.data supplies batches)."""
        if self.reads_records:
            return self.training_feed()
        images, labels = data_set.next_batch(self.batch_size)
        return {self.images_placeholder: images, self.labels_placeholder: labels, **self.training_feed()}

    def learn_from_epoch(self, step: int) -> dict[str, float]:
        feed_dict = self.fill_feed_dict(self.train_data)
        if self.summary is not None and self.sw is not None and self.is_log_step(step):
            _, loss_value, summary = self.sess.run([self.train_op, self.total_loss, self.summary], feed_dict)
            self.sw.add_summary(summary, step)
        else:
            _, loss_value = self.sess.run([self.train_op, self.total_loss], feed_dict)
        return {"loss": float(loss_value)}

    def do_eval(self, title: str, data_set: DataSet) -> float:
        """Print and return the precision @ 1 over every example of `data_set`."""
        true_count = 0
        for start in range(0, data_set.num_examples, EVAL_CHUNK):
            true_count += int(self.sess.run(self.eval_correct, {
                self.images_placeholder: data_set.images[start:start + EVAL_CHUNK],
                self.labels_placeholder: data_set.labels[start:start + EVAL_CHUNK]}))
        precision = true_count / max(data_set.num_examples, 1)
        self.log(f"{title} Data Eval:")
        self.log(f"  Num examples: {data_set.num_examples}  Num correct: {true_count}  "
                 f"Precision @ 1: {precision:0.04f}")
        return precision

    def evaluate(self) -> dict[str, float]:
        """Precision @ 1 on the train, validation and test splits, as the tutorial prints them."""
        return {f"{split}_accuracy": self.do_eval(title, getattr(self.data_sets, split))
                for split, title in (("train", "Training"), ("validation", "Validation"), ("test", "Test"))}

    def prepare_inputs(self, inputs: np.ndarray) -> np.ndarray:
        """`inputs` as float32 model inputs; integer arrays are raw pixels, scaled as the dataset's are."""
        inputs = np.asarray(inputs)
        if inputs.dtype.kind not in "uif":
            raise UserInputError(f"inputs must be numbers, got dtype {inputs.dtype}")
        if inputs.ndim == 0 or int(np.prod(inputs.shape[1:])) != self.spec.input_size:
            raise UserInputError(f"inputs of shape {inputs.shape} do not fit {self.spec.name} images: expected "
                                 f"(N, {self.spec.input_size}) or (N, {', '.join(map(str, self.spec.image_shape))})")
        scaled = inputs.astype(np.float32)
        if inputs.dtype.kind in "ui":
            scaled /= np.float32(self.spec.max_value)
        return scaled.reshape((len(inputs), *self.input_shape))

    def infer(self, inputs: np.ndarray) -> np.ndarray:
        """The predicted class of each input image."""
        images = self.prepare_inputs(inputs)
        return np.concatenate([self.sess.run(self.predictions, {self.images_placeholder: images[i:i + EVAL_CHUNK]})
                               for i in range(0, len(images), EVAL_CHUNK)] or [np.zeros(0, np.int64)])
