"""run_tiles: every tile once on at most `threads` threads, errors handed back, BLAS restored; tiled kernels
give the same bits on any thread count."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from tftk.kernels import conv, parallel, pool


@pytest.mark.parametrize("count,threads", [(0, 2), (1, 1), (1, 3), (7, 1), (7, 2), (40, 3), (5, 8)])
def test_every_tile_runs_once_on_at_most_the_given_threads(count, threads):
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def work(tile: int) -> None:
        time.sleep(0.001)
        with lock:
            seen.append((tile, threading.get_ident()))

    parallel.run_tiles(count, work, threads)
    assert sorted(tile for tile, _ in seen) == list(range(count))
    assert len({ident for _, ident in seen}) <= max(1, min(threads, count))


def test_the_caller_does_every_tile_when_no_helper_is_free():
    """Helpers busy elsewhere (here: all blocked) take nothing; the caller does all the tiles and returns."""
    helpers = max(parallel._helpers.started, 1)
    release, taken = threading.Event(), []

    def hold(tile: int) -> None:
        taken.append(tile)
        release.wait(10)

    blocker = threading.Thread(target=parallel.run_tiles, args=(helpers + 1, hold, helpers + 1))
    blocker.start()  # every helper, and the blocker thread itself, holds one tile until `release`
    deadline = time.monotonic() + 10
    while len(taken) < helpers + 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        threads_seen: list[int] = []
        parallel.run_tiles(6, lambda t: threads_seen.append(threading.get_ident()), 2)
        assert threads_seen == [threading.get_ident()] * 6
    finally:
        release.set()
        blocker.join()


def test_an_error_in_a_tile_reaches_the_caller_after_the_taken_tiles_finish():
    done = []

    def work(tile: int) -> None:
        if tile == 3:
            raise ValueError("tile 3 failed")
        done.append(tile)

    with pytest.raises(ValueError, match="tile 3 failed"):
        parallel.run_tiles(8, work, 2)
    assert sorted(done) == [0, 1, 2, 4, 5, 6, 7]


def test_blas_is_single_threaded_inside_the_tiles_and_restored_after():
    controllers = parallel.single_threaded_blas().controllers()
    if not controllers:
        pytest.skip("no BLAS library that threadpoolctl can control")
    before = [c.get_num_threads() for c in controllers]
    inside: list[int] = []
    parallel.run_tiles(4, lambda t: inside.extend(c.get_num_threads() for c in controllers), 2)
    assert set(inside) == {1}
    assert [c.get_num_threads() for c in controllers] == before


def test_the_thread_budget_is_per_calling_thread():
    parallel.set_thread_budget(3)
    other: list[int] = []

    def in_other_thread() -> None:
        parallel.set_thread_budget(1)
        other.append(parallel.thread_budget())

    t = threading.Thread(target=in_other_thread)
    t.start()
    t.join()
    assert other == [1] and parallel.thread_budget() == 3


CONV_CASES = [  # x shape, filter shape, strides, pads, dilations
    ((9, 8, 8, 3), (3, 3, 3, 5), (1, 1), ((1, 1), (1, 1)), (1, 1)),
    ((7, 9, 7, 1), (5, 5, 1, 4), (1, 1), ((2, 2), (2, 2)), (1, 1)),
    ((5, 9, 9, 2), (3, 2, 2, 3), (2, 1), ((0, 1), (1, 0)), (1, 1)),
    ((6, 9, 9, 2), (3, 3, 2, 2), (1, 1), ((2, 2), (2, 2)), (2, 2)),
]


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_kernels_on_several_threads_give_the_bits_of_one_thread(case, threads, monkeypatch):
    xs, ws, strides, pads, dil = case
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    monkeypatch.setattr(conv, "TILE_BYTES", 1)  # one image per tile: many tiles across the threads
    parallel.set_thread_budget(1)
    y = conv.conv2d(x, w, strides, pads, dil)
    dy = rng.standard_normal(y.shape)
    dx = conv.conv2d_backprop_input(dy, w, xs, strides, pads, dil)
    dw = conv.conv2d_backprop_filter(x, dy, ws, strides, pads, dil)
    parallel.set_thread_budget(threads)
    try:  # the same bits: tiles do not depend on the thread count, partial sums are added in tile order
        np.testing.assert_array_equal(conv.conv2d(x, w, strides, pads, dil), y)
        np.testing.assert_array_equal(conv.conv2d_backprop_input(dy, w, xs, strides, pads, dil), dx)
        np.testing.assert_array_equal(conv.conv2d_backprop_filter(x, dy, ws, strides, pads, dil), dw)
    finally:
        parallel.set_thread_budget(0)


@pytest.mark.parametrize("threads", [2, 3])
def test_pool_kernels_on_several_threads_match_one_thread(threads, monkeypatch):
    monkeypatch.setattr(pool, "MIN_TILE_ELEMENTS", 1)  # tiles of one image
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 4, size=(11, 7, 6, 3)).astype(np.float64)
    pads = ((0, 1), (0, 1))
    parallel.set_thread_budget(1)
    y, arg = pool.max_pool(x, (2, 2), (2, 2), pads)
    dy = rng.standard_normal(y.shape)
    dx = pool.max_pool_grad(dy, arg, x.shape)
    avg = pool.avg_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1)))
    davg = pool.avg_pool_grad(np.ones_like(avg), x.shape, (3, 3), (2, 2), ((1, 1), (1, 1)))
    parallel.set_thread_budget(threads)
    try:
        y2, arg2 = pool.max_pool(x, (2, 2), (2, 2), pads)
        np.testing.assert_array_equal(y2, y)
        np.testing.assert_array_equal(arg2, arg)
        np.testing.assert_array_equal(pool.max_pool_grad(dy, arg, x.shape), dx)
        np.testing.assert_array_equal(pool.avg_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1))), avg)
        np.testing.assert_array_equal(pool.avg_pool_grad(np.ones_like(avg), x.shape, (3, 3), (2, 2),
                                                         ((1, 1), (1, 1))), davg)
    finally:
        parallel.set_thread_budget(0)


def test_concurrent_callers_get_their_own_results():
    """Two sessions' threads convolving at once (the model server's case) each get their own answer."""
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((8, 10, 10, 4)) for _ in range(4)]
    w = rng.standard_normal((3, 3, 4, 6))
    expected = [conv.conv2d(x, w, (1, 1), ((1, 1), (1, 1))) for x in xs]
    results: dict[int, np.ndarray] = {}

    def session(i: int) -> None:
        parallel.set_thread_budget(2)
        for _ in range(5):
            results[i] = conv.conv2d(xs[i], w, (1, 1), ((1, 1), (1, 1)))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_allclose(results[i], expected[i], rtol=1e-12, atol=1e-12)


def test_a_forked_child_starts_its_own_helpers():
    """hpsearch workers fork: the parent's helper threads do not exist in the child."""
    import os
    parallel.run_tiles(4, lambda t: None, 2)  # the parent has a helper now
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only when every tile ran
        done: list[int] = []
        try:
            parallel.run_tiles(6, lambda t: done.append(t), 2)
        finally:
            os._exit(0 if sorted(done) == list(range(6)) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
