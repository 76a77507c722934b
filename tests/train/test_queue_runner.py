"""QueueRunner threads: fill a queue, stop cleanly with their coordinator, report errors."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tftk as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_queue_runner_threads_fill_the_queue_and_stop_with_the_coordinator():
    counter = tf.Variable(0)
    q = tf.FIFOQueue(4, tf.int32)
    enqueue = q.enqueue(counter.assign_add(1))
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [enqueue]))
    batch = q.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(counter.initializer)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        assert sess.run(batch).tolist() == [1, 2, 3]
        assert sess.run(batch).tolist() == [4, 5, 6]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)  # the runner waiting on a full queue is called off
    assert not any(t.is_alive() for t in threads)


def test_runner_ends_cleanly_when_its_input_runs_out_and_closes_the_queue():
    source = tf.FIFOQueue(5, tf.float32)
    fill = source.enqueue_many(([1.0, 2.0],))
    close_source = source.close()
    target = tf.FIFOQueue(5, tf.float32)
    runner = tf.train.QueueRunner(target, [target.enqueue(source.dequeue() * 10.0)])
    pop = target.dequeue()
    with tf.Session() as sess:
        sess.run(fill)
        sess.run(close_source)
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert [sess.run(pop), sess.run(pop)] == [10.0, 20.0]
        with pytest.raises(tf.errors.OutOfRangeError):  # the runner closed its queue when the source ran dry
            sess.run(pop)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert runner.exceptions_raised == []


def test_an_error_in_a_runner_stops_the_coordinator_and_is_reraised_by_join():
    q = tf.FIFOQueue(5, tf.float32)
    bad = tf.placeholder(tf.float32)  # never fed: every run fails
    runner = tf.train.QueueRunner(q, [q.enqueue(bad)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        with pytest.raises(tf.errors.InvalidArgumentError, match="You must feed a value for placeholder"):
            coord.join(threads, stop_grace_period_secs=5)
    assert len(runner.exceptions_raised) == 1


def test_start_queue_runners_needs_a_session():
    with pytest.raises(ValueError, match="no default session is registered"):
        tf.train.start_queue_runners()
