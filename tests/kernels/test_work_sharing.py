"""The work-sharing pool: every piece once, on the caller and at most one helper; errors handed back; a
blocked helper costs nothing; fork and session close leave no helper behind; conv calls cut in pieces
give the one-call results (the same bits, the filter gradient's piece sums to float tolerance), and so
do matrix products cut along an output side."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import tftk as tf
from tftk.framework import errors
from tftk.kernels import work_sharing
from tftk.ops import conv_pool_ops, math_ops


@pytest.fixture
def two_workers():
    work_sharing.set_workers(2)
    yield
    work_sharing.set_workers(1)


def _helper_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tftk-work-sharing"]


def _wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    return condition()


@pytest.mark.parametrize("count,workers", [(0, 2), (1, 2), (7, 1), (7, 2), (40, 2), (5, 8)])
def test_every_piece_runs_once_on_the_caller_and_at_most_one_helper(count, workers):
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def compute(index: int) -> int:
        time.sleep(0.001)
        return threading.get_ident()

    def commit(index: int, ident: int) -> None:
        with lock:
            seen.append((index, ident))

    work_sharing.set_workers(workers)
    try:
        work_sharing.run(count, compute, commit)
    finally:
        work_sharing.set_workers(1)
    assert sorted(index for index, _ in seen) == list(range(count))  # each committed once
    threads = {ident for _, ident in seen}
    assert len(threads) <= (1 if workers == 1 else 2)
    if workers == 1:
        assert threads <= {threading.get_ident()}


def test_the_caller_does_every_piece_while_the_helper_is_held(two_workers):
    """A helper that never comes (here: held by another caller's piece) is not waited for."""
    release, taken = threading.Event(), []

    def hold(index: int) -> None:
        taken.append(threading.current_thread().name)
        release.wait(10)

    def other_caller() -> None:
        work_sharing.set_workers(2)
        work_sharing.run(2, hold, lambda index, value: None)

    blocker = threading.Thread(target=other_caller)
    blocker.start()  # it holds piece 0, the helper holds piece 1, until `release`
    try:
        assert _wait_for(lambda: len(taken) == 2) and "tftk-work-sharing" in taken
        ran: list[int] = []
        start = time.monotonic()
        work_sharing.run(6, lambda index: threading.get_ident(), lambda index, ident: ran.append(ident))
        assert ran == [threading.get_ident()] * 6
        assert time.monotonic() - start < 5  # returned without the helper
    finally:
        release.set()
        blocker.join()


def test_the_caller_computes_a_piece_the_helper_is_late_with(two_workers):
    """A helper descheduled (here: held) in the middle of a piece: the caller computes that piece too,
    after LATE_FACTOR times its own longest piece, and returns with each result committed once."""
    release = threading.Event()
    committed: dict[int, str] = {}

    def compute(index: int) -> str:
        if _on_helper():
            release.wait(10)  # the helper's piece ends only after the call has returned
        else:
            time.sleep(0.002)
        return threading.current_thread().name

    start = time.monotonic()
    try:
        work_sharing.run(4, compute, committed.__setitem__)
        elapsed = time.monotonic() - start
    finally:
        release.set()
    assert sorted(committed) == [0, 1, 2, 3] and set(committed.values()) == {"MainThread"}
    assert elapsed < 5
    time.sleep(0.05)  # the helper's late result, computed after release, is not committed
    assert set(committed.values()) == {"MainThread"}


def _on_helper() -> bool:
    return threading.current_thread().name == "tftk-work-sharing"


def test_an_error_in_the_helpers_piece_reaches_the_caller_and_the_helper_serves_on(two_workers):
    raised = threading.Event()

    def failing(index: int) -> None:
        if _on_helper():
            raised.set()
            raise ValueError(f"piece {index} failed")
        raised.wait(10)  # the caller holds its piece until the helper has failed

    with pytest.raises(ValueError, match=r"piece \d failed"):
        work_sharing.run(4, failing, lambda index, value: None)
    helped = threading.Event()

    def waits_for_the_helper(index: int) -> None:
        if _on_helper():
            helped.set()
        else:
            helped.wait(10)

    work_sharing.run(4, waits_for_the_helper, lambda index, value: None)
    assert helped.is_set()


def test_an_error_in_a_commit_reaches_the_caller_and_the_helper_lives_on(two_workers):
    def commit(index: int, value: int) -> None:
        if index == 2:
            raise MemoryError("no room for piece 2")

    with pytest.raises(MemoryError, match="piece 2"):
        work_sharing.run(6, lambda index: (time.sleep(0.001), index)[1], commit)
    ran: set[str] = set()
    for _ in range(20):
        work_sharing.run(8, lambda index: (time.sleep(0.001), threading.current_thread().name)[1],
                         lambda index, name: ran.add(name))
        if "tftk-work-sharing" in ran:
            break
    assert "tftk-work-sharing" in ran


def test_no_piece_is_handed_out_after_an_error(two_workers):
    done: list[int] = []

    def failing(index: int) -> int:
        if index == 3:
            raise ValueError("piece 3 failed")
        time.sleep(0.001)
        return index

    with pytest.raises(ValueError, match="piece 3 failed"):
        work_sharing.run(40, failing, lambda index, value: done.append(value))
    assert 3 not in done and len(done) < 39


@pytest.mark.parametrize("pieces", [[(0, 3), (3, 5), (5, 9)], [(0, 9)]])
def test_stacked_and_summed_combine_the_pieces_in_order(pieces, two_workers):
    rows = np.arange(9 * 4, dtype=np.float64).reshape(9, 4)
    y, index = work_sharing.stacked(pieces, lambda b0, b1: (rows[b0:b1] * 2, np.arange(b0, b1)))
    np.testing.assert_array_equal(y, rows * 2)
    np.testing.assert_array_equal(index, np.arange(9))
    columns = work_sharing.stacked(pieces, lambda c0, c1: rows.T[:, c0:c1] + 1, axis=1)
    np.testing.assert_array_equal(columns, rows.T + 1)
    np.testing.assert_array_equal(work_sharing.summed(pieces, lambda b0, b1: rows[b0:b1].sum(axis=0)),
                                  sum(rows[b0:b1].sum(axis=0) for b0, b1 in pieces))


@pytest.mark.parametrize("images,flops,fixed,expected", [
    (64, 1e3, 0, 1),  # too small to share
    (64, 40e6 / 64, 0, 2),  # LeNet's first layer: 40 MFLOP
    (64, 400e6 / 64, 0, 20),
    (3, 1e9, 0, 3),  # never more pieces than images
    (64, 321e6 / 64, 800 * 12800, 2),  # LeNet's 16->32 layer: the filter's cost bounds the pieces
])
def test_batch_ranges_cover_the_batch_in_pieces_of_enough_work(images, flops, fixed, expected):
    ranges = work_sharing.batch_ranges(images, flops, fixed)
    assert len(ranges) == expected
    assert ranges[0][0] == 0 and ranges[-1][1] == images
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))


@pytest.mark.parametrize("images,flops,fixed,head", [
    (64, 40e6 / 64, 0, 5),  # LeNet's first layer: the caller's piece ~6 MFLOP (10 images) longer: 37/27
    (64, 321e6 / 64, 800 * 12800, 1),  # its 16->32 layer: 33/31 images (an image is 5 MFLOP)
    (64, 400e6 / 64, 0, 0),  # an image is more than the head start: 20 pieces of 3-4 images
    (40, 1e6, 0, 3),  # 23/17 images: the first longer by the 6 MFLOP of 6 images
])
def test_the_first_range_is_longer_by_the_helpers_head_start(images, flops, fixed, head):
    ranges = work_sharing.batch_ranges(images, flops, fixed)
    sizes = [b1 - b0 for b0, b1 in ranges]
    assert sizes[0] == images // len(ranges) + head
    assert max(sizes[1:]) - min(sizes[1:]) <= 1


def test_the_head_start_is_never_more_than_a_quarter_of_a_piece(monkeypatch):
    monkeypatch.setattr(work_sharing, "PIECE_FLOPS", 1e4)
    assert work_sharing.batch_ranges(8, 1e5) == [(b, b + 1) for b in range(8)]  # head start: 30 images


def test_cuts_made_once_per_size_follow_the_constants_in_force(monkeypatch):
    """The cuts are cached per size; a result made under other constants is not reused."""
    assert work_sharing.batch_ranges(8, 1e5) == [(0, 8)]  # too small to share
    assert conv_pool_ops._conv_pieces((8, 9, 11, 3), (9, 11), (3, 3, 3, 5), np.float32, (1, 1), (1, 1)) == [(0, 8)]
    monkeypatch.setattr(work_sharing, "PIECE_FLOPS", 1e4)
    monkeypatch.setattr(work_sharing, "FIXED_RATIO", 0.0)
    assert len(work_sharing.batch_ranges(8, 1e5)) == 8
    assert len(conv_pool_ops._conv_pieces((8, 9, 11, 3), (9, 11), (3, 3, 3, 5), np.float32, (1, 1), (1, 1))) > 1


CONV_CASES = [  # x shape, filter shape, strides, padding, dtype, piece flops (None: as set)
    ((64, 28, 28, 1), (5, 5, 1, 16), (1, 1), "SAME", np.float32, None),  # LeNet's layers: im2col
    ((64, 14, 14, 16), (5, 5, 16, 32), (1, 1), "SAME", np.float32, None),  # Winograd
    ((20, 9, 11, 3), (3, 2, 3, 5), (2, 1), "VALID", np.float64, 1e4),
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_calls_cut_in_pieces_give_the_one_call_results(case, monkeypatch):
    xs, fs, strides, padding, dtype, piece_flops = case
    if piece_flops is not None:  # several pieces of a small call
        monkeypatch.setattr(work_sharing, "PIECE_FLOPS", piece_flops)
        monkeypatch.setattr(work_sharing, "FIXED_RATIO", 0.0)
    rng = np.random.default_rng(1)
    graph = tf.Graph()
    with graph.as_default():
        x, w = tf.placeholder(dtype, xs), tf.placeholder(dtype, fs)
        y = tf.nn.conv2d(x, w, [1, *strides, 1], padding)
        dx, dw = tf.gradients(tf.reduce_sum(y * y), [x, w])
    x_value, w_value = rng.standard_normal(xs).astype(dtype), rng.standard_normal(fs).astype(dtype)
    dy_value = rng.standard_normal(y.shape.as_list()).astype(dtype)
    bind = {"y": conv_pool_ops._bind_conv2d(y.op, None),
            "dx": conv_pool_ops._bind_conv2d_backprop_input(dx.op, None),
            "dw": conv_pool_ops._bind_conv2d_backprop_filter(dw.op, None)}
    assert len(conv_pool_ops._conv_pieces(xs, dy_value.shape[1:3], fs, dtype, strides, (1, 1))) > 1

    def results() -> dict[str, np.ndarray]:
        return {"y": bind["y"](x_value, w_value), "dx": bind["dx"](np.array(xs), w_value, dy_value),
                "dw": bind["dw"](x_value, np.array(fs), dy_value)}

    whole = results()
    work_sharing.set_workers(2)
    try:
        shared = [results() for _ in range(3)]
    finally:
        work_sharing.set_workers(1)
    for run in shared:
        np.testing.assert_array_equal(run["y"], whole["y"])  # images apart: the same bits
        np.testing.assert_array_equal(run["dx"], whole["dx"])
        np.testing.assert_array_equal(run["dw"], shared[0]["dw"])  # piece sums in piece order
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        scale = np.abs(whole["dw"]).max()
        np.testing.assert_allclose(run["dw"], whole["dw"], rtol=tolerance, atol=tolerance * scale)


PRODUCT_CASES = [  # a shape, b shape, transpose_a, transpose_b, dtype, pieces at the set piece size
    ((50, 3136), (3136, 1024), False, False, np.float32, 8),  # deep-MNIST's fc1 and its gradients
    ((50, 1024), (3136, 1024), False, True, np.float32, 8),
    ((50, 3136), (50, 1024), True, False, np.float32, 8),
    ((300, 70), (70, 9), False, False, np.float64, None),  # rows cut (more rows than columns)
    ((7, 33), (5, 7), True, True, np.float64, None),
    ((6, 5), (5, 40), False, False, np.int64, None),
]


@pytest.mark.parametrize("case", PRODUCT_CASES)
def test_products_cut_in_pieces_give_the_one_call_results(case, monkeypatch):
    a_shape, b_shape, ta, tb, dtype, pieces = case
    if pieces is None:  # several pieces of a small product
        monkeypatch.setattr(work_sharing, "PIECE_FLOPS", 100.0)
        monkeypatch.setattr(math_ops, "_PRODUCT_CALL_FLOPS", 0.0)
    rng = np.random.default_rng(2)
    a, b = ((rng.standard_normal(s) * 10).astype(dtype) for s in (a_shape, b_shape))
    graph = tf.Graph()
    with graph.as_default():
        y = tf.matmul(tf.placeholder(dtype, a_shape), tf.placeholder(dtype, b_shape), transpose_a=ta, transpose_b=tb)
    product = math_ops._bind_matmul(y.op, None)
    whole = product(a, b)
    np.testing.assert_allclose(whole, np.matmul(a.T if ta else a, b.T if tb else b), rtol=1e-5)
    before = work_sharing.shareable_calls()
    work_sharing.set_workers(2)
    try:
        shared = [product(a, b) for _ in range(3)]
    finally:
        work_sharing.set_workers(1)
    assert work_sharing.shareable_calls() > before  # the call was cut
    if pieces is not None:
        (m, k), n = (a.T if ta else a).shape, (b.T if tb else b).shape[1]
        side, other = (n, m) if n >= m else (m, n)
        assert len(work_sharing.batch_ranges(side, 2.0 * other * k, math_ops._PRODUCT_CALL_FLOPS)) == pieces
    for run in shared:
        assert run.dtype == whole.dtype and run.shape == whole.shape
        if pieces is None and dtype == np.float64:  # BLAS runs a few rows with other kernels: other rounding
            np.testing.assert_allclose(run, whole, rtol=1e-12, atol=1e-12 * np.abs(whole).max())
        else:  # big pieces (and integers): the same bits
            np.testing.assert_array_equal(run, whole)


def test_concurrent_callers_share_one_helper_and_get_their_own_results():
    """Sessions in several threads (the model server's case) offer their pieces to the one helper."""
    rng = np.random.default_rng(5)
    rows = [rng.standard_normal((12, 40)) for _ in range(3)]
    ranges = [(b, b + 2) for b in range(0, 12, 2)]
    results: dict[int, list[np.ndarray]] = {}

    def caller(i: int) -> None:
        work_sharing.set_workers(2)
        results[i] = [work_sharing.stacked(ranges, lambda b0, b1: np.sin(rows[i][b0:b1])) for _ in range(20)]

    callers = [threading.Thread(target=caller, args=(i,)) for i in range(3)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    for i in range(3):
        for result in results[i]:
            np.testing.assert_array_equal(result, np.sin(rows[i]))


def test_a_winograd_call_stays_whole_where_its_pieces_would_leave_winograd(monkeypatch):
    from tftk.kernels import winograd
    shape, filter_shape = (8, 14, 14, 16), (5, 5, 16, 32)
    assert winograd.applies(np.float32, shape, filter_shape, (1, 1), (1, 1))
    monkeypatch.setattr(work_sharing, "FIXED_RATIO", 0.0)
    monkeypatch.setattr(work_sharing, "PIECE_FLOPS", 1e4)  # pieces of one image: too few tiles
    assert conv_pool_ops._conv_pieces(shape, (14, 14), filter_shape, np.float32, (1, 1), (1, 1)) == [(0, 8)]
    assert len(conv_pool_ops._conv_pieces(shape, (14, 14), filter_shape, np.float64, (1, 1), (1, 1))) == 8


def _conv_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 28, 28, 1])
        w = tf.Variable(np.random.default_rng(2).standard_normal((5, 5, 1, 16)).astype(np.float32))
        y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME", name="conv")
        init = tf.global_variables_initializer()
    return graph, x, y, init


@pytest.fixture
def two_thread_session(monkeypatch):
    """A session whose steps run on 2 threads, the thread policy's measurement turned off (and one inter-op
    stream: no step-by-step timed runs deciding a split, `tftk.client.streams`)."""
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    graph, x, y, init = _conv_graph()
    sess = tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=2,
                                                         inter_op_parallelism_threads=1))
    sess.run(init)
    yield sess, x, y
    sess.close()
    work_sharing.set_workers(1)


def test_a_failing_piece_is_the_ops_error_and_the_next_step_runs(two_thread_session, monkeypatch):
    sess, x, y = two_thread_session
    feed = {x: np.random.default_rng(3).random((64, 28, 28, 1), dtype=np.float32)}
    expected = sess.run(y, feed)  # the first run finds the plan's calls shareable
    sess.run(y, feed)
    assert work_sharing.workers() == 2
    from tftk.kernels import conv
    real = conv.conv2d

    def fails_in_pieces(x_piece, *args):
        if x_piece.shape[0] < 64:
            raise ValueError("a piece failed")
        return real(x_piece, *args)

    monkeypatch.setattr(conv, "conv2d", fails_in_pieces)
    graph, x2, y2, init = _conv_graph()  # a new plan binds the patched kernel
    config = tf.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=1)
    with tf.Session(graph=graph, config=config) as failing:
        failing.run(init)
        feed2 = {x2: feed[x]}
        failing.run(y2, feed2)  # one thread: the call is whole
        with pytest.raises(errors.InvalidArgumentError, match="a piece failed") as caught:
            failing.run(y2, feed2)  # cut in pieces, which fail
        assert caught.value.op is not None and caught.value.op.name == "conv"
    for _ in range(3):
        np.testing.assert_array_equal(sess.run(y, feed), expected)


def test_closing_the_session_ends_the_helper(two_thread_session):
    sess, x, y = two_thread_session
    feed = {x: np.zeros((64, 28, 28, 1), np.float32)}
    sess.run(y, feed)
    sess.run(y, feed)
    assert _wait_for(lambda: bool(_helper_threads()))
    sess.close()
    assert _wait_for(lambda: not _helper_threads())


def test_a_forked_child_starts_its_own_helper(two_workers):
    """hpsearch's workers fork: the parent's helper thread does not exist in the child."""
    work_sharing.run(4, lambda index: time.sleep(0.001), lambda index, value: None)  # the parent has a helper
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only when every piece ran, one of them on a new helper
        try:
            names: list[str] = []
            for _ in range(50):
                work_sharing.run(6, lambda index: (time.sleep(0.002), threading.current_thread().name)[1],
                                 lambda index, name: names.append(name))
                if "tftk-work-sharing" in names:
                    break
            os._exit(0 if "tftk-work-sharing" in names and len(names) % 6 == 0 else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_training_on_two_threads_follows_one_thread(monkeypatch):
    """A small ConvNet's SGD steps with the conv calls shared: the same losses as one thread, to the
    float32 rounding of the filter gradient's piece sums."""
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    rng = np.random.default_rng(6)
    images = rng.random((64, 28, 28, 1), dtype=np.float32)
    labels = rng.integers(0, 10, 64).astype(np.int32)
    losses = {}
    for threads in (1, 2):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(1)
            x, y = tf.placeholder(tf.float32, [64, 28, 28, 1]), tf.placeholder(tf.int32, [64])
            h = tf.layers.conv2d(x, 16, 5, padding="same", activation=tf.nn.relu)
            h = tf.layers.conv2d(h, 32, 5, padding="same", activation=tf.nn.relu)
            logits = tf.layers.dense(tf.reshape(h, [64, -1]), 10)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
            init = tf.global_variables_initializer()
        config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=1)
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(init)
            losses[threads] = [sess.run([loss, train], {x: images, y: labels})[0] for _ in range(4)]
            assert work_sharing.workers() == threads  # the later steps were shared
    work_sharing.set_workers(1)
    np.testing.assert_allclose(losses[2], losses[1], rtol=1e-5)
    # the first run (whole calls, learning that the plan shares) and the second (shared forward pass,
    # the same bits, on weights the first run updated) agree exactly
    assert losses[2][:2] == losses[1][:2]
