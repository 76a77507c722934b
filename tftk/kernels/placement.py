"""Keep a caller and its helper thread on two cores while they work side by side.

A split plan's two streams (`tftk.client.side_thread`) wait for each other at latches: each wake-up of
the caller by the helper lets Linux's wake-up balancing move the caller to the helper's core, and on a
virtual machine whose other vCPU sat idle it does: the two threads then take turns on one core until
the load balancer moves one again, tens of milliseconds later. Measured on the 2-layer LSTM's split
step after each of 12 one-second pauses (2-core KVM guest): the first step took a median 51 ms (42-69),
about one thread's 55, against 35 settled; keeping only the helper off the caller's core changed
nothing (51 ms); pinning both for the run, 35.6 ms (35-43).

So for the length of one run `pin_caller` binds the calling thread to the core it is on and
`release_caller` gives it back the cores it had; the helpers (`keep_off`: the stream's, and the
work-sharing one serving the caller's shared calls in that run) run on its other cores. Two `sched_setaffinity` calls per run for the caller (a few microseconds against 5-60 ms
steps), one for the helper when the caller's core changed. Nothing changes where the C library cannot
say which core a thread runs on or where the thread may use one core only. A busy neighbour on the
caller's core slows a pinned run more than an unpinned one (the caller cannot move off it for the
run): the thread policy then measures the plan on one thread, unpinned (`tftk.client.threads`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Iterator

__all__ = ["current_cpu", "pin_caller", "release_caller", "unpinned", "pinned", "keep_off"]

_local = threading.local()


def _libc_sched_getcpu():
    try:
        function = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = ctypes.c_int, []
    return function


_sched_getcpu = _libc_sched_getcpu()


def current_cpu() -> int | None:
    """The core the calling thread runs on now (None where the C library cannot say)."""
    if _sched_getcpu is None or not hasattr(os, "sched_setaffinity"):
        return None
    cpu = _sched_getcpu()
    return cpu if cpu >= 0 else None


def pin_caller() -> tuple[set[int], int] | None:
    """Bind the calling thread to its current core; returns what `release_caller` and `keep_off` need
    (its cores before, the core), or None where nothing was changed."""
    cpu = current_cpu()
    if cpu is None:
        return None
    earlier = getattr(_local, "pinned", None)  # a run that never released its pin: its cores count
    try:
        cores = earlier[0] if earlier is not None else os.sched_getaffinity(0)
        if len(cores) < 2 or cpu not in cores:
            return None
        os.sched_setaffinity(0, {cpu})
    except OSError:  # a container's cpuset that forbids it: run unpinned
        return None
    _local.pinned = cores, cpu
    return _local.pinned


def release_caller(pinned: tuple[set[int], int] | None) -> None:
    """Give the calling thread back the cores `pin_caller` took from it."""
    if pinned is not None:
        _local.pinned = None
        try:
            os.sched_setaffinity(0, pinned[0])
        except OSError:  # its cores changed meanwhile (a cgroup): the thread keeps the one it has
            pass


@contextlib.contextmanager
def unpinned() -> Iterator[None]:
    """Around starting a thread: a thread inherits its creator's cores, so a pinned caller starting a
    helper (the work-sharing helper, first needed inside a split run) has its own cores back meanwhile."""
    pinned = getattr(_local, "pinned", None)
    if pinned is None:
        yield
        return
    try:
        os.sched_setaffinity(0, pinned[0])
    except OSError:  # (a cgroup changed the cores): the thread starts with the caller's one core
        yield
        return
    try:
        yield
    finally:
        try:
            os.sched_setaffinity(0, {pinned[1]})
        except OSError:
            pass


def _child_unpinned() -> None:
    """In a child forked by a pinned caller (a subprocess started from a py_func in a split run): its
    only thread gets the caller's cores back."""
    pinned = getattr(_local, "pinned", None)
    if pinned is not None:
        _local.pinned = None
        try:
            os.sched_setaffinity(0, pinned[0])
        except OSError:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_child_unpinned)


def pinned() -> tuple[set[int], int] | None:
    """The calling thread's pin by `pin_caller` (None where it is not pinned)."""
    return getattr(_local, "pinned", None)


def keep_off(pin: tuple[set[int], int] | None) -> None:
    """Let the calling (helper) thread run on the cores its caller may use but the one `pin` binds it
    to; where the caller is not pinned (None), on the cores this thread had before."""
    if pin is None:
        wanted = getattr(_local, "original", None)
    else:
        if getattr(_local, "original", None) is None:
            _local.original = frozenset(os.sched_getaffinity(0))
        wanted = frozenset(pin[0]) - {pin[1]}
    if wanted is None or getattr(_local, "cores", None) == wanted:
        return
    try:
        os.sched_setaffinity(0, wanted)
    except OSError:  # cores this thread may not use (a cgroup changed): leave it where it is
        return
    _local.cores = wanted
