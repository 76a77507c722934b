"""What a worker does with one trial: resolve the trial function by path, bound its threads, run it,
write its HParams summary (in the worker, so the search process never waits on TensorBoard writes), report."""

from __future__ import annotations

import importlib
import math
import os
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hpsearch.hparams import write_hparams
from tftk.user_input import UserInputError

__all__ = ["TrialTask", "TrialOutcome", "TrialFunction", "function_path", "resolve_function", "limit_threads", "execute", "failed"]

TrialFunction = Callable[[dict, int, Path, int], float]

# Libraries read these when they load; TFTK_NUM_THREADS is the toolkit's own (ConfigProto defaults).
THREAD_VARIABLES = ("TFTK_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@dataclass(frozen=True)
class TrialTask:
    """Everything a worker needs to train one trial to one rung (picklable, paths as strings)."""

    trial_id: str
    rung: int
    function: str
    config: dict
    resource: int
    trial_dir: str
    seed: int
    threads: int
    hparam_keys: tuple[str, ...] = ()  # the config keys HParams shows (empty: all)


@dataclass(frozen=True)
class TrialOutcome:
    """A finished task: `metric` when it succeeded, else `error` (one line or a traceback)."""

    trial_id: str
    rung: int
    metric: float | None
    error: str | None
    busy_seconds: float


def function_path(fn: TrialFunction | str) -> str:
    """'module:function' for a top-level function, checked to be importable by a fresh worker process."""
    path = fn if isinstance(fn, str) else f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"
    module, _, name = path.partition(":")
    if module in ("__main__", "__mp_main__") or not name or "." in name or "<" in name:
        raise UserInputError(
            f"trial function {path!r} must be a top-level function of an importable module, "
            "given as a function or as 'module:function'")
    resolve_function(path)
    return path


def resolve_function(path: str) -> TrialFunction:
    """Import 'module:function'."""
    module, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        raise UserInputError(f"cannot import trial function {path!r}: {err}") from None


def limit_threads(threads: int) -> None:
    """Bound this process's compute threads so N worker processes do not oversubscribe the cores."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)  # for BLAS/OpenMP libraries already loaded


def execute(task: TrialTask) -> TrialOutcome:
    """Run one task; every exception (and a non-finite or non-numeric metric) becomes a failed outcome."""
    start = time.perf_counter()
    try:
        limit_threads(task.threads)  # before the import, so libraries read the variables as they load
        fn = resolve_function(task.function)
        trial_dir = Path(task.trial_dir)
        trial_dir.mkdir(parents=True, exist_ok=True)
        value = fn(dict(task.config), task.resource, trial_dir, task.seed)
        metric = float(value)
        if not math.isfinite(metric):
            raise ValueError(f"trial returned a non-finite metric {metric!r}")
        shown = {key: value for key, value in task.config.items() if not task.hparam_keys or key in task.hparam_keys}
        write_hparams(trial_dir, shown, task.resource, metric, task.rung)
        return TrialOutcome(task.trial_id, task.rung, metric, None, time.perf_counter() - start)
    except Exception as err:  # noqa: BLE001 -- the search records any trial failure and goes on
        detail = "".join(traceback.format_exception(err)).rstrip()
        return TrialOutcome(task.trial_id, task.rung, None, detail, time.perf_counter() - start)


def failed(task: TrialTask, error: str, busy_seconds: float) -> TrialOutcome:
    """The outcome of a task its executor gave up on (timeout, dead worker)."""
    return TrialOutcome(task.trial_id, task.rung, None, error, busy_seconds)
