"""The two small models the TF-written fixtures hold (an MLP and a CNN), written against `tf`.

Plain TF1 code run unchanged by tests/fixtures/formats/make_fixtures.py (with TensorFlow) and
by the tests (with tftk), so a checkpoint written by one can be resumed by the other.
"""

import numpy as np


def build(tf, kind):
    """Build `kind` ("mlp" or "cnn") in the default graph; returns a dict of its tensors and ops."""
    x = tf.placeholder(tf.float32, [None, 6, 6, 1] if kind == "cnn" else [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    init = tf.constant_initializer
    rng = np.random.RandomState(1 if kind == "cnn" else 0)
    if kind == "cnn":
        k = tf.get_variable("conv/kernel", initializer=init(rng.randn(3, 3, 1, 4) * 0.3), shape=[3, 3, 1, 4])
        kb = tf.get_variable("conv/bias", initializer=init(0.1), shape=[4])
        h = tf.nn.relu(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME") + kb)
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        h = tf.reshape(h, [-1, 3 * 3 * 4])
        width = 36
    else:
        w1 = tf.get_variable("dense/kernel", initializer=init(rng.randn(4, 8) * 0.5), shape=[4, 8])
        b1 = tf.get_variable("dense/bias", initializer=init(0.1), shape=[8])
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        width = 8
    w2 = tf.get_variable("out/kernel", initializer=init(rng.randn(width, 3) * 0.5), shape=[width, 3])
    b2 = tf.get_variable("out/bias", initializer=init(0.0), shape=[3])
    logits = tf.add(tf.matmul(h, w2), b2, name="logits")
    output = tf.nn.softmax(logits, name="output")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step, name="train")
    return {"x": x, "y": y, "logits": logits, "output": output, "loss": loss, "train_op": train_op,
            "global_step": step}


def data(kind, seed):
    """A fixed batch (inputs, one-hot labels) for `kind`."""
    rng = np.random.RandomState(seed)
    x = rng.rand(5, 6, 6, 1) if kind == "cnn" else rng.rand(5, 4)
    labels = np.eye(3)[rng.randint(0, 3, 5)]
    return x.astype(np.float32), labels.astype(np.float32)
