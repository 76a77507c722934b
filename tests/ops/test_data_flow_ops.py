"""FIFOQueue and ConditionalAccumulator: order, capacity, closing, staleness, and waits that end."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tftk as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_fifo_queue_returns_rows_in_order_and_counts_them():
    q = tf.FIFOQueue(10, [tf.float32, tf.int32], shapes=[[2], []])
    enqueue_many = q.enqueue_many(([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [7, 8, 9]))
    enqueue = q.enqueue(([0.5, 0.5], 10))
    x, y = q.dequeue()
    xs, ys = q.dequeue_many(2)
    assert xs.shape.as_list() == [2, 2] and ys.dtype == tf.int32
    with tf.Session() as sess:
        sess.run(enqueue_many)
        sess.run(enqueue)
        assert sess.run(q.size()) == 4
        first = sess.run([x, y])
        np.testing.assert_array_equal(first[0], [1.0, 2.0])
        assert first[1] == 7
        rest = sess.run([xs, ys])
        np.testing.assert_array_equal(rest[0], [[3.0, 4.0], [5.0, 6.0]])
        assert rest[1].tolist() == [8, 9] and sess.run(q.size()) == 1


def test_each_session_has_its_own_queue():
    q = tf.FIFOQueue(3, tf.float32)
    push = q.enqueue(1.0)
    with tf.Session() as a, tf.Session() as b:
        a.run(push)
        assert (a.run(q.size()), b.run(q.size())) == (1, 0)


def test_dequeue_waits_for_an_enqueue_from_another_thread():
    q = tf.FIFOQueue(3, tf.float32)
    value = tf.placeholder(tf.float32)
    push = q.enqueue(value)
    pop = q.dequeue()
    with tf.Session() as sess:
        timer = threading.Timer(0.1, lambda: sess.run(push, {value: 4.5}))
        timer.start()
        started = time.monotonic()
        assert sess.run(pop) == 4.5
        assert time.monotonic() - started >= 0.05
        timer.join()


def test_closed_queue_drains_then_raises_out_of_range_and_rejects_enqueues():
    q = tf.FIFOQueue(3, tf.int32)
    push, pop, close = q.enqueue(1), q.dequeue(), q.close()
    with tf.Session() as sess:
        sess.run(push)
        sess.run(close)
        assert sess.run(pop) == 1
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient elements "
                                                            r"\(requested 1, current size 0\)"):
            sess.run(pop)
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(push)


def test_full_queue_enqueue_waits_until_a_dequeue_makes_room():
    q = tf.FIFOQueue(1, tf.int32)
    push, pop = q.enqueue(1), q.dequeue()
    with tf.Session() as sess:
        sess.run(push)
        timer = threading.Timer(0.1, lambda: sess.run(pop))
        timer.start()
        sess.run(push)  # returns once the timer's dequeue made room
        timer.join()
        assert sess.run(q.size()) == 1


def _run_expecting_cancel(sess, fetch):
    """Run `fetch` in a thread; returns the thread and the list its CancelledError lands in."""
    failures = []

    def run():
        try:
            sess.run(fetch)
        except tf.errors.CancelledError as exc:
            failures.append(exc)
    thread = threading.Thread(target=run)
    thread.start()
    return thread, failures


def test_closing_the_session_cancels_a_waiting_dequeue():
    q = tf.FIFOQueue(1, tf.int32)
    pop = q.dequeue()
    sess = tf.Session()
    thread, failures = _run_expecting_cancel(sess, pop)
    time.sleep(0.1)
    sess.close()
    thread.join(timeout=5)
    assert not thread.is_alive() and len(failures) == 1 and "was cancelled" in str(failures[0])


def test_queue_errors_are_named():
    q = tf.FIFOQueue(2, [tf.float32, tf.float32])
    with pytest.raises(ValueError, match="holds 2 components, got 1 values"):
        q.enqueue(1.0)


def _in_thread(fn):
    thread = threading.Thread(target=fn)
    thread.start()
    return thread


def test_enqueue_many_larger_than_the_free_room_goes_in_as_rows_are_taken():
    q = tf.FIFOQueue(10, tf.int32)
    fill, more = q.enqueue_many([list(range(6))]), q.enqueue_many([list(range(6, 11))])
    take8, take3 = q.dequeue_many(8), q.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(fill)
        pushing = _in_thread(lambda: sess.run(more))  # 4 rows fit, the 5th waits for room
        assert sess.run(take8).tolist() == list(range(8))
        pushing.join(timeout=5)
        assert not pushing.is_alive() and sess.run(take3).tolist() == [8, 9, 10]
        big = q.enqueue_many([list(range(25))])  # more rows than the capacity
        pushing = _in_thread(lambda: sess.run(big))
        taken = [sess.run(take3).tolist() for _ in range(8)] + [sess.run(q.dequeue())]
        pushing.join(timeout=5)
        assert sum(taken[:-1], []) + [taken[-1]] == list(range(25))


def test_close_lets_pending_enqueues_finish_unless_they_are_cancelled():
    q = tf.FIFOQueue(1, tf.int32)
    push1, push2, pop = q.enqueue(1), q.enqueue(2), q.dequeue()
    close, cancel = q.close(), q.close(cancel_pending_enqueues=True)
    with tf.Session() as sess:
        sess.run(push1)
        pending = _in_thread(lambda: sess.run(push2))
        time.sleep(0.05)
        sess.run(close)
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(push1)  # new enqueues are refused at once
        assert sess.run(pop) == 1  # makes room: the pending enqueue of 2 completes
        pending.join(timeout=5)
        assert sess.run(pop) == 2
    with tf.Session() as sess:
        sess.run(push1)
        pending, failures = _run_expecting_cancel(sess, push2)
        time.sleep(0.05)
        sess.run(cancel)
        pending.join(timeout=5)
        assert "cancel_pending_enqueues=True" in str(failures[0])


def test_accumulator_averages_fresh_gradients_and_drops_stale_ones():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    grad, step = tf.placeholder(tf.float32, [2]), tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(grad, local_step=step)
    take = acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0], step: 0})
        sess.run(apply, {grad: [3.0, 6.0], step: 0})
        assert sess.run(acc.num_accumulated()) == 2
        np.testing.assert_array_equal(sess.run(take), [2.0, 4.0])  # the mean; the step is now 1
        sess.run(apply, {grad: [100.0, 100.0], step: 0})  # computed before that update: dropped
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.set_global_step(5))
        sess.run(apply, {grad: [1.0, 1.0], step: 4})
        sess.run(apply, {grad: [3.0, 3.0], step: 5})
        sess.run(apply, {grad: [5.0, 5.0], step: 6})
        np.testing.assert_array_equal(sess.run(take), [4.0, 4.0])


def test_accumulator_sum_reduction_and_shape_check():
    acc = tf.ConditionalAccumulator(tf.float64, reduction_type="SUM")
    grad = tf.placeholder(tf.float64, None)
    apply, take = acc.apply_grad(grad), acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"gradient of shape \[3\] does not match"):
            sess.run(apply, {grad: [1.0, 2.0, 3.0]})
        sess.run(apply, {grad: [0.5, 0.5]})
        np.testing.assert_array_equal(sess.run(take), [1.5, 2.5])
    with pytest.raises(ValueError, match="reduction_type must be 'MEAN' or 'SUM'"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")


def test_queues_with_one_shared_name_share_their_rows():
    first = tf.FIFOQueue(5, tf.int32, shared_name="shared_q", name="first")
    second = tf.FIFOQueue(5, tf.int32, shared_name="shared_q", name="second")
    other = tf.FIFOQueue(5, tf.int32, name="other")
    push, pop, other_size = first.enqueue(7), second.dequeue(), other.size()
    with tf.Session() as sess:
        sess.run(push)
        assert sess.run(other_size) == 0 and sess.run(pop) == 7


def test_operation_timeout_bounds_a_waiting_dequeue():
    pop = tf.FIFOQueue(1, tf.int32).dequeue()
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="waited longer than the session's "
                                                                  r"operation_timeout_in_ms \(100 ms\)"):
            sess.run(pop)
        assert time.monotonic() - started < 2
