"""tf.gradients' unconnected_gradients option and tf.initialize_all_tables, against real TensorFlow."""

import pytest

from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

CASES = {
    "unconnected_zero": (
        "x = tf.constant([1.0, 2.0]); y = tf.constant([[3.0]]); z = tf.reduce_sum(x * x)\n"
        "gs = tf.gradients(z, [x, y], unconnected_gradients=tf.UnconnectedGradients.ZERO)\n"
        "with tf.Session() as s:\n    gx, gy = s.run(gs)\n"
        "outputs = {'gx': gx, 'gy': gy, 'none': np.array([g is None for g in tf.gradients(z, [x, y])])}\n", {}),
    "unconnected_by_string": (
        "x = tf.constant(1.0); y = tf.constant([2.0, 3.0], tf.float64)\n"
        "g = tf.gradients(x * 2.0, y, unconnected_gradients='zero')[0]\n"
        "with tf.Session() as s:\n    outputs = {'g': s.run(g)}\n", {}),
    "unconnected_bad_value": ("x = tf.constant(1.0)\ntf.gradients(x, x, unconnected_gradients='sometimes')\n", {}),
    "initialize_all_tables": (
        "t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(['a', 'b'], [1, 2], tf.string, tf.int32), -1)\n"
        "v = t.lookup(tf.constant(['b', 'c']))\n"
        "with tf.Session() as s:\n    s.run(tf.initialize_all_tables())\n    outputs = {'v': s.run(v)}\n", {}),
}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", [n for n in CASES if n != "unconnected_bad_value"])
def test_same_values_as_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))


def test_an_unknown_option_is_a_value_error(oracle):
    from tests.tf_oracle import run_in_tftk

    assert oracle["unconnected_bad_value"].error == "ValueError"
    assert run_in_tftk(*CASES["unconnected_bad_value"]).error == "ValueError"
