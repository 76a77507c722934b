"""TF1's standard hooks: stop at a step, log tensors, save checkpoints and summaries, count steps,
stop on NaN loss. Triggers follow `SecondOrStepTimer` (every N seconds or every N global steps)."""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from tftk.framework.ops import GraphKeys, Tensor, get_default_graph
from tftk.train.session_run_hook import SessionRunArgs, SessionRunHook
from tftk.train.training_util import get_global_step
from tftk.summary.writer import SessionLog
from tftk.summary.protos import scalar

__all__ = ["SecondOrStepTimer", "StopAtStepHook", "LoggingTensorHook", "CheckpointSaverListener",
           "CheckpointSaverHook", "SummarySaverHook", "StepCounterHook", "NanTensorHook",
           "NanLossDuringTrainingError"]

_log = logging.getLogger("tftk")


def _required_global_step(hook: str) -> Any:
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook} "
                           "(tf.train.get_or_create_global_step())")
    return step


class SecondOrStepTimer:
    """Triggers at most once per step, when `every_secs` seconds or `every_steps` steps have passed."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Exactly one of every_secs and every_steps should be provided, got "
                             f"every_secs={every_secs}, every_steps={every_steps}")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self) -> None:
        self._last_time: float | None = None
        self._last_step: int | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            return time.time() >= self._last_time + self._every_secs
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Record a trigger at `step`; returns (seconds, steps) since the previous one (None at first)."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches `last_step` (or `num_steps` past its start)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("Exactly one of num_steps and last_step should be provided")
        if num_steps is not None and num_steps < 0:
            raise ValueError(f"num_steps must be non-negative, got {num_steps}")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self) -> None:
        self._global_step = _required_global_step("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if int(run_values.results) + 1 >= self._last_step:  # the value fetched is from before the step
            if int(run_context.session.run(self._global_step)) >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a dict tag -> tensor, or a list) every N steps or seconds, at INFO
    level on the 'tftk' logger, as `tag = value, tag = value`."""

    def __init__(self, tensors: Mapping[str, Any] | Sequence[Any], every_n_iter: int | None = None,
                 every_n_secs: float | None = None, at_end: bool = False,
                 formatter: Callable[[dict], str] | None = None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("Exactly one of every_n_iter and every_n_secs must be provided (or only at_end)")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"every_n_iter must be positive, got {every_n_iter}")
        items = tensors.items() if isinstance(tensors, Mapping) else \
            [(t if isinstance(t, str) else t.name, t) for t in tensors]
        self._tags = [tag for tag, _ in items]
        self._tensors = dict(items)
        self._timer = None if only_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self) -> None:
        graph = get_default_graph()
        self._fetches = {tag: graph.as_graph_element(t, allow_tensor=True, allow_operation=False)
                         if isinstance(t, str) else t for tag, t in self._tensors.items()}
        self._iter = 0

    def before_run(self, run_context: Any) -> SessionRunArgs | None:
        self._should_log = self._timer is not None and self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._fetches) if self._should_log else None

    def _emit(self, values: dict) -> None:
        if self._formatter is not None:
            _log.info(self._formatter(values))
        else:
            _log.info(", ".join(f"{tag} = {values[tag]}" for tag in self._tags))

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._should_log:
            self._timer.update_last_triggered_step(self._iter)
            self._emit(run_values.results)
        self._iter += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._emit(session.run(self._fetches))


class CheckpointSaverListener:
    """Called around each save of a CheckpointSaverHook (begin, before_save, after_save, end)."""

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        """Return True to request a stop."""

    def end(self, session: Any, global_step_value: int) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session starts, every N seconds or steps, and at the end."""

    def __init__(self, checkpoint_dir: str | os.PathLike, save_secs: float | None = None,
                 save_steps: int | None = None, saver: Any = None, checkpoint_basename: str = "model.ckpt",
                 scaffold: Any = None, listeners: Sequence[CheckpointSaverListener] | None = None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._saver, self._scaffold = saver, scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])

    def begin(self) -> None:
        self._global_step = _required_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = int(session.run(self._global_step))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError(f"CheckpointSaverHook needs exactly one Saver in the SAVERS collection "
                               f"(found {len(savers)}); pass saver= or scaffold=")
        return savers[0]

    def _save(self, session: Any, step: int) -> bool:
        """Save; True when a listener asks to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        return any([bool(listener.after_save(session, step)) for listener in self._listeners])


def _summary_writer(output_dir: str | None, summary_writer: Any) -> Any:
    if summary_writer is not None:
        return summary_writer
    if output_dir is None:
        return None
    from tftk.summary.writer import FileWriterCache  # lazy: tensorboardX
    return FileWriterCache.get(output_dir)


class SummarySaverHook(SessionRunHook):
    """Runs `summary_op` (default: the scaffold's or merge_all) every N steps or seconds and writes it."""

    def __init__(self, save_steps: int | None = None, save_secs: float | None = None,
                 output_dir: str | os.PathLike | None = None, summary_writer: Any = None,
                 scaffold: Any = None, summary_op: Any = None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._output_dir = None if output_dir is None else os.fspath(output_dir)
        self._summary_writer = summary_writer
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._writer = _summary_writer(self._output_dir, self._summary_writer)
        self._global_step = _required_global_step("SummarySaverHook")
        self._next_step: int | None = None

    def _op(self) -> Any:
        return self._summary_op if self._summary_op is not None else self._scaffold.summary_op

    def before_run(self, run_context: Any) -> SessionRunArgs:
        self._request = self._op() is not None and (
            self._next_step is None or self._timer.should_trigger_for_step(self._next_step))
        fetches = {"global_step": self._global_step}
        if self._request:
            fetches["summary"] = self._op()
        return SessionRunArgs(fetches)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._writer is None:
            return
        step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request:
            self._timer.update_last_triggered_step(step)
            self._writer.add_summary(run_values.results["summary"], step)
        self._next_step = step + 1

    def end(self, session: Any = None) -> None:
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Writes `global_step/sec` to TensorBoard every N steps or seconds."""

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None,
                 output_dir: str | os.PathLike | None = None, summary_writer: Any = None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_steps)
        self._output_dir = None if output_dir is None else os.fspath(output_dir)
        self._summary_writer = summary_writer

    def begin(self) -> None:
        self._writer = _summary_writer(self._output_dir, self._summary_writer)
        self._global_step = _required_global_step("StepCounterHook")

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        step = int(run_values.results)
        if not self._timer.should_trigger_for_step(step):
            return
        secs, steps = self._timer.update_last_triggered_step(step)
        if secs and steps and self._writer is not None:
            self._writer.add_summary(scalar("global_step/sec", steps / secs), step)


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Raises NanLossDuringTrainingError (or only stops, with fail_on_nan_loss=False) when the loss is NaN."""

    def __init__(self, loss_tensor: Tensor, fail_on_nan_loss: bool = True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if np.isnan(run_values.results).any():
            if self._fail_on_nan_loss:
                _log.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            _log.warning("Model diverged with loss = NaN. Stopping training.")
            run_context.request_stop()
