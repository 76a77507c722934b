"""The oracle itself: a snippet runs the same in real TensorFlow and in tftk, errors included."""

import numpy as np
import pytest

from tests.tf_oracle import run_in_tf, run_in_tftk

CASES = {
    "matmul_add": ("x = tf.placeholder(tf.float32, [None, 2])\n"
                   "y = tf.matmul(x, tf.ones([2, 1])) + 1.0\n"
                   "with tf.Session() as s:\n"
                   "    outputs = {'y': s.run(y, {x: inputs['x']}), 'shape': np.array(y.shape.as_list()[1:])}\n",
                   {"x": np.array([[1.0, 2.0]], np.float32)}),
    "shape_error": ("tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))\noutputs = {}\n", {}),
}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    expected, got = oracle[name], run_in_tftk(*CASES[name])
    assert got.error == expected.error, (got.message, expected.message)
    for key, value in (expected.outputs or {}).items():
        np.testing.assert_array_equal(got.outputs[key], value)
