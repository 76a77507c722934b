"""Three more of TF1's hooks: feed every run from a function, wait for the global step before a
worker starts, and run ops once when the monitored session ends (evaluation's final metrics)."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from tftk.framework import errors
from tftk.train.basic_session_run_hooks import _required_global_step
from tftk.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["FeedFnHook", "GlobalStepWaiterHook", "FinalOpsHook"]

_log = logging.getLogger("tftk")


class FeedFnHook(SessionRunHook):
    """Feeds each run with the dict `feed_fn()` returns (a fresh batch per step, say)."""

    def __init__(self, feed_fn: Callable[[], dict]):
        self.feed_fn = feed_fn

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run back until the global step reaches `wait_until_step` (polled every 0.5 s).

    A worker of asynchronous training can so start once the chief has trained a while.
    """

    def __init__(self, wait_until_step: int):
        self._wait_until_step = wait_until_step
        self._worker_is_started = False
        self._global_step = None

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step = _required_global_step("GlobalStepWaiterHook")

    def before_run(self, run_context: Any) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step > 0:
            _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
            last_logged_step = 0
            while True:
                current_step = int(run_context.session.run(self._global_step))
                if current_step >= self._wait_until_step:
                    break
                if current_step - last_logged_step > 1000:
                    _log.info("Waiting for global step %d before starting training. Current step is %d.",
                              self._wait_until_step, current_step)
                    last_logged_step = current_step
                time.sleep(0.5)
        self._worker_is_started = True
        return None


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` (any fetch structure) once in `end()`; their values are `final_ops_values`."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self) -> Any:
        """What `final_ops` evaluated to when the session ended (None before that)."""
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning("An OutOfRangeError or StopIteration was raised by the final ops: an input of them "
                         "(e.g. a dataset) was exhausted. Make them independent of the training inputs.")
            raise
