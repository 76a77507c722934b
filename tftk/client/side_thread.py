"""The helper thread that runs the second stream of a split plan, and the latches between the streams.

A split plan's function (`codegen.compile_streams`) makes one latch per result the other stream
waits for, a lock taken at once: the producing stream releases it after the step, the waiting stream
takes it before its first step that needs the result (about a microsecond each way when the result is
already there; a futex wake-up otherwise). `spawn` hands the second stream's function to the helper,
`join` waits for it to end, and `fail` ends a run in which either stream raised: every latch the
failing stream still held is released and the run's state records the first error, so the other
stream's next wait raises `Aborted` instead of blocking or computing with missing values, and the
caller raises the first error once the helper's function has ended.

One helper per process, started by the first split run and leaving after `IDLE_SECONDS` without
one (a forked child starts its own). Its kernels run on one thread: Numba's thread count is set per
calling thread, so the helper sets its own; BLAS's is the process's (the session sets it to one).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from typing import Any, Callable

from tftk.client import run_state
from tftk.kernels import placement

__all__ = ["Aborted", "latches", "spawn", "join", "fail", "beside", "allow_pipelines", "pipelines_allowed",
           "IDLE_SECONDS"]

IDLE_SECONDS = 5.0


class Aborted(Exception):
    """Raised by a stream waiting for a result the other stream will not produce (it failed)."""


class _Job:
    """One run of a second stream: its function and arguments, the run's state (`state[0]`: the first
    error), the latches it releases, and a lock held until it has ended."""

    __slots__ = ("fn", "args", "state", "own", "latches", "done", "result", "pinned", "caller_run")

    def __init__(self, fn: Callable, args: tuple, state: list, latch_list: list, own: tuple[int, ...]):
        self.fn, self.args, self.state, self.latches, self.own = fn, args, state, latch_list, own
        self.pinned = None  # the caller's core while the job runs, and its cores before (placement)
        self.caller_run = run_state.current()  # the run the helper works for (run_state)
        self.done = threading.Lock()
        self.done.acquire()
        self.result: Any = None

    def run(self) -> None:
        try:
            with run_state.adopted(self.caller_run):
                self.result = self.fn(*self.args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            _release_failed(self.state, exc, self.latches, self.own)
        finally:
            self.done.release()


_local = threading.local()
_jobs: queue.SimpleQueue = queue.SimpleQueue()
_helper: dict[str, Any] = {"thread": None, "pid": None}
_start_lock = threading.Lock()


def _serve() -> None:
    """The helper's loop: run jobs until none comes for IDLE_SECONDS."""
    while True:
        try:
            job = _jobs.get(timeout=IDLE_SECONDS)
        except queue.Empty:
            with _start_lock:
                if _jobs.empty():
                    _helper["thread"] = None
                    return
            continue
        if "numba" in sys.modules:
            import numba
            if numba.get_num_threads() != 1:
                numba.set_num_threads(1)
        placement.keep_off(job.pinned)
        job.run()


def latches(count: int) -> list:
    """`count` latches, all closed."""
    made = [threading.Lock() for _ in range(count)]
    for latch in made:
        latch.acquire()
    return made


def spawn(fn: Callable, state: list, latch_list: list, own: tuple[int, ...], args: tuple) -> _Job:
    """Run `fn(*args)` on the helper thread; `own`: the indices of the latches it releases."""
    job = _Job(fn, args, state, latch_list, own)
    with _start_lock:
        thread = _helper["thread"]
        if thread is None or _helper["pid"] != os.getpid() or not thread.is_alive():
            thread = threading.Thread(target=_serve, name="tftk-stream", daemon=True)
            _helper["thread"], _helper["pid"] = thread, os.getpid()
            with placement.unpinned():
                thread.start()
        job.pinned = placement.pin_caller()
        _jobs.put(job)
    return job


def join(job: _Job) -> Any:
    """Wait for the second stream to end; raise its error if it failed, else return its result."""
    try:
        job.done.acquire()
    finally:  # (an interrupt while waiting leaves the caller pinned otherwise)
        placement.release_caller(job.pinned)
    if job.state[0] is not None:
        raise job.state[0]
    return job.result


def beside(fn: Callable, *args: Any) -> Callable[[], Any]:
    """Run `fn(*args)` on the helper thread; returns a function waiting for its result (or raising its
    error). While loops run their pipelines' second stages this way (`tftk.ops.loop_stages`)."""
    job = spawn(fn, [None], [], (), args)
    return lambda: join(job)


def allow_pipelines(allowed: bool) -> None:
    """Whether kernels called from this thread may run work on the helper (set around a run by the
    session; off in the helper itself and while the helper runs another stream of this run)."""
    _local.pipelines = allowed


def pipelines_allowed() -> bool:
    return getattr(_local, "pipelines", False)


def fail(exc: BaseException, job: _Job, own: tuple[int, ...]) -> None:
    """End a run whose calling stream raised `exc` (`own`: the latches it releases): let the helper's
    stream stop at its next wait, wait for it, and raise the run's first error."""
    _release_failed(job.state, exc, job.latches, own)
    try:
        job.done.acquire()
    finally:
        placement.release_caller(job.pinned)
    raise job.state[0]


def _release_failed(state: list, exc: BaseException, latch_list: list, own: tuple[int, ...]) -> None:
    """Record `exc` as the run's error unless one came first, and open every latch of `own` still closed
    (only the stream owning a latch opens it, so a closed one was never released or taken back)."""
    if state[0] is None:  # (an Aborted is raised only after the first error is recorded)
        state[0] = exc
    for index in own:
        latch = latch_list[index]
        if latch.locked():
            latch.release()
