"""`tf.train.QueueRunner` and `start_queue_runners`: threads that keep running enqueue ops.

Each enqueue op gets a thread calling `sess.run(op)` until the coordinator stops, the queue is
closed (OutOfRange/Cancelled: a clean stop), or an error (reported to the coordinator). A waiting
enqueue (full queue, or an op waiting for gradients) is called off when the coordinator stops.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from tftk.framework.cancellation import cancelled_by
from tftk.framework import errors
from tftk.framework.ops import GraphKeys, Operation, add_to_collection, get_default_graph, get_default_session
from tftk.platform import tf_logging as logging

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_NEVER = threading.Event()


class QueueRunner:
    """Runs `enqueue_ops` in threads; `close_op` when the last one ends, `cancel_op` on stop."""

    def __init__(self, queue: Any = None, enqueue_ops: Sequence[Operation] | None = None,
                 close_op: Operation | None = None, cancel_op: Operation | None = None,
                 queue_closed_exception_types: Sequence[type] | None = None):
        if not enqueue_ops:
            raise ValueError("QueueRunner needs at least one enqueue op")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None or queue is None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None or queue is None else \
            queue.close(cancel_pending_enqueues=True)
        self._closed_types = tuple(queue_closed_exception_types or (errors.OutOfRangeError, errors.CancelledError))
        self._lock = threading.Lock()
        self._running: dict[Any, int] = {}
        self._exceptions: list[BaseException] = []

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: list(self._enqueue_ops))
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    exceptions_raised = property(lambda self: list(self._exceptions))

    @property
    def name(self) -> str:
        return self._queue.name if self._queue is not None else self._enqueue_ops[0].name

    def create_threads(self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False) -> list:
        """One thread per enqueue op (plus one that runs cancel_op when `coord` stops)."""
        with self._lock:
            if self._running.get(sess, 0) > 0:
                return []  # already running in this session
            self._running[sess] = len(self._enqueue_ops)
            self._exceptions = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord), daemon=daemon,
                                    name=f"QueueRunner-{self.name}-{i}") for i, op in enumerate(self._enqueue_ops)]
        if coord is not None:
            threads.append(threading.Thread(target=self._cancel_on_stop, args=(sess, coord), daemon=True,
                                            name=f"QueueRunnerCancel-{self.name}"))
        for thread in threads:
            if coord is not None:
                coord.register_thread(thread)
            if start:
                thread.start()
        return threads

    def _run(self, sess: Any, enqueue_op: Operation, coord: Any) -> None:
        stop_event = coord.stop_event if coord is not None else _NEVER
        try:
            with cancelled_by(stop_event):
                while not stop_event.is_set():
                    sess.run(enqueue_op)
        except self._closed_types:
            pass  # the queue was closed (or the stop cancelled a waiting op): a clean end
        except Exception as exc:  # noqa: BLE001 - handed to the coordinator, as TF1 does
            self._exceptions.append(exc)
            if coord is None:
                logging.error("Exception in QueueRunner %s: %s", self.name, exc)
                raise
            coord.request_stop(exc)
        finally:
            self._thread_done(sess)

    def _thread_done(self, sess: Any) -> None:
        with self._lock:
            self._running[sess] -= 1
            last = self._running[sess] == 0
        if last and self._close_op is not None and not getattr(sess, "_closed", False):
            try:
                sess.run(self._close_op)
            except (errors.OpError, RuntimeError) as exc:
                logging.vlog(1, "Ignored exception closing queue %s: %s", self.name, exc)

    def _cancel_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        if self._cancel_op is not None and not getattr(sess, "_closed", False):
            try:
                sess.run(self._cancel_op)
            except (errors.OpError, RuntimeError) as exc:
                logging.vlog(1, "Ignored exception cancelling queue %s: %s", self.name, exc)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    add_to_collection(collection, qr)


def start_queue_runners(sess: Any = None, coord: Any = None, daemon: bool = True, start: bool = True,
                        collection: str = GraphKeys.QUEUE_RUNNERS) -> list[threading.Thread]:
    """Start the threads of every QueueRunner in the graph's `collection`; returns them."""
    sess = sess if sess is not None else get_default_session()
    if sess is None:
        raise ValueError("Cannot start queue runners: no default session is registered. Use `with "
                         "sess.as_default()` or pass an explicit session to tf.start_queue_runners(sess=sess)")
    graph = getattr(sess, "graph", None) or get_default_graph()
    threads: list[threading.Thread] = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
