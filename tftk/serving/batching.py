"""Server-side request batching: concurrent requests to one model version run as one Session.run.

TF Serving's BatchingParameters: a batch closes when it holds `max_batch_size` examples or when
its oldest request has waited `batch_timeout_micros`; `num_batch_threads` batches run at once;
at most `max_enqueued_batches` batches' worth of examples wait (more: `QueueFull`, HTTP 503 /
RESOURCE_EXHAUSTED). A batch also closes early when no admitted request is still on its way to
the queue (front ends count them with `arrival()`), so a lone client does not wait for the
timeout. Requests merge when they ask the same version, signature and outputs with
inputs of the same per-example shape and dtype; their rows are concatenated along axis 0 and the
outputs split back. A request larger than max_batch_size runs alone.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from tftk.user_input import UserInputError
from tftk.serving import stage_times
from tftk.serving.servable import Servable

__all__ = ["BatchingParameters", "Batcher", "LoopFuture", "QueueFull", "read_batching_parameters", "INLINE_ROWS"]

INLINE_ROWS = 8  # a round of at most this many examples runs on the front end's event loop (Batcher._end_round)


class QueueFull(RuntimeError):
    """Too many examples are waiting for a batch: the client should retry later."""


@dataclass(frozen=True)
class BatchingParameters:
    max_batch_size: int = 32
    batch_timeout_micros: int = 1000
    num_batch_threads: int = os.cpu_count() or 1
    max_enqueued_batches: int = 100


def read_batching_parameters(path: str | Path | None) -> BatchingParameters:
    """TF Serving's --batching_parameters_file (a BatchingParameters text proto); defaults without one."""
    if path is None:
        return BatchingParameters()
    from google.protobuf import text_format

    from tftk.proto import serving as pb

    path = Path(path)
    try:
        proto = text_format.Parse(path.read_text(encoding="utf-8"), pb.BatchingParameters())
    except OSError as error:
        raise UserInputError(f"{path}: cannot read the batching parameters ({error.strerror})") from None
    except text_format.ParseError as error:
        raise UserInputError(f"{path}: not a valid BatchingParameters text proto ({error})") from None
    defaults = BatchingParameters()
    values = {name: getattr(proto, name).value if proto.HasField(name) else getattr(defaults, name)
              for name in ("max_batch_size", "batch_timeout_micros", "num_batch_threads", "max_enqueued_batches")}
    for name, value in values.items():
        if value < (0 if name == "batch_timeout_micros" else 1):
            raise UserInputError(f"{path}: {name} must be {'>= 0' if name == 'batch_timeout_micros' else '>= 1'}, "
                                 f"got {value}")
    return BatchingParameters(**values)


@dataclass(slots=True)
class _Task:
    servable: Servable
    signature_name: str
    inputs: dict[str, np.ndarray]
    keys: list[str]
    rows: int
    enqueued: float
    future: Future | LoopFuture
    loop: object = None  # the asyncio loop of the front end awaiting the future, if any


class LoopFuture:
    """The result of a task an event loop awaits: set, and its callbacks run, on that loop's thread only.

    What the REST front end needs of a Future (`add_done_callback`, `done`, `result`) without
    concurrent.futures.Future's lock and condition, which cost ~3 us per request on the loop
    thread for synchronisation this single-threaded handover does not need.
    """

    __slots__ = ("_done", "_value", "_error", "_callbacks")

    def __init__(self) -> None:
        self._done, self._value, self._error, self._callbacks = False, None, None, []

    def done(self) -> bool:
        return self._done

    def result(self):
        if not self._done:
            raise RuntimeError("LoopFuture.result() before its result is set")
        if self._error is not None:
            raise self._error
        return self._value

    def add_done_callback(self, callback) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def set_result(self, value) -> None:
        self._value = value
        self._settled()

    def set_exception(self, error: BaseException) -> None:
        self._error = error
        self._settled()

    def _settled(self) -> None:
        self._done = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


def _set(future: Future | LoopFuture, result) -> None:
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


def _set_all(settled: list[tuple[Future, object]]) -> None:
    for future, result in settled:
        _set(future, result)


class Batcher:
    """Queues of tasks keyed by what may share a Session.run, emptied by `num_batch_threads` threads."""

    def __init__(self, parameters: BatchingParameters = BatchingParameters()):
        self.parameters = parameters
        self.metrics = None  # tftk.serving.metrics.Metrics, set by the server
        self._queues: dict[tuple, deque[_Task]] = {}
        self._queued_rows: dict[tuple, int] = {}  # examples in each queue
        self._running = 0  # batch threads running a batch
        self._waiting_rows = 0
        self._arriving = 0  # requests a front end has admitted that may still join a batch
        self._round_held = False  # an event loop's round of requests counts as one arrival (hold_for_round)
        self._condition = threading.Condition()
        self._stopping = False
        self._threads = [threading.Thread(target=self._work, name=f"tftk-batch-{i}", daemon=True)
                         for i in range(parameters.num_batch_threads)]
        for thread in self._threads:
            thread.start()

    @property
    def thread_ids(self) -> list[int]:
        """The batch threads' native ids (for tftk.serving.scheduling)."""
        return [thread.native_id for thread in self._threads]

    def run(self, servable: Servable, signature_name: str, inputs: dict[str, np.ndarray],
            keys: list[str], arrival: list[bool] | None = None) -> dict[str, np.ndarray]:
        """The outputs of `inputs` (batched along axis 0), computed in a batch with other requests."""
        return self.submit(servable, signature_name, inputs, keys, arrival).result()

    @contextmanager
    def arrival(self) -> Iterator[list[bool]]:
        """Count a request as on its way to a batch until it is submitted (or the block ends).

        A batch closes before its timeout when no counted request is still on its way: with
        nothing else able to join, waiting longer only adds latency.
        """
        pending = [True]
        with self._condition:
            self._arriving += 1
        try:
            yield pending
        finally:
            if pending[0]:
                with self._condition:
                    self._arriving -= 1
                    self._condition.notify_all()

    def hold_for_round(self, loop) -> None:
        """An event-loop front end is handing over a round of requests (those its last poll read): batches
        stay open until the loop's round of callbacks ends, so the round's requests can join them."""
        if self._round_held:
            return
        self._round_held = True
        with self._condition:
            self._arriving += 1
        loop.call_soon(self._end_round)

    def _end_round(self) -> None:
        """The loop's round is over. A small batch (a lone client's request) runs right here when no batch
        thread is busy: handing it to a thread and back costs more than the run (two thread wake-ups
        and GIL hand-offs, ~250 us of CPU for the MLP's 70 us run on a loaded machine)."""
        stage_times.switch("batch_handoff")
        self._round_held = False
        with self._condition:
            self._arriving -= 1
            small = self._small_batch() if self._arriving == 0 and self._running == 0 else None
            if small is None:
                self._condition.notify_all()
        if small is not None:
            self._run(small, on_loop=True)
        stage_times.switch("loop")

    def _small_batch(self) -> list[_Task] | None:
        """(condition held) The only queue's tasks when they hold at most INLINE_ROWS examples."""
        if len(self._queues) != 1 or self._waiting_rows > INLINE_ROWS:
            return None
        key, queue = next(iter(self._queues.items()))
        del self._queues[key], self._queued_rows[key]
        self._waiting_rows = 0
        return list(queue)

    def submit(self, servable: Servable, signature_name: str, inputs: dict[str, np.ndarray],
               keys: list[str], arrival: list[bool] | None = None, loop=None) -> Future | LoopFuture:
        """Queue `inputs`; the future gets their outputs (an event loop awaits it without holding a thread).

        The caller keeps `servable` acquired until the future is done; `arrival` is the token of
        `arrival()` counting this request, if any; `loop`: the asyncio loop of a front end awaiting the
        future, which is then a LoopFuture completed on that loop's thread (else a concurrent Future).
        """
        rows = len(next(iter(inputs.values())))
        key = (id(servable), signature_name, tuple(keys), *sorted(
            (name, value.dtype.str, value.shape[1:]) for name, value in inputs.items()))
        task = _Task(servable, signature_name, inputs, keys, rows, time.monotonic(),
                     Future() if loop is None else LoopFuture(), loop)
        limit = self.parameters.max_enqueued_batches * self.parameters.max_batch_size
        with self._condition:
            if self._stopping:
                raise QueueFull("the server is shutting down")
            if self._waiting_rows + rows > limit and self._waiting_rows:
                raise QueueFull(f"batching queue full ({self._waiting_rows} examples waiting); retry later")
            queue = self._queues.setdefault(key, deque())
            queue.append(task)
            self._queued_rows[key] = queued = self._queued_rows.get(key, 0) + rows
            self._waiting_rows += rows
            if arrival is not None and arrival[0]:
                arrival[0] = False
                self._arriving -= 1
            # Wake the batch threads only when that changes what they do (each wake-up costs CPU and a GIL
            # hand-off): a full batch; else, unless an event loop's round is on (its end wakes them), a new
            # queue (its timeout starts) or nothing else on its way.
            if queued >= self.parameters.max_batch_size or not self._round_held and (
                    len(queue) == 1 or self._arriving == 0):
                self._condition.notify_all()
        return task.future

    def _work(self) -> None:
        while True:
            with self._condition:
                batch = self._next_batch()
                if batch is None:
                    return
                self._running += 1
            stage_times.switch("batch_handoff")
            try:
                self._run(batch)
            finally:
                with self._condition:
                    self._running -= 1

    def _next_batch(self) -> list[_Task] | None:
        """The tasks of the next batch (condition held): full, or its oldest task timed out."""
        timeout = self.parameters.batch_timeout_micros / 1e6
        limit = self.parameters.max_batch_size
        while True:
            if self._stopping and not self._queues:
                return None
            if not self._queues:
                self._condition.wait()
                continue
            key = min(self._queues, key=lambda k: self._queues[k][0].enqueued)
            queue = self._queues[key]
            wait = queue[0].enqueued + timeout - time.monotonic()
            if self._queued_rows[key] < limit and wait > 0 and self._arriving > 0 and not self._stopping:
                self._condition.wait(wait)
                continue
            batch, rows = [queue.popleft()], 0
            rows = batch[0].rows
            while queue and rows + queue[0].rows <= limit:
                rows += queue[0].rows
                batch.append(queue.popleft())
            if queue:
                self._queued_rows[key] -= rows
            else:
                del self._queues[key], self._queued_rows[key]
            self._waiting_rows -= rows
            return batch

    def _run(self, batch: list[_Task], on_loop: bool = False) -> None:
        """Run `batch` as one Session.run and settle its futures (`on_loop`: on the event loop's thread)."""
        first = batch[0]
        try:
            inputs = first.inputs if len(batch) == 1 else {
                name: np.concatenate([task.inputs[name] for task in batch]) for name in first.inputs}
            stage_times.switch("session_run")
            outputs = first.servable.run(first.signature_name, inputs, first.keys)
            stage_times.switch("batch_handoff")
        except BaseException as error:  # every request of the batch gets the batch's error
            self._settle(batch, [error] * len(batch), on_loop)
            return
        total = sum(task.rows for task in batch)
        if self.metrics is not None:
            self.metrics.batch(first.servable.name, total)
        results, start = [], 0
        for task in batch:
            results.append({key: value[start:start + task.rows] if value.ndim and value.shape[0] == total else value
                            for key, value in outputs.items()})
            start += task.rows
        self._settle(batch, results, on_loop)

    def _settle(self, batch: list[_Task], results: list, on_loop: bool) -> None:
        """Give each task its outputs (or exception). A batch thread hands an event loop's tasks over in one
        call_soon_threadsafe, so the loop wakes once per batch and the two threads do not trade the GIL
        for each request's result; the futures' callbacks then run on the loop."""
        by_loop: dict = {}
        for task, result in zip(batch, results):
            if task.loop is None or on_loop:
                _set(task.future, result)
            else:
                by_loop.setdefault(task.loop, []).append((task.future, result))
        for loop, settled in by_loop.items():
            loop.call_soon_threadsafe(_set_all, settled)

    def stop(self) -> None:
        """Run what is queued, then end the batch threads."""
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        for thread in self._threads:
            thread.join()
