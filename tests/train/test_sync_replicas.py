"""SyncReplicasOptimizer in one process: token handshake, staleness, chief start-up, errors."""

from __future__ import annotations

import time

import numpy as np
import pytest

import tftk as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def _wait_for(sess, tensor, value, timeout=10.0):
    deadline = time.monotonic() + timeout
    while sess.run(tensor) != value:
        assert time.monotonic() < deadline, f"{tensor.name} never reached {value}"
        time.sleep(0.01)


def _model():
    w = tf.Variable(1.0)
    global_step = tf.Variable(0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1)
    train = opt.minimize(tf.square(w), global_step=global_step)
    return w, global_step, opt, train


def test_one_replica_steps_after_the_first_wait_for_the_chief_update(tmp_path):
    w, global_step, opt, train = _model()
    init_tokens = opt.get_init_tokens_op()
    tokens_left = opt._sync_token_queue.size()
    sv = tf.train.Supervisor(is_chief=True, logdir=str(tmp_path), global_step=global_step, summary_op=None)
    sess = sv.prepare_or_wait_for_session("")
    sv.start_queue_runners(sess, [opt.get_chief_queue_runner()])
    sess.run(init_tokens)
    sess.run(train)  # gradient 2.0 at w=1, then the init token
    _wait_for(sess, global_step, 1)
    assert sess.run(w) == pytest.approx(0.8)
    sess.run(train)  # computed at local step 0 < 1: dropped as stale; takes the token of step 1
    assert sess.run([global_step, tokens_left]) == [1, 0]
    sess.run(train)  # fresh: the run returns once the chief applied it and handed out token 2
    assert sess.run(global_step) == 2 and sess.run(w) == pytest.approx(0.64)
    sess.run(train)
    assert sess.run(global_step) == 3 and sess.run(w) == pytest.approx(0.512)
    sv.stop()  # the chief runner waiting in take_grad is called off: stop returns at once
    sess.close()


def test_two_replicas_average_their_gradients_before_one_update():
    w = tf.Variable(1.0)
    global_step = tf.Variable(0)
    target = tf.placeholder(tf.float32, [])
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.25), replicas_to_aggregate=2)
    train = opt.minimize(tf.square(w - target), global_step=global_step)
    hook = opt.make_session_run_hook(is_chief=True)
    with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
        sess.run(train, {target: 0.0})  # init token 1 of 2
        sess.run(train, {target: 3.0})  # init token 2 of 2; the chief now averages 2*(1-0) and 2*(1-3)
        deadline = time.monotonic() + 10
        while sess.run(global_step) != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert sess.run(w) == pytest.approx(1.0 - 0.25 * 0.5 * (2.0 + -4.0))  # 1.25


def test_sync_replicas_argument_errors():
    w = tf.Variable(1.0)
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=2,
                                         total_num_replicas=3)
    with pytest.raises(ValueError, match="Should be called after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="Global step is required to check staleness"):
        opt.minimize(tf.square(w))
    opt.minimize(tf.square(w), global_step=tf.Variable(0))
    assert opt.get_init_tokens_op(num_tokens=0).type == "NoOp"
