"""How many threads a step's kernels use: the session's bound, lowered while other work holds cores.

BLAS splits every product above a small size across its threads, and each call ends in a barrier:
when another process takes one of two cores, half of every call waits for a descheduled thread, a
scheduler time slice at a time. Measured on 2 cores with one busy-loop process beside it, a
2-thread LSTM step (about 170 products) went from 0.37 s at 1 thread to 3.0 s, the deep-MNIST step
from 0.69 to 2.6 s, while TF's work-stealing pool degrades gracefully. So before a step the
session counts the runnable tasks that are not its own (`/proc/loadavg` minus this process's
running threads, smoothed over samples at most every `SAMPLE_SECONDS`) and gives BLAS and Numba
``min(bound, cores - others)`` threads, at least 1; on a quiet machine nothing changes.
`TFTK_ADAPTIVE_THREADS=0` turns the adjustment off (the bound is then used as given).
"""

from __future__ import annotations

import os
import time

__all__ = ["effective_threads"]

SAMPLE_SECONDS = 0.1
_SMOOTHING = 0.5  # weight of the newest sample in the running estimate of busy cores
_state = {"at": -1.0, "others": 0.0}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _own_running() -> int:
    """This process's threads in state R (running or runnable), itself included."""
    count = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        count += stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3] == b"R"
    return max(count, 1)


def _others_running() -> float | None:
    """Runnable tasks system-wide that are not this process's, or None where /proc says nothing."""
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(running - _own_running(), 0)


def effective_threads(bound: int) -> int:
    """Threads for the next step: `bound` (0 = all cores) less the cores other work is using now."""
    cores = _cores()
    want = cores if bound <= 0 else bound
    if want <= 1 or os.environ.get("TFTK_ADAPTIVE_THREADS", "1") == "0":
        return want
    now = time.monotonic()
    if now - _state["at"] >= SAMPLE_SECONDS:
        sample = _others_running()
        if sample is not None:
            first = _state["at"] < 0
            _state["others"] = sample if first else _SMOOTHING * sample + (1 - _SMOOTHING) * _state["others"]
        _state["at"] = now
    return max(1, min(want, int(cores - _state["others"] + 0.5)))
