"""Small TF1 training programs, written against `tf`, whose tftk-written `.meta` real TF must run.

Each builder makes its graph in the default graph and returns (feed placeholders, loss, train_op);
`batches(name, steps)` gives the same fixed feeds to both runtimes. Dropout is fed keep_prob 1 so
the two random streams do not enter the comparison.
"""

import numpy as np


def _dense_head(tf, h, width, classes, seed):
    rng = np.random.RandomState(seed)
    w = tf.get_variable("out/kernel", initializer=tf.constant_initializer(rng.randn(width, classes) * 0.3),
                        shape=[width, classes])
    b = tf.get_variable("out/bias", initializer=tf.constant_initializer(0.05), shape=[classes])
    return tf.add(tf.matmul(h, w), b, name="logits")


def softmax_regression(tf):
    """The mnist_softmax tutorial's model (mean of -sum(y log softmax)), plain gradient descent."""
    x = tf.placeholder(tf.float32, [None, 12], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    w = tf.Variable(tf.zeros([12, 4]), name="W")
    b = tf.Variable(tf.zeros([4]), name="b")
    probs = tf.nn.softmax(tf.matmul(x, w) + b)
    loss = tf.reduce_mean(-tf.reduce_sum(y * tf.log(probs + 1e-6), reduction_indices=[1]), name="loss")
    return [x, y], loss, tf.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")


def mlp_momentum(tf):
    """Two layers, sigmoid and tanh, squared error with broadcasting, Momentum and a global step."""
    x = tf.placeholder(tf.float32, [None, 12], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    rng = np.random.RandomState(3)
    w1 = tf.get_variable("h/kernel", initializer=tf.constant_initializer(rng.randn(12, 6) * 0.4), shape=[12, 6])
    h = tf.tanh(tf.matmul(x, w1)) * tf.sigmoid(tf.reduce_max(x, axis=1, keepdims=True))
    logits = _dense_head(tf, h, 6, 4, 4)
    loss = tf.reduce_mean(tf.square(logits - y), name="loss") + 0.01 * tf.nn.l2_loss(w1)
    loss = tf.identity(loss, name="total_loss")
    step = tf.train.get_or_create_global_step()
    return [x, y], loss, tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=step, name="train")


def sliced_rmsprop(tf):
    """Slices in the forward pass (and StridedSliceGrad in the backward one), RMSProp."""
    x = tf.placeholder(tf.float32, [None, 12], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    rng = np.random.RandomState(8)
    w1 = tf.get_variable("h/kernel", initializer=tf.constant_initializer(rng.randn(10, 8) * 0.4), shape=[10, 8])
    h = tf.tanh(tf.matmul(x[:, 2:], w1))
    logits = _dense_head(tf, h[:, ::2] - h[:, -1:], 4, 4, 9)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    return [x, y], loss, tf.train.RMSPropOptimizer(0.01).minimize(loss, name="train")


def mixed_adagrad(tf):
    """concat, split, clip_by_value, maximum, l2_normalize, sigmoid cross-entropy; Adagrad."""
    x = tf.placeholder(tf.float32, [None, 12], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    rng = np.random.RandomState(10)
    w1 = tf.get_variable("h/kernel", initializer=tf.constant_initializer(rng.randn(12, 6) * 0.4), shape=[12, 6])
    h = tf.matmul(x, w1)
    left, right = tf.split(h, 2, axis=1)
    h = tf.concat([tf.clip_by_value(left, -0.5, 0.5), tf.maximum(right, 0.1), tf.nn.l2_normalize(h, 1)], 1)
    logits = _dense_head(tf, h, 12, 4, 11)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    return [x, y], loss, tf.train.AdagradOptimizer(0.1).minimize(loss, name="train")


def cnn_adam(tf):
    """conv + bias + relu + max_pool + reshape + dense, softmax cross-entropy, Adam."""
    x = tf.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    rng = np.random.RandomState(5)
    k = tf.get_variable("conv/kernel", initializer=tf.constant_initializer(rng.randn(3, 3, 2, 4) * 0.3),
                        shape=[3, 3, 2, 4])
    kb = tf.get_variable("conv/bias", initializer=tf.constant_initializer(0.1), shape=[4])
    h = tf.nn.relu(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME") + kb)
    h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    logits = _dense_head(tf, tf.reshape(h, [-1, 36]), 36, 4, 6)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    step = tf.train.get_or_create_global_step()
    return [x, y], loss, tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step, name="train")


def deep_mnist(tf):
    """The deep-MNIST tutorial (two conv layers, dropout, Adam) as in tests/formats, its initial weights
    seeded: unseeded, some draws start where Adam's first steps magnify rounding (a 3.6e-5 relative
    difference from TF's loss after 3 steps in one run of 9, about 1e-6 in the others)."""
    from tests.formats.deep_mnist_model import build
    tf.set_random_seed(0)
    x, y_, keep_prob, train_step, _ = build(tf)
    loss = tf.get_default_graph().get_tensor_by_name("loss/Mean:0")
    return [x, y_, keep_prob], loss, train_step


def dynamic_rnn(tf, cell):
    """dynamic_rnn over `cell` (a while loop and its gradient), Adam."""
    x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    logits = _dense_head(tf, outputs[:, -1], 6, 4, 7)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    return [x, y], loss, tf.train.AdamOptimizer(0.01).minimize(loss, name="train")


def static_rnn(tf, cell):
    """An RNN unrolled by static_rnn (no while loop) over `cell`, Adam."""
    x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 4], name="y")
    outputs, _ = tf.nn.static_rnn(cell(tf, 6), tf.unstack(x, axis=1), dtype=tf.float32)
    logits = _dense_head(tf, outputs[-1], 6, 4, 12)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
    return [x, y], loss, tf.train.AdamOptimizer(0.02).minimize(loss, name="train")


MODELS = {"softmax_regression": softmax_regression, "mlp_momentum": mlp_momentum, "cnn_adam": cnn_adam,
          "sliced_rmsprop": sliced_rmsprop, "mixed_adagrad": mixed_adagrad,
          "static_lstm": lambda tf: static_rnn(tf, lambda tf, n: tf.nn.rnn_cell.BasicLSTMCell(n)),
          "static_gru": lambda tf: static_rnn(tf, lambda tf, n: tf.nn.rnn_cell.GRUCell(n)),
          "deep_mnist": deep_mnist, "lstm_adam": lambda tf: dynamic_rnn(tf, tf.nn.rnn_cell.BasicLSTMCell(6)),
          "gru_adam": lambda tf: dynamic_rnn(tf, tf.nn.rnn_cell.GRUCell(6))}
_SHAPES = {"softmax_regression": ((8, 12), 4), "mlp_momentum": ((8, 12), 4), "sliced_rmsprop": ((8, 12), 4),
           "mixed_adagrad": ((8, 12), 4), "static_lstm": ((6, 5, 3), 4), "static_gru": ((6, 5, 3), 4), "cnn_adam": ((5, 6, 6, 2), 4),
           "deep_mnist": ((4, 784), 10), "lstm_adam": ((6, 5, 3), 4), "gru_adam": ((6, 5, 3), 4)}


def batches(name, steps):
    """`steps` fixed feeds for model `name`: [inputs, one-hot labels(, keep_prob 1)] per step."""
    rng = np.random.RandomState(11)
    shape, classes = _SHAPES[name]
    out = []
    for _ in range(steps):
        feed = [rng.rand(*shape).astype(np.float32), np.eye(classes, dtype=np.float32)[rng.randint(0, classes, shape[0])]]
        if name == "deep_mnist":
            feed.append(np.float32(1.0))
        out.append(feed)
    return out
