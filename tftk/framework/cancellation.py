"""Waiting inside a kernel (a dequeue on an empty queue, a take_grad short of gradients) that
can be called off: by the session closing, by the coordinator of the thread's queue runner, or,
on a task serving another process, by handing the wait back to that process to repeat.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable, Iterator

from tftk.framework import errors

__all__ = ["cancelled_by", "serving_budget", "wait_until", "RetryLater", "raise_if_cancelled"]

_POLL_SECS = 0.05
_local = threading.local()


class RetryLater(Exception):
    """A wait on behalf of another process ran out of its budget; nothing was consumed."""


@contextlib.contextmanager
def cancelled_by(event: threading.Event) -> Iterator[None]:
    """Waits in this thread end with CancelledError once `event` is set (e.g. a coordinator's stop)."""
    stack = _local.__dict__.setdefault("events", [])
    stack.append(event)
    try:
        yield
    finally:
        stack.pop()


@contextlib.contextmanager
def serving_budget(seconds: float) -> Iterator[None]:
    """Waits in this thread give up after `seconds` with RetryLater (a task serving a request)."""
    _local.budget = seconds
    try:
        yield
    finally:
        _local.budget = None


def raise_if_cancelled(op: Any, ctx: Any, started: float | None = None) -> None:
    """CancelledError if the session (`ctx.closed`) or this thread's coordinator stopped;
    DeadlineExceededError once the session's operation timeout has passed since `started`."""
    if ctx.closed.is_set() or any(e.is_set() for e in _local.__dict__.get("events", ())):
        raise errors.CancelledError(None, op, f"{op.name} ({op.type}) was cancelled: its session closed or "
                                    "its coordinator asked the threads to stop")
    timeout = getattr(ctx, "timeout_secs", None)
    if timeout is not None and started is not None and time.monotonic() - started > timeout:
        raise errors.DeadlineExceededError(None, op, f"{op.name} ({op.type}) waited longer than the session's "
                                           f"operation_timeout_in_ms ({timeout * 1000:.0f} ms)")


def wait_until(condition: threading.Condition, ready: Callable[[], bool], op: Any, ctx: Any,
               may_retry: bool = True) -> None:
    """Wait on `condition` (held by the caller) until `ready()`; see the module docstring for the
    exits. `ctx` is the kernel context (its `closed` event and `timeout_secs`). `may_retry=False`
    once the op has changed state (it could not be repeated from scratch)."""
    started = time.monotonic()
    budget = _local.__dict__.get("budget") if may_retry else None
    while not ready():
        raise_if_cancelled(op, ctx, started)
        if budget is not None and time.monotonic() - started >= budget:
            raise RetryLater()
        condition.wait(_POLL_SECS)
