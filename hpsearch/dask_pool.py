"""The Dask executor: the LocalPool's interface over a dask.distributed cluster (imported lazily).

A trial whose worker dies is rescheduled by Dask's scheduler up to its `allowed-failures` limit and
then recorded as failed (KilledWorker). A timed-out trial is recorded as failed and its future
cancelled; Dask cannot interrupt a task already running, so its thread finishes on the worker.
"""

from __future__ import annotations

import time

from hpsearch.trial import TrialOutcome, TrialTask, execute, failed
from tftk.user_input import UserInputError

__all__ = ["DaskPool"]


class DaskPool:
    """Runs TrialTasks on the Dask cluster at `address`; `capacity` defaults to its total worker threads."""

    def __init__(self, address: str, threads: int, trial_timeout: float | None = None, nb_process: int | None = None):
        try:
            from distributed import Client
        except ImportError:
            raise UserInputError("backend='dask' needs dask.distributed: pip install 'dask[distributed]'") from None
        self._client = Client(address)
        self.capacity = nb_process or sum(self._client.nthreads().values())
        self.threads = threads
        self.trial_timeout = trial_timeout
        self._running: dict = {}  # future -> (task, submitted at)

    def free_slots(self) -> int:
        return self.capacity - len(self._running)

    def submit(self, task: TrialTask) -> None:
        future = self._client.submit(execute, task, pure=False, key=f"trial-{task.trial_id}-rung{task.rung}-{time.time_ns()}")
        self._running[future] = (task, time.monotonic())

    def wait(self) -> list[TrialOutcome]:
        """Block until at least one future finishes or times out; [] if none runs."""
        from distributed import wait as wait_futures

        if not self._running:
            return []
        timeout = None
        if self.trial_timeout is not None:
            timeout = max(0.0, min(t for _, t in self._running.values()) + self.trial_timeout - time.monotonic())
        try:
            wait_futures(list(self._running), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        outcomes = []
        for future, (task, submitted) in list(self._running.items()):
            elapsed = time.monotonic() - submitted
            if future.done():
                if future.status == "finished":
                    outcomes.append(future.result())
                else:
                    error = future.exception()
                    outcomes.append(failed(task, f"dask task failed: {type(error).__name__}: {error}", elapsed))
            elif self.trial_timeout is not None and elapsed >= self.trial_timeout:
                future.cancel()
                outcomes.append(failed(task, f"timed out after {self.trial_timeout:g} s", elapsed))
            else:
                continue
            del self._running[future]
        return outcomes

    def close(self) -> None:
        for future in self._running:
            future.cancel()
        self._running.clear()
        self._client.close()
