"""`tensorflow.examples.tutorials.mnist.mnist`: the TF1 tutorial's two-hidden-layer MNIST model.

The "TensorFlow Mechanics 101" model module as TF 1.x shipped it: `inference` builds the
network (name scopes hidden1, hidden2, softmax_linear, each holding `weights` and `biases`),
`loss` its cross-entropy, `training` the SGD step with a `global_step` variable, `evaluation`
the count of correct top-1 predictions.
"""

from __future__ import annotations

import math

import tftk as tf

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _layer(inputs: tf.Tensor, fan_in: int, units: int) -> tf.Tensor:
    """`inputs @ weights + biases`, weights drawn with stddev 1/sqrt(fan_in) as the tutorial does."""
    weights = tf.Variable(tf.truncated_normal([fan_in, units], stddev=1.0 / math.sqrt(float(fan_in))),
                          name="weights")
    biases = tf.Variable(tf.zeros([units]), name="biases")
    return tf.matmul(inputs, weights) + biases


def inference(images: tf.Tensor, hidden1_units: int, hidden2_units: int) -> tf.Tensor:
    """Logits [batch, NUM_CLASSES] of two ReLU layers and a linear softmax layer over `images`."""
    with tf.name_scope("hidden1"):
        hidden1 = tf.nn.relu(_layer(images, IMAGE_PIXELS, hidden1_units))
    with tf.name_scope("hidden2"):
        hidden2 = tf.nn.relu(_layer(hidden1, hidden1_units, hidden2_units))
    with tf.name_scope("softmax_linear"):
        return _layer(hidden2, hidden2_units, NUM_CLASSES)


def loss(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    """Mean sparse softmax cross-entropy of `logits` against integer `labels`."""
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss: tf.Tensor, learning_rate: float) -> tf.Operation:
    """A gradient-descent step on `loss` that increments a `global_step` variable; logs a loss summary."""
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return optimizer.minimize(loss, global_step=global_step)


def evaluation(logits: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
    """How many rows of `logits` rank their label first (an int32 scalar)."""
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))
