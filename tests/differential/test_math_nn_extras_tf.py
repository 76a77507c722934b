"""Inverse hyperbolics, *_no_nan division, moment reductions and small tf.nn extras against real TF."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(41)


def vec(*shape, lo=-1.0, hi=1.0, dtype=np.float64):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


WITH_ZEROS = np.array([[0.0, 1.5, -2.0], [0.0, 0.25, 3.0]])
OPS = [
    ("acosh", "tf.acosh(x)", {"x": vec(5, lo=1.1, hi=4.0)}, True),
    ("asinh", "tf.math.asinh(x)", {"x": vec(5, lo=-3.0, hi=3.0)}, True),
    ("atanh", "tf.atanh(x)", {"x": vec(5, lo=-0.9, hi=0.9)}, True),
    ("atanh_f32", "tf.atanh(x)", {"x": vec(5, lo=-0.9, hi=0.9, dtype=np.float32)}, True),
    ("div_no_nan", "tf.div_no_nan(x, y)", {"x": vec(2, 3), "y": WITH_ZEROS}, True),
    ("divide_no_nan_broadcast", "tf.math.divide_no_nan(x, y)", {"x": vec(2, 1), "y": WITH_ZEROS}, True),
    ("multiply_no_nan", "tf.math.multiply_no_nan(x, y)", {"x": vec(2, 3), "y": WITH_ZEROS}, True),
    ("reciprocal_no_nan", "tf.math.reciprocal_no_nan(y)", {"y": WITH_ZEROS}, True),
    ("xlog1py", "tf.math.xlog1py(x, y)", {"x": np.array([0.0, 1.0, 2.0]), "y": np.array([-1.0, 0.5, 3.0])}, False),
    ("log_sigmoid", "tf.math.log_sigmoid(x)", {"x": vec(6, lo=-30.0, hi=30.0)}, True),
    ("reduce_variance", "tf.math.reduce_variance(x, axis=1)", {"x": vec(3, 4)}, True),
    ("reduce_std", "tf.math.reduce_std(x, axis=[0, 2], keepdims=True)", {"x": vec(2, 3, 4)}, True),
    ("reduce_euclidean_norm", "tf.math.reduce_euclidean_norm(x, 0)", {"x": vec(3, 4)}, True),
    ("zero_fraction", "tf.math.zero_fraction(y) + tf.nn.zero_fraction(x)", {"y": WITH_ZEROS, "x": vec(3)}, False),
    ("math_aliases", "tf.math.log_softmax(x) + tf.math.softmax(x) + tf.math.softsign(x) + tf.math.scalar_mul(2.0, x)",
     {"x": vec(2, 4)}, True),
    ("math_top_k", "tf.math.top_k(x, 2)[0]", {"x": vec(3, 5)}, True),
    ("swish_silu", "tf.nn.swish(x) + tf.nn.silu(x)", {"x": vec(6, lo=-4.0, hi=4.0)}, True),
    ("max_pool1d", "tf.nn.max_pool1d(x, 2, 2, 'SAME')", {"x": vec(2, 7, 3)}, True),
    ("avg_pool1d", "tf.nn.avg_pool1d(x, [1, 3, 1], [1, 1, 1], 'VALID')", {"x": vec(2, 7, 3)}, True),
    ("max_pool2d", "tf.nn.max_pool2d(x, 2, [1, 2, 1, 1], 'VALID')", {"x": vec(1, 4, 5, 2)}, True),
    ("avg_pool2d", "tf.nn.avg_pool2d(x, [2, 3], 1, 'SAME')", {"x": vec(1, 4, 5, 2)}, True),
    ("sufficient_statistics_normalize_moments",
     "tf.stack(tf.nn.normalize_moments(*tf.nn.sufficient_statistics(x, [0], shift=tf.constant([0.5, -0.5], "
     "tf.float64))))", {"x": vec(5, 2)}, True),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("math_invert_permutation", "fetch = {'y': tf.math.invert_permutation([2, 0, 1])}\n"),
    Row("math_in_top_k", "fetch = {'y': tf.math.in_top_k(tf.constant([[0.1, 0.9], [0.8, 0.2]]), [1, 1], 1)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("math_nn_extras", ROWS)
