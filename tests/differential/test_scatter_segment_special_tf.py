"""scatter_nd, tensor_scatter_*, dynamic_partition/stitch, segment reductions, variable scatters and
special functions against real TensorFlow (values and gradients)."""

import numpy as np
import pytest

from tests.differential.op_tables import compare, op_case
from tests.tf_oracle import run_in_tf, run_in_tftk

RNG = np.random.default_rng(13)


def vec(*shape, lo=-1.0, hi=1.0, dtype=np.float64):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


IDX2 = np.array([[0, 1], [2, 0], [0, 1]], np.int32)
SEG = np.array([0, 0, 2, 3, 3], np.int32)
USEG = np.array([2, 0, 2, -1, 1], np.int32)

ROWS = [
    ("scatter_nd_rows", "tf.scatter_nd(i, u, [4, 3])", {"i": np.array([[1], [3], [1]], np.int32), "u": vec(3, 3)}, True),
    ("scatter_nd_elements", "tf.scatter_nd(i, u, tf.constant([3, 2]))", {"i": IDX2, "u": vec(3)}, True),
    ("scatter_nd_int", "tf.scatter_nd(i, u, [3, 2])", {"i": IDX2, "u": np.array([1, 2, 3], np.int32)}, False),
    ("tensor_scatter_update", "tf.tensor_scatter_update(t, i, u)",
     {"t": vec(3, 2), "i": np.array([[0, 1], [2, 0]], np.int32), "u": vec(2)}, True),
    ("tensor_scatter_add", "tf.tensor_scatter_add(t, i, u)", {"t": vec(3, 2), "i": IDX2, "u": vec(3)}, True),
    ("tensor_scatter_sub_rows", "tf.tensor_scatter_sub(t, i, u)",
     {"t": vec(4, 2), "i": np.array([[3], [0]], np.int32), "u": vec(2, 2)}, True),
    ("dynamic_partition", "tf.concat(tf.dynamic_partition(x, p, 3), 0)",
     {"x": vec(5, 2), "p": np.array([2, 0, 2, 1, 0], np.int32)}, True),
    ("dynamic_partition_2d", "tf.dynamic_partition(x, p, 2)[1]",
     {"x": vec(2, 3), "p": np.array([[1, 0, 1], [1, 1, 0]], np.int32)}, True),
    ("dynamic_stitch", "tf.dynamic_stitch([i, j], [x, y])",
     {"i": np.array([0, 4, 2], np.int32), "j": np.array([1, 3, 2], np.int32), "x": vec(3, 2), "y": vec(3, 2)}, True),
    ("segment_max", "tf.segment_max(x, s)", {"x": vec(5, 2), "s": SEG}, True),
    ("segment_min", "tf.segment_min(x, s)", {"x": vec(5, 2), "s": SEG}, True),
    ("segment_prod", "tf.segment_prod(x, s)", {"x": vec(5, 2), "s": SEG}, True),
    ("unsorted_segment_max", "tf.unsorted_segment_max(x, s, 4)", {"x": vec(5, 2), "s": USEG}, True),
    ("unsorted_segment_min_int", "tf.unsorted_segment_min(x, s, 4)", {"x": np.arange(5, dtype=np.int32), "s": USEG}, False),
    ("unsorted_segment_prod", "tf.unsorted_segment_prod(x, s, 3)", {"x": vec(5, 2), "s": USEG}, True),
    ("unsorted_segment_prod_with_zero", "tf.unsorted_segment_prod(x * tf.constant([[1.0], [0.0], [1.0], [1.0], [1.0]], tf.float64), s, 3)",
     {"x": vec(5, 2), "s": USEG}, True),
    ("unsorted_segment_mean", "tf.unsorted_segment_mean(x, s, 4)", {"x": vec(5, 2), "s": USEG}, True),
    ("unsorted_segment_sqrt_n", "tf.unsorted_segment_sqrt_n(x, s, 4)", {"x": vec(5, 2), "s": USEG}, True),
    ("sparse_segment_sum", "tf.sparse_segment_sum(x, i, s)",
     {"x": vec(4, 2), "i": np.array([0, 3, 3, 1], np.int32), "s": np.array([0, 0, 1, 1], np.int32)}, True),
    ("sparse_segment_mean", "tf.sparse_segment_mean(x, i, s)",
     {"x": vec(4, 2), "i": np.array([0, 3, 2], np.int32), "s": np.array([0, 0, 1], np.int32)}, True),
    ("sparse_segment_sqrt_n", "tf.sparse_segment_sqrt_n(x, i, s, num_segments=3)",
     {"x": vec(4, 2), "i": np.array([0, 3, 2], np.int32), "s": np.array([0, 0, 1], np.int32)}, True),
    ("lgamma", "tf.lgamma(x)", {"x": np.array([0.3, 1.0, 2.5, 7.0, 40.0, -0.5, -2.5])}, True),
    ("lgamma_f32", "tf.lgamma(x)", {"x": vec(6, lo=0.1, hi=9.0, dtype=np.float32)}, True),
    ("digamma", "tf.digamma(x)", {"x": np.array([0.3, 1.0, 2.5, 7.0, 40.0, -0.5, -2.5])}, True),
    ("polygamma", "tf.polygamma(a, x)", {"a": np.array([1.0, 2.0, 3.0, 1.0]), "x": np.array([0.5, 1.5, 4.0, 12.0])}, True),
    ("zeta", "tf.zeta(x, q)", {"x": np.array([2.0, 3.5, 1.5, 6.0]), "q": np.array([1.0, 0.5, 2.0, 10.0])}, True),
    ("erfc", "tf.erfc(x)", {"x": np.array([-2.0, -0.3, 0.0, 0.7, 3.0, 6.0])}, True),
    ("igamma", "tf.igamma(a, x)", {"a": np.array([0.5, 1.0, 3.0, 10.0, 2.0]), "x": np.array([0.2, 1.0, 2.5, 12.0, 9.0])}, True),
    ("igammac", "tf.igammac(a, x)", {"a": np.array([0.5, 1.0, 3.0, 10.0]), "x": np.array([0.2, 1.0, 5.5, 8.0])}, True),
    ("igamma_broadcast", "tf.igamma(a, x)", {"a": np.array([[0.5], [2.0]]), "x": np.array([0.3, 1.0, 4.0])}, True),
    ("betainc", "tf.betainc(a, b, x)",
     {"a": np.array([0.5, 2.0, 5.0, 1.0]), "b": np.array([0.5, 3.0, 1.5, 1.0]), "x": np.array([0.1, 0.5, 0.9, 0.3])}, True),
    ("lbeta", "tf.lbeta(x)", {"x": vec(2, 3, lo=0.5, hi=4.0)}, True),
    ("atan2", "tf.atan2(y, x)", {"y": vec(5), "x": vec(5)}, True),
    ("math_xlogy", "tf.math.xlogy(x, y)", {"x": np.array([0.0, 1.0, 2.0]), "y": np.array([0.0, 0.5, 3.0])}, False),
    ("math_xdivy", "tf.math.xdivy(x, y)", {"x": np.array([0.0, 1.0, 2.0]), "y": np.array([0.0, 0.5, 3.0])}, False),
]

VARIABLE_SCATTERS = """
v = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) + 1.0)
b = tf.Variable(np.zeros((2, 4), np.float32))
steps = [tf.scatter_mul(v, [0, 0], [[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]),
         tf.scatter_div(v, [1], [[2.0, 4.0, 8.0]]),
         tf.scatter_max(v, [2, 3], [[100.0, 0.0, 100.0], [0.0, 0.0, 0.0]]),
         tf.scatter_min(v, [3], [[0.5, 50.0, 0.5]]),
         tf.scatter_nd_update(v, [[0, 0], [3, 2]], [-1.0, -2.0]),
         tf.scatter_nd_add(v, [[1, 1], [1, 1]], [10.0, 10.0]),
         tf.scatter_nd_sub(v, [[2]], [[1.0, 1.0, 1.0]]),
         tf.batch_scatter_update(b, [[1, 3], [0, 0]], [[5.0, 6.0], [7.0, 7.0]])]
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    outputs = {}
    for k, step in enumerate(steps):
        outputs['step%d' % k] = s.run(step)
"""

ERRORS = {
    "scatter_nd_out_of_range": "with tf.Session() as s:\n    s.run(tf.scatter_nd([[5]], [1.0], [3]))\noutputs = {}\n",
    "dynamic_partition_out_of_range": "with tf.Session() as s:\n"
                                      "    s.run(tf.dynamic_partition([1.0, 2.0], [0, 3], 2))\noutputs = {}\n",
    "dynamic_partition_not_int32": "tf.dynamic_partition([1.0], tf.constant([0], tf.int64), 2)\noutputs = {}\n",
}

CASES = {name: op_case(build, inputs, grad) for name, build, inputs, grad in ROWS}
CASES["variable_scatters"] = (VARIABLE_SCATTERS, {})
CASES.update({name: (src, {}) for name, src in ERRORS.items()})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
