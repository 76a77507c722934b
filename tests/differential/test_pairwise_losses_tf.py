"""tf.losses.cosine_distance and mean_pairwise_squared_error against real TensorFlow (values, gradients,
the LOSSES collection)."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1310)


def unit(*shape):
    x = RNG.uniform(-1, 1, shape)
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


OPS = [
    ("cosine_distance", "tf.losses.cosine_distance(x, y, axis=1)", {"x": unit(4, 3), "y": unit(4, 3)}),
    ("cosine_distance_weights", "tf.losses.cosine_distance(x, y, dim=2, weights=w)",
     {"x": unit(2, 3, 4), "y": unit(2, 3, 4), "w": np.array([[[1.0], [0.0], [2.0]], [[0.5], [1.0], [0.0]]], np.float32)}),
    ("cosine_distance_none", "tf.losses.cosine_distance(x, y, axis=-1, reduction=tf.losses.Reduction.NONE)",
     {"x": unit(3, 2), "y": unit(3, 2)}),
    ("mean_pairwise_squared_error", "tf.losses.mean_pairwise_squared_error(x, y)",
     {"x": RNG.uniform(-1, 1, (3, 4)).astype(np.float32), "y": RNG.uniform(-1, 1, (3, 4)).astype(np.float32)}),
    ("mean_pairwise_weights", "tf.losses.mean_pairwise_squared_error(x, y, weights=w)",
     {"x": RNG.uniform(-1, 1, (3, 2, 2)).astype(np.float32), "y": RNG.uniform(-1, 1, (3, 2, 2)).astype(np.float32),
      "w": np.array([[[1.0]], [[0.5]], [[3.0]]], np.float32)}),
]

ROWS = [op_row(name, build, inputs) for name, build, inputs in OPS] + [
    Row("collections", "a = tf.losses.cosine_distance(tf.ones([2, 2]), tf.ones([2, 2]), axis=1)\n"
        "b = tf.losses.mean_pairwise_squared_error(tf.ones([2, 3]), tf.zeros([2, 3]))\n"
        "fetch = {'n': tf.constant(len(tf.losses.get_losses())), 'total': tf.add_n(tf.losses.get_losses())}\n"),
    Row("cosine_distance_no_axis", "tf.losses.cosine_distance(tf.ones([2]), tf.ones([2]))\nfetch = {}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("pairwise_losses", ROWS)
