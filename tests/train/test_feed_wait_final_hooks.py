"""FeedFnHook, FinalOpsHook, GlobalStepWaiterHook and SessionCreator in a MonitoredSession, against real TF."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf, run_in_tftk

_COUNTER = ("x = tf.placeholder(tf.float32, [])\n"
            "total = tf.Variable(0.0)\n"
            "add = total.assign_add(x)\n")

SNIPPETS = {
    "feed_fn_feeds_every_run": _COUNTER + (
        "batches = iter([1.5, 2.0, 4.0])\n"
        "hook = tf.train.FeedFnHook(lambda: {x: next(batches)})\n"
        "with tf.train.MonitoredSession(hooks=[hook]) as sess:\n"
        "    seen = [sess.run(add) for _ in range(3)]\n"
        "outputs = {'seen': np.array(seen)}\n"),
    "final_ops_run_once_at_end": _COUNTER + (
        "final = tf.train.FinalOpsHook({'total': total, 'double': total * 2.0}, {x: 0.0})\n"
        "with tf.train.MonitoredSession(hooks=[final]) as sess:\n"
        "    before = final.final_ops_values\n"
        "    for v in (1.0, 2.0):\n"
        "        sess.run(add, {x: v})\n"
        "outputs = {'before_is_none': np.array(before is None),\n"
        "           'total': final.final_ops_values['total'], 'double': final.final_ops_values['double']}\n"),
    "final_ops_none_is_nothing": _COUNTER + (
        "final = tf.train.FinalOpsHook(None)\n"
        "with tf.train.MonitoredSession(hooks=[final]) as sess:\n"
        "    sess.run(add, {x: 1.0})\n"
        "outputs = {'values_none': np.array(final.final_ops_values is None)}\n"),
    "waiter_passes_when_step_reached": (
        "step = tf.train.get_or_create_global_step()\n"
        "bump = step.assign(inputs['start'])\n"
        "hook = tf.train.GlobalStepWaiterHook(wait_until_step=5)\n"
        "train = tf.assign_add(step, 1)\n"
        "with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:\n"
        "    sess.raw_session().run(bump)\n"
        "    steps = [sess.run(train) for _ in range(2)]\n"
        "outputs = {'steps': np.array(steps)}\n", {"start": np.int64(7)}),
    "waiter_needs_a_global_step": (
        "v = tf.Variable(1.0)\n"
        "tf.train.MonitoredSession(hooks=[tf.train.GlobalStepWaiterHook(3)])\n"
        "outputs = {}\n"),
    "session_creator_is_abstract": "tf.train.SessionCreator()\noutputs = {}\n",
    "custom_session_creator": _COUNTER + (
        "class Creator(tf.train.SessionCreator):\n"
        "    def create_session(self):\n"
        "        sess = tf.Session()\n"
        "        sess.run(tf.global_variables_initializer())\n"
        "        sess.run(add, {x: 10.0})\n"
        "        return sess\n"
        "with tf.train.MonitoredSession(session_creator=Creator()) as sess:\n"
        "    value = sess.run(total)\n"
        "outputs = {'value': np.array(value),\n"
        "           'chief_is_creator': np.array(issubclass(tf.train.ChiefSessionCreator, tf.train.SessionCreator)),\n"
        "           'worker_is_creator': np.array(issubclass(tf.train.WorkerSessionCreator, tf.train.SessionCreator))}\n"),
}
CASES = {name: (s if isinstance(s, str) else s[0], {} if isinstance(s, str) else s[1]) for name, s in SNIPPETS.items()}
ERRORS = {"waiter_needs_a_global_step": "RuntimeError", "session_creator_is_abstract": "TypeError"}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(set(CASES) - set(ERRORS)))
def test_matches_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_raises_like_tensorflow(oracle, name):
    got = run_in_tftk(*CASES[name])
    assert oracle[name].error == got.error == ERRORS[name]


def test_global_step_waiter_holds_the_first_run_until_another_worker_advances_the_step():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        advance = step.assign(4)
        hook = tf.train.GlobalStepWaiterHook(wait_until_step=4)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            raw = sess.raw_session()
            threading.Timer(0.8, lambda: raw.run(advance)).start()
            start = time.monotonic()
            value = sess.run(step)
            waited = time.monotonic() - start
    assert value == 4 and waited >= 0.7


def test_final_ops_hook_reraises_out_of_range():
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(1, tf.float32)
        close = queue.close()
        hook = tf.train.FinalOpsHook(queue.dequeue())
        sess = tf.train.MonitoredSession(hooks=[hook])
        sess.raw_session().run(close)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.close()
