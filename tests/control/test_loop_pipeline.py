"""While loops whose iterations run as a two-stage pipeline on two threads (tftk.ops.loop_stages): where a
body is cut, and that pipelined loops and their gradients compute exactly what the serial loop does."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tftk as tf
from tftk.client import side_thread, streams
from tftk.framework import errors
from tftk.ops import loop_stages


WIDTH = 256  # products big enough to be worth a second thread


def _cut_of(body):
    """The cut tftk makes of a while loop's body over (counter, [64, WIDTH] twice) (None: not pipelined)."""
    made = []
    original = loop_stages.cut

    def spy(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    graph = tf.Graph()
    with graph.as_default():
        zeros = tf.zeros([64, WIDTH])
        outs = tf.while_loop(lambda i, *rest: i < 5, body, (tf.constant(0), zeros, zeros))
        with tf.Session() as sess:
            loop_stages.cut, saved = spy, loop_stages.cut
            try:
                sess.run(outs)
            finally:
                loop_stages.cut = saved
    return made[0]


def _weights():
    return tf.constant(np.full((WIDTH, WIDTH), 0.01, np.float32))


def _two_layers(i, a, b):
    h1 = tf.tanh(tf.matmul(a, _weights()))
    h2 = tf.tanh(tf.matmul(b, _weights()) + tf.matmul(h1, _weights()))
    return i + 1, h1, h2


def _one_layer(i, a, b):
    h = tf.tanh(tf.matmul(a, _weights()) + b)
    return i + 1, h, h * 2.0


def _random(i, a, b):
    h1 = tf.tanh(tf.matmul(a, _weights())) + tf.random_normal([64, WIDTH])
    return i + 1, h1, tf.tanh(tf.matmul(b + h1, _weights()))


@pytest.mark.parametrize("body, first_carries", [
    (_two_layers, True),  # layer 1 (with the counter) first, layer 2 reads it
    (_one_layer, None),  # the second value is a cheap function of the first: nothing worth a thread
    (_random, None),  # a stateful op: its draws would change order
])
def test_where_a_body_is_cut(body, first_carries):
    stages = _cut_of(body)
    if first_carries is None:
        assert stages is None
    else:
        assert stages is not None and {0, 1} <= set(stages.first) and 2 in stages.second and stages.cross


def _rnn_step_values(threads, steps=4, seed=0, cells=2):
    """Losses and trained weights of a dynamic_rnn over stacked LSTM cells, trained with Adam."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [32, 6, 16])  # products big enough to be worth a second thread
        cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(128) for _ in range(cells)])
        outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(outputs - 0.3))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    rng = np.random.default_rng(seed)
    feeds = [rng.random((32, 6, 16), dtype=np.float32) for _ in range(steps)]
    with tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        sess.run(init)
        losses = [sess.run([train, loss], {x: feed})[1] for feed in feeds]
        plan = next(p for key, p in sess._plans.items() if train in key[1])
        weights = sess.run(graph.get_collection("trainable_variables"))
    return losses, weights, plan


@pytest.fixture
def pipelined(monkeypatch):
    """A list that gets True for each loop run as a pipeline (False: it had to run whole)."""
    ran = []
    original = loop_stages.Pipeline.run

    def counting(self, *args):
        try:
            result = original(self, *args)
        except BaseException:
            ran.append(True)
            raise
        ran.append(result is not None)
        return result

    monkeypatch.setattr(loop_stages.Pipeline, "run", counting)
    return ran


@pytest.mark.parametrize("cells", [2, 1])  # 1: only the gradient loop pipelines (its weight gradients beside)
def test_a_pipelined_rnn_trains_exactly_as_the_serial_one(monkeypatch, pipelined, cells):
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    monkeypatch.setattr(streams, "MIN_PLAN_SECONDS", 0.0)
    serial_losses, serial_weights, _ = _rnn_step_values(1, steps=12, cells=cells)
    losses, weights, plan = _rnn_step_values(2, steps=12, cells=cells)
    assert any(pipelined), "no loop ran pipelined"
    assert losses == serial_losses
    for one, two in zip(serial_weights, weights):
        np.testing.assert_array_equal(one, two)


def _failing_loop(stage):
    """A loop gathering row i of a 3-row table in its first or second `stage`: it fails at the fourth
    iteration."""
    graph = tf.Graph()
    with graph.as_default():
        table = tf.placeholder(tf.float32, [None, WIDTH])
        n = tf.placeholder(tf.int32, [])

        def body(i, a, b):
            if stage == "first":  # layer 1's next value needs the row
                h1 = tf.tanh(tf.matmul(a, _weights()) + tf.gather(table, i, name="row")[None])
                row = 0.0
            else:  # only layer 2's does (the table shifted by layer 2's state)
                h1 = tf.tanh(tf.matmul(a, _weights()))
                row = tf.gather(table + tf.reduce_sum(b) * 0.0, i, name="row")[None]
            return i + 1, h1, tf.tanh(tf.matmul(b + row, _weights()) + tf.matmul(h1, _weights()))

        zeros = tf.zeros([64, WIDTH])
        out = tf.while_loop(lambda i, a, b: i < n, body, (tf.constant(0), zeros, zeros))[2]
    return graph, table, n, out


@pytest.mark.parametrize("stage", ["first", "second"])
def test_an_error_in_either_stage_ends_the_loop_and_the_next_run_is_whole(stage, pipelined):
    graph, table, n, out = _failing_loop(stage)
    with tf.Session(graph=graph) as sess:
        feed = {table: np.ones((3, WIDTH), np.float32)}
        expected = sess.run(out, {**feed, n: 3})
        side_thread.allow_pipelines(True)
        try:
            before = threading.active_count()
            with pytest.raises(errors.InvalidArgumentError, match="3"):
                sess.run(out, {**feed, n: 5})
            np.testing.assert_array_equal(sess.run(out, {**feed, n: 3}), expected)
            assert threading.active_count() <= before + 1
            assert pipelined == [False, True, True]  # whole (no second thread allowed), then pipelined
        finally:
            side_thread.allow_pipelines(False)
