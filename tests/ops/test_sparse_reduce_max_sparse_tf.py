"""tf.sparse.reduce_max_sparse / tf.sparse_reduce_max_sparse against TF 2.21, empty groups and zero maxima included."""

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf

_SP = """
sp = tf.SparseTensor([[0, 0, 1], [0, 2, 0], [2, 1, 1], [2, 1, 0], [3, 0, 0]], tf.cast(tf.constant([-3.0, 0.0, 5.0, -1.0, -2.0]), tf.{dt}), [4, 3, 2])
"""
_OUT = """
with tf.Session() as s:
    r = s.run(m)
outputs = {"indices": r.indices, "values": r.values, "shape": r.dense_shape}
"""
CASES = {f"{dt}_{tag}": (_SP.format(dt=dt) + f"m = tf.{fn}(sp{args})" + _OUT, {})
         for dt in ("float32", "int64")
         for tag, fn, args in [("all", "sparse.reduce_max_sparse", ""), ("axis1", "sparse.reduce_max_sparse", ", axis=1"),
                               ("axis02_keep", "sparse_reduce_max_sparse", ", axis=[0, 2], keepdims=True"),
                               ("axis_neg1", "sparse.reduce_max_sparse", ", axis=-1")]}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.slow  # real TensorFlow in a subprocess
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(oracle, case):
    expected, got = both_succeeded(oracle, CASES, case)
    for key, value in expected.outputs.items():
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)
