"""The local executor: N persistent worker processes ('spawn' context), each killed and replaced when
its trial exceeds the timeout or when it dies, so one bad trial never stops the search."""

from __future__ import annotations

import multiprocessing
import signal
import sys
import time
from multiprocessing.connection import Connection, wait as wait_ready

from hpsearch.trial import TrialOutcome, TrialTask, execute, failed, limit_threads

__all__ = ["LocalPool"]


def _die_with_parent() -> None:
    """Linux: have the kernel SIGKILL this worker if the search process dies, so no orphan trains on."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _worker_main(conn: Connection, threads: int) -> None:
    """A worker process: run tasks from `conn` until it sends None or the search process goes away.

    Ctrl-C at the terminal reaches the whole process group: workers ignore it, and the search stops
    them with SIGTERM, on which a training trial saves its checkpoint and the worker exits quietly.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    limit_threads(threads)
    conn.send("ready")
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        try:
            conn.send(execute(task))
        except KeyboardInterrupt:  # stopped by the search: the trial saved what it had
            return


class _Worker:
    def __init__(self, context, threads: int):
        """Launch the process; call `wait_ready()` before giving it a task."""
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, threads), daemon=True)
        self.process.start()
        child.close()
        self.task: TrialTask | None = None
        self.started = 0.0

    def wait_ready(self) -> "_Worker":
        """Block until the interpreter is up, so a trial's timeout does not count its launch."""
        try:
            self.conn.recv()
        except EOFError:
            raise RuntimeError(f"hpsearch worker process failed to start (exit code {self.process.exitcode})") from None
        return self

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


class LocalPool:
    """Runs TrialTasks on `nb_process` local processes; `wait()` returns finished outcomes."""

    def __init__(self, nb_process: int, threads: int, trial_timeout: float | None = None, start_method: str = "spawn"):
        self.capacity = nb_process
        self.threads = threads
        self.trial_timeout = trial_timeout
        self._context = multiprocessing.get_context(start_method)
        # Launch every worker at once and then wait for them: interpreters boot in parallel.
        launched = [_Worker(self._context, threads) for _ in range(nb_process)]
        self._workers: list[_Worker | None] = [w.wait_ready() for w in launched]

    def free_slots(self) -> int:
        return sum(w is None or w.task is None for w in self._workers)

    def submit(self, task: TrialTask) -> None:
        """Hand `task` to an idle worker (starting one if needed); the caller keeps within free_slots()."""
        slot = next(i for i, w in enumerate(self._workers) if w is None or w.task is None)
        worker = self._workers[slot] or _Worker(self._context, self.threads).wait_ready()
        self._workers[slot] = worker
        worker.conn.send(task)
        worker.task, worker.started = task, time.monotonic()

    def wait(self) -> list[TrialOutcome]:
        """Block until at least one running task finishes, fails, dies or times out; [] if none runs."""
        busy = [w for w in self._workers if w is not None and w.task is not None]
        if not busy:
            return []
        timeout = None
        if self.trial_timeout is not None:
            timeout = max(0.0, min(w.started + self.trial_timeout for w in busy) - time.monotonic())
        ready = set(wait_ready([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
        outcomes = []
        for slot, worker in enumerate(self._workers):
            if worker is None or worker.task is None:
                continue
            task, elapsed = worker.task, time.monotonic() - worker.started
            if worker.conn in ready or worker.process.sentinel in ready:
                try:
                    outcomes.append(worker.conn.recv())
                    worker.task = None
                    continue
                except (EOFError, OSError):
                    worker.process.join(timeout=5)  # the pipe closes a moment before the exit is reaped
                    code = worker.process.exitcode
                    outcomes.append(failed(task, f"worker process died (exit code {code})", elapsed))
            elif self.trial_timeout is not None and elapsed >= self.trial_timeout:
                outcomes.append(failed(task, f"timed out after {self.trial_timeout:g} s", elapsed))
            else:
                continue
            worker.stop()
            self._workers[slot] = None
        return outcomes

    def interrupt(self, grace: float = 60.0) -> None:
        """Stop busy workers with SIGTERM (their trials checkpoint and exit), killing any still alive after
        `grace` seconds; their outcomes are dropped, so a resumed search runs them again from the checkpoint."""
        busy = [w for w in self._workers if w is not None and w.task is not None and w.process.is_alive()]
        for worker in busy:
            worker.process.terminate()
        deadline = time.monotonic() + grace
        for worker in busy:
            worker.process.join(timeout=max(0.0, deadline - time.monotonic()))
            worker.task = None
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            if worker is None:
                continue
            if worker.task is None and worker.process.is_alive():
                worker.conn.send(None)
                worker.process.join(timeout=5)
            worker.stop()
        self._workers = [None] * self.capacity
