"""ConvNet: conv -> max_pool -> LRN, twice, then a dense ReLU layer with dropout and the logits (28x28 or 8x8 images)."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

import tftk as tf
from models.image_classifier import ImageClassifier
from models.record_input import RecordInputParams

__all__ = ["ConvNet", "ConvNetParams"]


class ConvNetParams(RecordInputParams):
    """The `model:` section of ConvNet (training batches may come from TFRecords: RecordInputParams)."""

    conv1_filters: int = Field(32, gt=0, description="filters of the first convolution")
    conv2_filters: int = Field(64, gt=0, description="filters of the second convolution")
    kernel_size: int = Field(5, gt=0, description="height and width of the convolution kernels")
    keep_prob: float = Field(0.5, gt=0, le=1, description="dropout keep probability of the dense layer in training")


class ConvNet(ImageClassifier):
    """Two conv / max_pool / LRN blocks and a dense layer with dropout, trained with Adam (TF1's deep MNIST)."""

    Params = ConvNetParams
    flat_inputs = False

    def inference(self, images: tf.Tensor) -> tf.Tensor:
        """Logits of NHWC images; each block halves height and width (SAME padding)."""
        self.keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
        block1 = self._conv_block("conv1", images, self.params.conv1_filters)
        block2 = self._conv_block("conv2", block1, self.params.conv2_filters)
        with tf.name_scope("dense"):
            flat = tf.layers.flatten(block2)
            dense = tf.nn.relu(self._affine(flat, self.nb_units))
            dropped = tf.nn.dropout(dense, keep_prob=self.keep_prob)
            dropped.set_shape(dense.shape)  # tftk's dropout does not infer its static shape yet
        with tf.name_scope("softmax_linear"):
            return self._affine(dropped, self.num_classes)

    def _conv_block(self, scope: str, inputs: tf.Tensor, filters: int) -> tf.Tensor:
        """conv (ReLU) -> 2x2 max_pool -> local response normalisation."""
        size = self.params.kernel_size
        with tf.name_scope(scope):
            kernel = tf.Variable(tf.truncated_normal([size, size, int(inputs.shape[-1]), filters],
                                                     mean=self.initial_mean, stddev=self.initial_stddev),
                                 name="weights")
            biases = tf.Variable(tf.constant(0.1, shape=[filters]), name="biases")
            conv = tf.nn.relu(tf.nn.conv2d(inputs, kernel, strides=[1, 1, 1, 1], padding="SAME") + biases)
            pool = tf.nn.max_pool(conv, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
            return tf.nn.lrn(pool, depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)

    def _affine(self, inputs: tf.Tensor, units: int) -> tf.Tensor:
        weights = tf.Variable(tf.truncated_normal([int(inputs.shape[1]), units], mean=self.initial_mean,
                                                  stddev=self.initial_stddev), name="weights")
        return tf.matmul(inputs, weights) + tf.Variable(tf.zeros([units]), name="biases")

    def optimizer(self) -> tf.train.Optimizer:
        return tf.train.AdamOptimizer(self.lr)

    def training_feed(self) -> dict:
        return {self.keep_prob: self.params.keep_prob}

    @classmethod
    def random_params(cls, rng: np.random.Generator) -> dict[str, Any]:
        params = super().random_params(rng)
        params["lr"] = float(10 ** rng.uniform(-4, -2))
        params["model.keep_prob"] = float(rng.uniform(0.3, 1.0))
        return params
