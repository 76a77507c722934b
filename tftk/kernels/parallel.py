"""Run a kernel's tiles on a few threads that take the next tile when they are free.

Why not BLAS's own threads or a Numba `prange`: both split the work into one fixed share per
thread and end in a barrier, so when another process holds a core, every call waits a scheduler
time slice for the descheduled thread (on 2 cores with a busy loop beside it a 2-thread step ran
4-15x slower). Here a kernel cuts its work into tiles (a few images each), the calling thread and up
to `threads - 1` helper threads take tiles from a shared counter, and the caller waits only for
tiles already taken: a helper that is not scheduled takes none, and the caller does the rest. The
tiles' Numba kernels are compiled `nogil` and their products are BLAS calls made single-threaded
for the duration (`single_threaded_blas`; OpenBLAS's threaded level-3 path serialises concurrent
callers behind one lock), so tiles of one op, and the ops of concurrent sessions (the model
server's), run side by side.

The thread budget is per calling thread (`set_thread_budget`, set by the session before each run),
so two sessions with different limits in one process do not share a setting.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from typing import Any, Callable

import numpy as np

__all__ = ["run_tiles", "set_thread_budget", "thread_budget", "scratch", "single_threaded_blas"]

_local = threading.local()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def set_thread_budget(threads: int) -> None:
    """Threads the calling thread's tiled kernels may use from now on (0 or less: all cores)."""
    _local.budget = threads if threads > 0 else _cores()


def thread_budget() -> int:
    """The calling thread's budget: as set, else OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, else all cores."""
    budget = getattr(_local, "budget", None)
    if budget is None:
        env = os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS") or ""
        budget = int(env) if env.isdigit() and int(env) > 0 else _cores()
        _local.budget = budget
    return budget


def scratch(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The calling thread's reusable buffer (contents undefined): tiles reuse warm pages, not fresh ones.

    One per thread: a second call in the same thread returns the same memory.
    """
    dtype = np.dtype(dtype)
    need = int(np.prod(shape)) * dtype.itemsize
    held = getattr(_local, "scratch", None)
    if held is None or held.size < need:
        held = _local.scratch = np.empty(max(need, 1), dtype=np.uint8)
    return held[:need].view(dtype).reshape(shape)


class _Job:
    """One call's tiles: a shared counter hands them out, the last one finished wakes the caller."""

    def __init__(self, count: int, work: Callable[[int], None]):
        self.count = count
        self.work = work
        self.tiles = itertools.count()  # next() is atomic under the GIL
        self.left = count
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        while True:
            tile = next(self.tiles)
            if tile >= self.count:
                return
            try:
                self.work(tile)
            except BaseException as exc:  # handed to the caller, which re-raises it
                self.error = self.error or exc
            with self.lock:
                self.left -= 1
                if self.left == 0:
                    self.finished.set()


class _Helpers:
    """Daemon threads that run queued jobs; started as budgets ask for them, restarted after fork."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.started = 0
        self.lock = threading.Lock()

    def offer(self, job: _Job, helpers: int) -> None:
        with self.lock:
            while self.started < helpers:
                threading.Thread(target=self._serve, name=f"tftk-tiles-{self.started}", daemon=True).start()
                self.started += 1
        for _ in range(helpers):
            self.jobs.put(job)

    def _serve(self) -> None:
        for controller in _blas.controllers():  # a helper only ever multiplies tiles
            controller.set_num_threads(1)
        while True:
            self.jobs.get().run()


_helpers = _Helpers()


def run_tiles(count: int, work: Callable[[int], None], threads: int | None = None) -> None:
    """Call ``work(tile)`` for every tile in range(count) on up to `threads` threads.

    The caller is one of the threads, and `threads` defaults to the calling thread's `thread_budget`.
    Which thread runs which tile is left to chance: `work` writes each tile's result to its own place.
    The first exception raised by `work` is re-raised here once every taken tile has finished.
    """
    threads = max(1, min(thread_budget() if threads is None else threads, count))
    if threads == 1:
        with single_threaded_blas():  # within this thread's budget, whatever another session set BLAS to
            for tile in range(count):
                work(tile)
        return
    job = _Job(count, work)
    with single_threaded_blas():
        _helpers.offer(job, threads - 1)
        job.run()
        job.finished.wait()
    if job.error is not None:
        raise job.error


# OpenBLAS's thread setting is not simply process-wide in the wheels numpy ships: a thread that has
# set it keeps its own value, one that never did follows the last setting made. So a caller sets 1
# for itself and puts its own value back when it leaves, helpers set 1 once; and after two callers
# (sessions) were inside at once, neither puts back more than 1 for this long after: they are the
# parallelism then, and a 2-thread setting between their ops sent their products through
# OpenBLAS's threaded path one at a time (two threads convolving 12 times: 4.1 s, against 1.1 s one
# after the other).
CONCURRENT_HOLD_SECONDS = 1.0


class _BlasThreads:
    """BLAS held at 1 thread for the calling thread while it is inside `single_threaded_blas` (re-entrant)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.concurrent_at = -CONCURRENT_HOLD_SECONDS
        self.local = threading.local()
        self._controllers: list[Any] | None = None

    def controllers(self) -> list[Any]:
        if self._controllers is None:
            from threadpoolctl import ThreadpoolController
            self._controllers = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        return self._controllers

    def __enter__(self) -> None:
        depth = getattr(self.local, "depth", 0)
        self.local.depth = depth + 1
        if depth:
            return
        with self.lock:
            if self.inside:
                self.concurrent_at = time.monotonic()
            self.inside += 1
        self.local.saved = [(c, c.get_num_threads()) for c in self.controllers()]
        for controller, threads in self.local.saved:
            if threads != 1:
                controller.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        self.local.depth -= 1
        if self.local.depth:
            return
        with self.lock:
            self.inside -= 1
            hold = self.inside > 0 or time.monotonic() - self.concurrent_at < CONCURRENT_HOLD_SECONDS
        if not hold:
            for controller, threads in self.local.saved:
                if threads != 1:
                    controller.set_num_threads(threads)


_blas = _BlasThreads()


def _after_fork() -> None:
    """A forked child has none of the parent's helper threads, and its locks may have been held."""
    global _helpers, _blas
    _helpers = _Helpers()
    _blas = _BlasThreads()


os.register_at_fork(after_in_child=_after_fork)


def single_threaded_blas() -> _BlasThreads:
    """A context in which BLAS calls run on the calling thread only (re-entrant, across threads)."""
    return _blas
