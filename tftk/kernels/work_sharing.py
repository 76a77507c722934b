"""Intra-op parallelism that cannot stall on a descheduled thread: a kernel call cut into pieces that
the calling thread and one helper thread take from a shared counter.

BLAS's threads and a Numba `prange` give each thread a fixed share and end every call in a barrier:
on 2 cores with a busy loop beside the process, every call then waits a scheduler time slice for the
descheduled thread (`tftk.client.threads` records steps 4-15x slower). Here the caller always works
too and waits only for a piece the helper has already taken, and not for long: a helper that is not
scheduled takes none and the caller does them all, and one descheduled while it holds a piece is
overtaken (the caller computes that piece too once it is late; the first result is kept). There is
no per-call barrier on a thread that never started.

Who uses it: the ops layer cuts a convolution call over its batch, and a big 2-D product along its
longer output side (`batch_ranges`: pieces of about `PIECE_FLOPS`), runs the pieces with `stacked`
(results written into one array) or `summed` (partial results added in piece order, so the sum does
not depend on which thread ran which piece). Max
pooling was cut the same way and dropped: a piece's result copied into the whole and its arg-maxes
moved by the piece's offset doubled these memory-bound calls (LeNet's 0.24 ms MaxPool: 0.41 ms of CPU
in 3 pieces, its 0.19 ms gradient 0.38 ms), more than a second core could win back. The
number of workers is per calling thread (`set_workers`, set by the session before each step from its
thread policy); at 1 worker the op calls its kernel whole and nothing here runs. A step shares work
only where BLAS runs on one thread throughout (the session sets it): OpenBLAS's worker spins on the
second core for ~0.1 s after every call it shares, which starved an earlier helper pool (dropped in
4069ebe: a 2-thread deep-MNIST step ran 52 ms against 36 ms with BLAS's threads), and the helper's
products follow the process-wide setting (numpy's OpenBLAS 0.3.31 ignores `set_num_threads` from any
thread but the main one: measured by its workers' CPU ticks).

The helper is started at the first shared call, leaves after `IDLE_SECONDS` without work, and is
stopped by `stop_helper` (a session's close); a forked child (hpsearch's workers) starts its own.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from tftk.kernels import placement

__all__ = ["set_workers", "workers", "shareable_calls", "count_shareable", "batch_ranges", "cut", "tuning",
           "run", "stacked", "summed", "stop_helper"]

# Least work of one piece: ~0.2-0.6 ms at the 30-120 GFLOP/s the conv kernels reach on one Zen 4 core,
# well above the ~10-30 us of Python a kernel call costs (a piece held by a late helper is overtaken).
PIECE_FLOPS = 20e6
# A piece does at least this many times a call's fixed work: cutting a call in k pieces repeats it k
# times (the Winograd kernels transform the filter on every call: +120 us a piece on LeNet's 5x5x16x32
# layer, +400 us on deep-MNIST's 5x5x32x64, against 2.5 and 4.9 ms for the whole call). LeNet's calls
# make 2 pieces each: its 16->32 layer's calls ran 1.33-1.37x faster on 2 workers in 2 pieces, 1.05-1.22x
# in 4 (`bench/bench_work_sharing.py`, the same minute, load ~1.8).
FIXED_RATIO = 16.0
# The first piece (the caller's: it starts at once) is about this many flops larger than the others:
# the helper wakes from its queue and starts its piece 30-60 us after the caller (measured on LeNet's
# calls), and a caller done first waits for it and must be woken in turn, so with equal pieces the
# caller idles through the lag at every call. LeNet: 33/31 images (16->32), 37/27 (1->16).
HEAD_START_FLOPS = 6e6
IDLE_SECONDS = 2.0  # the helper leaves after this long without a piece to take
# The caller computes a piece the helper still holds this many times its own longest piece after it
# ran out of pieces (at least MIN_PATIENCE_SECONDS after): on a quiet machine the helper's piece ends
# well within that; a helper descheduled mid-piece would hold the call for a time slice (LeNet's
# 16->32 convolution beside two busy processes: 7.2 ms on 2 workers against 3.3 ms on 1).
LATE_FACTOR = 1.5
MIN_PATIENCE_SECONDS = 1e-4

_local = threading.local()


def set_workers(threads: int) -> None:
    """Threads (the caller included) the calling thread's shared kernel calls may use from now on."""
    _local.workers = max(1, threads)


def workers() -> int:
    """The calling thread's worker count (1 until `set_workers`)."""
    return getattr(_local, "workers", 1)


def shareable_calls() -> int:
    """Kernel calls the calling thread has made that were big enough to share (at any worker count):
    the session compares it around a step to learn whether the step's plan shares work."""
    return getattr(_local, "shareable", 0)


def batch_ranges(images: int, flops_per_image: float, fixed_flops: float = 0.0) -> list[tuple[int, int]]:
    """`cut`'s ranges, counting the call among `shareable_calls` where it makes more than one."""
    ranges = cut(images, flops_per_image, fixed_flops)
    if len(ranges) > 1:
        count_shareable()
    return list(ranges)


def count_shareable() -> None:
    """Count one kernel call big enough to share (see `shareable_calls`)."""
    _local.shareable = shareable_calls() + 1


def tuning() -> tuple[float, float, float]:
    """The constants `cut` reads, as a cache key: results cached under other values are not reused."""
    return PIECE_FLOPS, FIXED_RATIO, HEAD_START_FLOPS


def cut(images: int, flops_per_image: float, fixed_flops: float = 0.0) -> tuple[tuple[int, int], ...]:
    """Image ranges [b0, b1) covering `images` images, each of at least `PIECE_FLOPS` and of at least
    `FIXED_RATIO` times `fixed_flops` (the work a call costs whatever its size, in flops of the same
    kernel); one range where the call is too small to share. The first range is longer than the
    others by about `HEAD_START_FLOPS` (by a quarter of a range at most). Depends on the sizes only,
    never on the worker count, so a call is cut the same way on any thread count; computed once per
    size (a step makes the same calls every time)."""
    return _cut(images, flops_per_image, fixed_flops, *tuning())


@lru_cache(maxsize=1024)
def _cut(images: int, flops_per_image: float, fixed_flops: float, piece_flops: float, fixed_ratio: float,
         head_start_flops: float) -> tuple[tuple[int, int], ...]:
    total = images * flops_per_image
    pieces = int(min(images, total / max(piece_flops, fixed_ratio * fixed_flops) + 0.5))
    if pieces < 2:
        return ((0, images),)
    head = min(int(head_start_flops / (2.0 * max(flops_per_image, 1.0)) + 0.5), images // pieces // 4)
    first = images // pieces + head
    bounds = [0] + [first + (images - first) * k // (pieces - 1) for k in range(pieces)]
    return tuple(zip(bounds[:-1], bounds[1:]))


_FREE, _TAKEN, _COMMITTING, _DONE = range(4)  # a piece's state


class _Job:
    """One call's pieces: a counter hands them out; each piece's result is committed once, by the first
    thread to finish computing it (the caller may compute a piece the helper is late with)."""

    def __init__(self, count: int, compute: Callable[[int], Any], commit: Callable[[int, Any], None]):
        self.count = count
        self.compute = compute
        self.commit = commit
        self.next = 0
        self.state = [_FREE] * count
        self.done = 0
        self.changed = threading.Condition(threading.Lock())
        self.error: BaseException | None = None
        self.pinned = placement.pinned()  # the caller's core in a split or shared run: kept off

    def _run(self, index: int) -> None:
        """Compute piece `index` and commit the result unless another thread's is in (or going in)."""
        try:
            value = self.compute(index)
            with self.changed:
                if self.state[index] >= _COMMITTING:
                    return
                self.state[index] = _COMMITTING
            try:
                self.commit(index, value)
            finally:
                with self.changed:
                    self.state[index] = _DONE
                    self.done += 1
                    self.changed.notify_all()
        except BaseException as exc:  # handed to the caller, which raises it
            with self.changed:
                self.error = self.error or exc
                self.next = self.count  # no piece is handed out after an error
                self.changed.notify_all()

    def work(self) -> float:
        """Take and run pieces until none is free; returns the longest piece's seconds (0 if none)."""
        longest = 0.0
        while True:
            with self.changed:
                index = self.next
                if index >= self.count:
                    return longest
                self.next, self.state[index] = index + 1, _TAKEN
            start = time.perf_counter()
            self._run(index)
            longest = max(longest, time.perf_counter() - start)

    def finish(self, patience: float) -> None:
        """The caller, once no piece is free: wait for the helper's piece up to `patience` seconds, then
        compute it too (a descheduled helper may not run again for a scheduler time slice); return once
        every piece is committed or a piece failed."""
        deadline = time.perf_counter() + patience
        while True:
            with self.changed:
                while True:
                    if self.error is not None or self.done == self.count:
                        return
                    late = [i for i, state in enumerate(self.state) if state == _TAKEN]
                    left = deadline - time.perf_counter()
                    if late and left <= 0:
                        break
                    self.changed.wait(left if late else None)
            self._run(late[0])


class _Helper:
    """One daemon thread serving its own queue of jobs until stopped or idle for `IDLE_SECONDS`."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="tftk-work-sharing", daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _pool_lock:  # an offer made meanwhile is in the queue: serve it first
                    if not self.jobs.empty():
                        continue
                    if _pool["helper"] is self:
                        _pool["helper"] = None
                    return
            if job is None:
                return
            placement.keep_off(job.pinned)
            job.work()


_pool_lock = threading.Lock()
_pool: dict[str, Any] = {"helper": None}


def _offer(job: _Job) -> None:
    with _pool_lock:
        helper = _pool["helper"]
        if helper is None:
            helper = _pool["helper"] = _Helper()
            with placement.unpinned():  # a split or shared run's caller is pinned for the run
                helper.thread.start()
        helper.jobs.put(job)


def stop_helper() -> None:
    """Let the helper thread finish its piece and leave (a later shared call starts another)."""
    with _pool_lock:
        helper, _pool["helper"] = _pool["helper"], None
    if helper is not None:
        helper.jobs.put(None)


def run(count: int, compute: Callable[[int], Any], commit: Callable[[int, Any], None]) -> None:
    """``commit(i, compute(i))`` for every i in range(count), on the calling thread and, at 2 or more
    workers, the helper; re-raise the first error of a piece.

    `compute` must have no effect beyond its result: a piece the helper is late with (more than
    `LATE_FACTOR` times the caller's longest piece) is computed again by the caller, and only the
    first result is committed (`commit` runs once per piece, maybe on the helper)."""
    if count < 2 or workers() < 2:
        for index in range(count):
            commit(index, compute(index))
        return
    job = _Job(count, compute, commit)
    _offer(job)
    longest = job.work()
    job.finish(max(LATE_FACTOR * longest, MIN_PATIENCE_SECONDS))
    if job.error is not None:
        raise job.error


def _as_tuple(result: Any) -> tuple[np.ndarray, ...]:
    return result if isinstance(result, tuple) else (result,)


def stacked(ranges: Sequence[tuple[int, int]], piece: Callable[[int, int], Any], axis: int = 0) -> Any:
    """``piece(b0, b1)``'s arrays (one, or a tuple) for each range, stacked along `axis` in range order.

    Each piece's part is copied into the result by the thread that computed it (the first piece
    committed allocates it): a piece computed again for a late helper never writes into the result
    while the other is still computing it. At one worker (or one range) ``piece`` runs once over all
    of it."""
    if len(ranges) == 1 or workers() < 2:
        return piece(ranges[0][0], ranges[-1][1])
    total = ranges[-1][1] - ranges[0][0]
    out: list[tuple[np.ndarray, ...]] = []
    lock = threading.Lock()

    def commit(index: int, parts: Any) -> None:
        parts = _as_tuple(parts)
        with lock:
            if not out:
                out.append(tuple(np.empty(p.shape[:axis] + (total,) + p.shape[axis + 1:], p.dtype) for p in parts))
        where = (slice(None),) * axis + (slice(*ranges[index]),)
        for whole, part in zip(out[0], parts):
            whole[where] = part

    run(len(ranges), lambda index: piece(*ranges[index]), commit)
    return out[0] if len(out[0]) > 1 else out[0][0]


def summed(ranges: Sequence[tuple[int, int]], piece: Callable[[int, int], np.ndarray]) -> np.ndarray:
    """The sum of ``piece(b0, b1)`` over the ranges, added in range order (the same bits whichever thread
    ran which piece; not those of one uncut call: float addition is not associative). At one worker (or
    one range) ``piece`` runs once over all the rows."""
    if len(ranges) == 1 or workers() < 2:
        return piece(ranges[0][0], ranges[-1][1])
    parts: list[np.ndarray | None] = [None] * len(ranges)
    run(len(ranges), lambda index: piece(*ranges[index]), parts.__setitem__)
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


def _after_fork() -> None:
    """A forked child has no helper thread, and the pool's lock may have been held at the fork."""
    global _pool_lock
    _pool_lock = threading.Lock()
    _pool["helper"] = None


os.register_at_fork(after_in_child=_after_fork)
