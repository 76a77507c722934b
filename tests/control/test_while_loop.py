"""while_loop / scan / map_fn / foldl: values, structure, errors and gradients through the loop."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient


def _power_loop(x):
    """a <- a * x + 1, four times: gradient flows through every iteration and the capture."""
    _, a = tf.while_loop(lambda i, a: i < 4, lambda i, a: [i + 1, a * x + 1.0],
                         [tf.constant(0), tf.ones_like(x)])
    return a


GRADIENT_CASES = [
    GradientCase("while_capture_and_loop_var", _power_loop, [np.array([0.5, -1.5, 2.0])]),
    GradientCase("scan_cumprod", lambda x: tf.scan(lambda a, e: a * e, x,
                                                   initializer=tf.constant(1.0, tf.float64)),
                 [np.array([0.5, 1.5, -2.0, 0.7])]),
    GradientCase("map_fn_square", lambda x: tf.map_fn(lambda e: e * e, x), [np.array([[1.0, 2.0], [3.0, -1.0]])]),
    GradientCase("scan_reverse_first_row_as_initial", lambda x: tf.scan(lambda a, e: a * e + tf.sin(e), x,
                                                                         reverse=True),
                 [np.array([[0.5, 1.5], [-2.0, 0.7], [1.1, -0.4]])]),
    GradientCase("scan_two_elems_and_a_capture", lambda x, y, w: tf.scan(
        lambda a, e: tf.tanh(a * w + e[0] * e[1]), (x, y), initializer=tf.zeros([2], tf.float64)),
        [np.array([[0.5, 1.5], [-2.0, 0.7], [1.1, -0.4]]), np.array([[0.3, -1.0], [0.8, 0.2], [-0.6, 1.3]]),
         np.array([0.9, -1.2])]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradients_through_loops(case):
    check_gradient(case)


def test_while_counts_and_returns_same_structure():
    i = tf.constant(0)
    result = tf.while_loop(lambda i: i < 10, lambda i: i + 1, i)
    pair = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (tf.constant(0), tf.constant(0)))
    with tf.Session() as sess:
        assert sess.run(result) == 10
        assert sess.run(pair) == (5, 10)


def test_maximum_iterations_caps_the_loop():
    r = tf.while_loop(lambda c: c < 100, lambda c: c + 1, tf.constant(0), maximum_iterations=7)
    with tf.Session() as sess:
        assert sess.run(r) == 7


def test_body_reads_a_variable_and_zero_iterations_keep_the_input():
    w = tf.Variable(3.0)
    n = tf.placeholder(tf.int32, [])
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: [i + 1, a + w], [tf.constant(0), tf.constant(1.0)])
    grad = tf.gradients(acc, w)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([acc, grad], {n: 3}) == [10.0, 3.0]
        assert sess.run([acc, grad], {n: 0}) == [1.0, 0.0]


def test_shape_change_without_invariant_is_a_clear_error():
    with pytest.raises(ValueError, match="shape_invariants"):
        tf.while_loop(lambda x: tf.size(x) < 10, lambda x: tf.concat([x, x], 0), [tf.ones([2])])


def test_shape_invariants_allow_growth():
    x = tf.while_loop(lambda x: tf.size(x) < 10, lambda x: tf.concat([x, x], 0), [tf.ones([2])],
                      shape_invariants=[tf.TensorShape([None])])
    with tf.Session() as sess:
        assert sess.run(x).shape == (16,)


def test_scan_foldl_foldr_values():
    elems = tf.constant(np.arange(1.0, 5.0))
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(tf.scan(lambda a, e: a + e, elems)), [1, 3, 6, 10])
        np.testing.assert_array_equal(sess.run(tf.scan(lambda a, e: a + e, elems, reverse=True)), [10, 9, 7, 4])
        assert sess.run(tf.foldl(lambda a, e: a * e, elems)) == 24.0
        assert sess.run(tf.foldr(lambda a, e: a - e, elems, initializer=tf.constant(0.0, tf.float64))) == -10.0


def test_body_returning_wrong_dtype_fails_at_build_time():
    with pytest.raises(TypeError, match="enters the loop as int32"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [tf.constant(0)])


STATE_UPDATES_IN_BODY = [  # (update built in the body from (i, variable), variable's initial value, value after 5 iterations)
    ("assign_add", lambda i, v: tf.assign_add(v, 1.0), 0.0, 5.0),
    ("assign_sub", lambda i, v: tf.assign_sub(v, 2.0), 10.0, 0.0),
    ("scatter_add", lambda i, v: tf.scatter_add(v, [i % 3], [2.0]), [0.0, 0.0, 0.0], [4.0, 4.0, 2.0]),
    ("variable_method", lambda i, v: v.assign_add(tf.cast(i, tf.float32)), 0.0, 10.0),
]


@pytest.mark.parametrize("update, initial, expected", [row[1:] for row in STATE_UPDATES_IN_BODY],
                         ids=[row[0] for row in STATE_UPDATES_IN_BODY])
def test_body_updates_an_outer_variable_in_place(update, initial, expected):
    v = tf.Variable(initial, dtype=tf.float32)

    def body(i):
        with tf.control_dependencies([update(i, v)]):
            return i + 1

    loop = tf.while_loop(lambda i: i < 5, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(loop) == 5
        np.testing.assert_allclose(sess.run(v), expected)
        sess.run(loop)  # a second run goes on from the stored value
        np.testing.assert_allclose(sess.run(v), 2 * np.asarray(expected) - np.asarray(initial))


def test_backward_pass_reads_the_forward_iterations_values_random_ones_included():
    x = tf.constant(np.arange(1.0, 13.0).reshape(4, 3))
    noisy = tf.scan(lambda a, e: e * tf.random_uniform([3], dtype=tf.float64), x,
                    initializer=tf.zeros([3], tf.float64))
    grad = tf.gradients(tf.reduce_sum(noisy), x)[0]
    with tf.Session() as sess:
        values, g = sess.run([noisy, grad])
    np.testing.assert_allclose(g, values / np.arange(1.0, 13.0).reshape(4, 3), rtol=1e-12)


def test_each_iteration_of_the_body_runs_once_per_training_run():
    calls = []

    def count(e):
        calls.append(1)
        return e

    x = tf.constant(np.arange(1.0, 7.0).reshape(3, 2))
    out = tf.scan(lambda a, e: a * tf.py_func(count, [e], tf.float64), x, initializer=tf.ones([2], tf.float64))
    grad = tf.gradients(tf.reduce_sum(out), x)[0]
    with tf.Session() as sess:
        sess.run(grad)
    assert len(calls) == 3


def test_two_gradient_calls_on_one_loop_both_run():
    x = tf.constant(np.array([0.5, 1.5, -2.0]))
    w = tf.constant(np.array([1.2, -0.7]))
    out = tf.scan(lambda a, e: tf.tanh(a * w + e), x, initializer=tf.zeros([2], tf.float64))
    g1 = tf.gradients(tf.reduce_sum(out), [x, w])
    g2 = tf.gradients(tf.reduce_sum(out * 3.0), [x, w])
    with tf.Session() as sess:
        first = sess.run(g1)
        both = sess.run(g1 + g2)
    for a, b in zip(first, both[:2]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(both[:2], both[2:]):
        np.testing.assert_allclose(b, 3.0 * a, rtol=1e-12)


def test_gradient_seeded_by_a_constant_still_runs_the_loop_first():
    """grad_ys that do not depend on the loop: the gradient op still waits for the forward loop."""
    w = tf.Variable(2.0)
    _, acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: [i + 1, a * w], [tf.constant(0), tf.constant(1.0)])
    grad = tf.gradients(acc, w, grad_ys=tf.constant(1.0))[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(grad) == 12.0  # d(w^3)/dw at w = 2
