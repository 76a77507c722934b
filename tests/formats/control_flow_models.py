"""Small TF1 models with v1 control flow (frames, Switch/Merge), written against `tf`.

Plain TF1 code run by tests/fixtures/formats/make_control_flow_fixtures.py with TensorFlow (v1
control flow switched on there), whose files the tests load in tftk:
  lstm, gru: a dynamic_rnn classifier (its while frame holds TensorArray reads and writes);
  switched: batch normalisation switched by an `is_training` placeholder_with_default and dropout by
  `dropout_on` (tf.cond's Switch/Merge pairs, in the forward pass, the moving-average updates and
  the gradients);
  nested: a tf.while_loop whose body holds another while_loop and a tf.cond on the loop counter.
"""

import numpy as np

KINDS = ("lstm", "gru", "switched", "nested")
TIME, FEATURES, UNITS, CLASSES = 5, 3, 6, 3


def build(tf, kind):
    """Build `kind` in the default graph; returns a dict of its tensors and ops."""
    rng = np.random.RandomState(KINDS.index(kind))
    init = tf.constant_initializer
    y = tf.placeholder(tf.float32, [None, CLASSES], name="y")
    is_training = None
    if kind == "switched":
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        is_training = tf.placeholder_with_default(False, [], name="is_training")
        w = tf.get_variable("dense/kernel", initializer=init(rng.randn(FEATURES, UNITS)), shape=[FEATURES, UNITS])
        h = tf.matmul(x, w)
        h = tf.layers.batch_normalization(h, training=is_training, momentum=0.9, name="bn")
        features = tf.nn.relu(h, name="features")
        dropout_on = tf.placeholder_with_default(False, [], name="dropout_on")  # apart, so training is repeatable
        h = tf.identity(tf.layers.dropout(features, rate=0.5, training=dropout_on, seed=1), name="dropped")
    elif kind == "nested":
        x = tf.placeholder(tf.float32, [None, FEATURES], name="x")
        w = tf.get_variable("dense/kernel", initializer=init(rng.randn(FEATURES, UNITS) * 0.5), shape=[FEATURES, UNITS])
        start = tf.tanh(tf.matmul(x, w))

        def inner(j, acc):
            return j + 1, acc * 0.5 + tf.sin(acc)

        def outer(i, acc):
            _, acc = tf.while_loop(lambda j, a: j < i, inner, [0, acc])
            acc = tf.cond(i > 1, lambda: acc + tf.cast(i, tf.float32), lambda: acc * 2.0)
            return i + 1, acc

        _, h = tf.while_loop(lambda i, a: i < 4, outer, [0, start])
    else:
        x = tf.placeholder(tf.float32, [None, TIME, FEATURES], name="x")
        lengths = tf.placeholder_with_default(tf.fill(tf.shape(x)[:1], TIME), [None], name="lengths")
        with tf.variable_scope("rnn"):
            cell = (tf.nn.rnn_cell.LSTMCell(UNITS, initializer=tf.random_normal_initializer(0, 0.5, seed=3))
                    if kind == "lstm" else
                    tf.nn.rnn_cell.GRUCell(UNITS, kernel_initializer=tf.random_normal_initializer(0, 0.5, seed=3)))
            scale = tf.get_variable("input_scale", initializer=init(1.0), shape=[FEATURES])  # so the gradient
            outputs, _ = tf.nn.dynamic_rnn(cell, x * scale, sequence_length=lengths,    # reads the input array too
                                           dtype=tf.float32)
        h = tf.reduce_mean(outputs, axis=1)
    w2 = tf.get_variable("out/kernel", initializer=init(rng.randn(UNITS, CLASSES) * 0.5), shape=[UNITS, CLASSES])
    b2 = tf.get_variable("out/bias", initializer=init(0.1), shape=[CLASSES])
    logits = tf.add(tf.matmul(h, w2), b2, name="logits")
    output = tf.nn.softmax(logits, name="output")
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    step = tf.train.get_or_create_global_step()
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step, name="train")
    return {"x": x, "y": y, "is_training": is_training, "logits": logits, "output": output, "loss": loss,
            "train_op": train_op, "global_step": step}


def data(kind, seed):
    """A fixed batch (inputs, one-hot labels) for `kind`."""
    rng = np.random.RandomState(seed)
    x = rng.randn(4, FEATURES) if kind in ("switched", "nested") else rng.randn(4, TIME, FEATURES)
    labels = np.eye(CLASSES)[rng.randint(0, CLASSES, 4)]
    return x.astype(np.float32), labels.astype(np.float32)
