"""`tf.train.Coordinator` and `LooperThread`: stop a group of threads together, surfacing the first error.

Threads poll `should_stop()` (or block in `wait_for_stop(timeout)`); any of them, or the main
thread, calls `request_stop(exc)`; `join()` waits for all and re-raises the first recorded
exception, except "clean stop" types (OutOfRangeError: an input ran out, training is simply over).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Callable, Iterable, Iterator

from tftk.framework import errors

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """Coordinates the termination of a set of threads."""

    def __init__(self, clean_stop_exception_types: Iterable[type] | None = None):
        self._clean_stop_exception_types = tuple(
            (errors.OutOfRangeError,) if clean_stop_exception_types is None else clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info: tuple | None = None
        self._registered_threads: set[threading.Thread] = set()
        self._joined = False

    def request_stop(self, ex: BaseException | tuple | None = None) -> None:
        """Ask every thread to stop; the first non-clean exception passed here is re-raised by join()."""
        with self._lock:
            if ex is not None and self._exc_info is None:
                info = ex if isinstance(ex, tuple) else (type(ex), ex, ex.__traceback__)
                if not issubclass(info[0], self._clean_stop_exception_types):
                    self._exc_info = info
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget a stop request and its exception, so the coordinator can be used again."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @property
    def stop_event(self) -> threading.Event:
        """Set once a stop is requested: blocking ops of queue-runner threads watch it."""
        return self._stop_event

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Block until a stop is requested or `timeout` seconds pass; True if stop was requested."""
        return self._stop_event.wait(timeout)

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Any exception raised in the block requests a stop (and is recorded) instead of propagating."""
        try:
            yield
        except BaseException:  # noqa: BLE001 - recorded, re-raised by join()
            self.request_stop(sys.exc_info())

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Iterable[threading.Thread] | None = None, stop_grace_period_secs: float = 120,
             ignore_live_threads: bool = False) -> None:
        """Wait for the threads to end after a stop request; re-raise the recorded exception.

        Raises:
          RuntimeError: some threads were still alive `stop_grace_period_secs` after the stop request
            (unless ignore_live_threads).
        """
        with self._lock:
            every = set(threads or ()) | self._registered_threads
        self.wait_for_stop()
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in every:
            thread.join(max(0.0, deadline - time.monotonic()))
        alive = sorted(t.name for t in every if t.is_alive())
        with self._lock:
            self._joined = True
            self._registered_threads.clear()
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raise the exception passed to request_stop, if any."""
        with self._lock:
            info = self._exc_info
        if info is not None:
            raise info[1].with_traceback(info[2])


class LooperThread(threading.Thread):
    """A daemon thread calling `target(*args)` (or `run_loop()`) every `timer_interval_secs` until stop.

    The first call happens at once (or one interval after start with `delay_first_call`, for a
    caller that already made it synchronously); with `timer_interval_secs=None` calls run back to
    back. An exception in the loop requests a stop on the coordinator, which re-raises it from join().
    """

    def __init__(self, coord: Coordinator, timer_interval_secs: float | None, target: Callable | None = None,
                 args: tuple = (), kwargs: dict | None = None, delay_first_call: bool = False):
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._delay_first_call = delay_first_call
        self._target = target
        self._args, self._kwargs = args, kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord: Coordinator, timer_interval_secs: float | None, target: Callable, args: tuple = (),
             kwargs: dict | None = None) -> "LooperThread":
        """Start a LooperThread calling `target` and return it."""
        thread = LooperThread(coord, timer_interval_secs, target, args, kwargs)
        thread.start()
        return thread

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic() + (self._timer_interval_secs if self._delay_first_call else 0.0)
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once before the loop."""

    def stop_loop(self) -> None:
        """Called once after the loop."""

    def run_loop(self) -> None:
        """One iteration (default: call the target)."""
        if self._target is not None:
            self._target(*self._args, **self._kwargs)
