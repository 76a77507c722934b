"""Buffer reuse: element-wise ops write into inputs that die, never into anything still visible."""

from __future__ import annotations

import numpy as np

import tftk as tf
from tftk.client.executor import plan_source


def _last_plan_source(sess) -> str:
    return plan_source(list(sess._plans.values())[-1])


def test_chain_reuses_dying_temporaries_and_matches_numpy():
    x = tf.placeholder(tf.float64, [3, 4])
    b = tf.constant(np.arange(4.0))
    y = tf.nn.relu(tf.exp(x * 2.0 + b) - 3.0)
    value = np.linspace(-1, 1, 12).reshape(3, 4)
    with tf.Session() as sess:
        got = sess.run(y, {x: value})
        assert "in place" in _last_plan_source(sess)
    np.testing.assert_allclose(got, np.maximum(np.exp(value * 2.0 + np.arange(4.0)) - 3.0, 0))


def test_feeds_are_never_overwritten():
    x = tf.placeholder(tf.float32, [5])
    y = tf.exp(tf.negative(x))
    value = np.arange(5, dtype=np.float32)
    before = value.copy()
    with tf.Session() as sess:
        sess.run(y, {x: value})
    np.testing.assert_array_equal(value, before)


def test_fetched_intermediates_keep_their_values():
    x = tf.placeholder(tf.float64, [4])
    a = x * 2.0
    b = tf.exp(a)  # a dies here unless fetched
    with tf.Session() as sess:
        got_a, got_b = sess.run([a, b], {x: np.ones(4)})
    np.testing.assert_array_equal(got_a, 2.0)
    np.testing.assert_allclose(got_b, np.exp(2.0))


def test_a_live_view_blocks_reuse_of_its_base():
    x = tf.placeholder(tf.float64, [2, 3])
    a = x + 1.0
    view = tf.reshape(a, [6])  # may share a's buffer
    b = tf.negative(a)  # a's last direct use: must not be written while `view` is alive
    c = view * 10.0
    with tf.Session() as sess:
        got_b, got_c = sess.run([b, c], {x: np.zeros((2, 3))})
    np.testing.assert_array_equal(got_b, -1.0)
    np.testing.assert_array_equal(got_c, 10.0)


def test_variables_and_constants_are_never_written():
    w = tf.Variable(np.ones(3))
    k = tf.constant(np.full(3, 2.0))
    y = tf.negative(w.value() * 1.0) + tf.negative(k)
    with tf.Session() as sess:
        sess.run(w.initializer)
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(y), -3.0)
        np.testing.assert_array_equal(sess.run(w), 1.0)


def test_training_matches_with_and_without_reuse(monkeypatch):
    """The same SGD steps give bit-identical weights whether buffers are reused or not."""
    def train() -> np.ndarray:
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(3)
            x = tf.constant(np.random.default_rng(0).standard_normal((8, 5)))
            labels = tf.constant(np.arange(8) % 3)
            w = tf.Variable(tf.random_normal([5, 3], dtype=tf.float64))
            logits = tf.nn.relu(tf.matmul(x, w) + 0.1)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(5):
                    sess.run(step)
                return sess.run(w)

    reused = train()
    from tftk.client import plan
    monkeypatch.setattr(plan, "donation_rule", lambda *a: (lambda slot, step: False))
    np.testing.assert_array_equal(train(), reused)
