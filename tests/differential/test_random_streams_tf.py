"""Random values against real TensorFlow: with the same graph and op seeds, tftk's uniform, normal
and truncated-normal draws (and the initializers and dropout built on them) are TF's own values,
run after run in one session (each run moves the Philox stream on as TF does)."""

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf

TWO_RUNS = """
tf.set_random_seed({graph_seed})
y = {expr}
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    outputs = {{'first': s.run(y), 'second': s.run(y)}}
"""

DRAWS = {  # name: (graph seed, expression)
    "uniform_f32": (1, "tf.random_uniform([3, 5], seed=3)"),
    "uniform_range_f32": (1, "tf.random_uniform([7], -2.5, 4.0, seed=3)"),
    "uniform_f64": (2, "tf.random_uniform([5], dtype=tf.float64, seed=9)"),
    "uniform_f16": (2, "tf.random_uniform([9], dtype=tf.float16, seed=9)"),
    "uniform_int32": (3, "tf.random_uniform([11], -5, 17, dtype=tf.int32, seed=1)"),
    "uniform_int64": (3, "tf.random_uniform([6], 0, 1000, dtype=tf.int64, seed=1)"),
    "normal_f32": (4, "tf.random_normal([2, 3, 5], mean=1.0, stddev=2.0, seed=8)"),
    "normal_f64": (4, "tf.random_normal([7], dtype=tf.float64, seed=8)"),
    "truncated_f32": (5, "tf.truncated_normal([1000], seed=2)"),
    "truncated_f64": (5, "tf.truncated_normal([9], stddev=0.1, dtype=tf.float64, seed=2)"),
    "op_seed_only": (None, "tf.random_uniform([4], seed=123)"),
    "large_seeds": (2**40 + 5, "tf.random_normal([4], seed=2**33 + 1)"),
    "zero_seeds": (0, "tf.random_uniform([4], seed=0)"),
    "glorot_uniform": (7, "tf.get_variable('w', [6, 4], initializer=tf.glorot_uniform_initializer(seed=1))"),
    "he_normal": (7, "tf.get_variable('w', [3, 3, 2, 4], initializer=tf.initializers.he_normal(seed=2))"),
    "truncated_initializer": (7, "tf.Variable(tf.truncated_normal([5, 3], stddev=0.1, seed=4))"),
    "dropout": (8, "tf.nn.dropout(tf.ones([4, 6]), keep_prob=0.5, seed=5)"),
}

CASES = {name: (TWO_RUNS.format(graph_seed=seed, expr=expr), {}) for name, (seed, expr) in DRAWS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seeds_give_tensorflows_values(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    for run in ("first", "second"):
        assert got.outputs[run].dtype == expected.outputs[run].dtype
        np.testing.assert_array_equal(got.outputs[run], expected.outputs[run], err_msg=f"{name}, {run} run")
