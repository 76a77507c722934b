"""Where the server's CPU goes, by request stage (`tftk serve --stage-times`): for finding what to speed up.

Each thread is always in one stage; `switch(stage)` charges the thread's CPU time since its last
switch (time.thread_time_ns: CPU, not wall time, so a descheduled thread is not charged) to the
stage it was in and enters `stage`. Python's cyclic garbage collections are charged to "gc"
wherever they strike. The totals appear in /metrics as `tftk_serving_stage_cpu_seconds_total`.
Off by default: then `switch` does nothing (one call), and with it on each switch reads a clock.

Stages: "loop" (the event loop itself: polling, socket reads), "http" (parsing requests, routing
to the handler), "json_decode" (body -> numpy inputs), "prepare" (finding the version and
signature, checking dtypes and shapes), "batch_handoff" (queueing, waking threads, concatenating
and splitting batches, handing results back), "session_run", "json_encode" (outputs -> JSON bytes),
"http_write" (the answer's head and transport.write), "bookkeeping" (metrics, access log), "gc".
"""

from __future__ import annotations

import gc
import threading
import time

__all__ = ["enable", "enabled", "switch", "totals", "STAGES"]

STAGES = ("loop", "http", "json_decode", "prepare", "batch_handoff", "session_run", "json_encode", "http_write",
          "bookkeeping", "gc")


class _ThreadStages(threading.local):
    """One thread's current stage, when it entered it, and its CPU nanoseconds per stage."""

    def __init__(self) -> None:
        self.stage = "loop"
        self.since = time.thread_time_ns()
        self.before_gc = "loop"
        self.totals = dict.fromkeys(STAGES, 0)
        with _lock:
            _threads.append(self.totals)


_lock = threading.Lock()
_threads: list[dict[str, int]] = []  # every thread's totals (a thread's dict is only written by that thread)
_local: _ThreadStages | None = None


def _off(stage: str) -> None:
    pass


def _on(stage: str) -> None:
    local = _local
    now = time.thread_time_ns()
    local.totals[local.stage] += now - local.since
    local.stage, local.since = stage, now


switch = _off


def enable() -> None:
    """Start counting (once, before serving): `switch` becomes the real one and GC pauses are charged to "gc"."""
    global switch, _local
    if switch is _on:
        return
    _local = _ThreadStages()
    switch = _on
    gc.callbacks.append(_gc_phase)


def enabled() -> bool:
    return switch is _on


def _gc_phase(phase: str, info: dict) -> None:
    local = _local
    if phase == "start":
        local.before_gc = local.stage
        _on("gc")
    else:
        _on(local.before_gc)


def totals() -> dict[str, float]:
    """CPU seconds per stage over all threads so far (a thread's current stage counted up to its last switch)."""
    with _lock:
        threads = list(_threads)
    return {stage: sum(counts[stage] for counts in threads) / 1e9 for stage in STAGES}
