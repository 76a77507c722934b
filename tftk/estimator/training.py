"""`tf.estimator.train_and_evaluate` with TrainSpec / EvalSpec, as TF 1.x runs it in one process:
train to TrainSpec.max_steps, and after each new checkpoint (at most every throttle_secs) evaluate
on EvalSpec.input_fn and run the exporters; the last checkpoint is always evaluated."""

from __future__ import annotations

import collections
import os
from typing import Any, Callable, Sequence

from tftk.estimator.estimator import Estimator
from tftk.estimator.exporter import Exporter
from tftk.platform import tf_logging
from tftk.train.basic_session_run_hooks import CheckpointSaverListener, SecondOrStepTimer
from tftk.train.session_run_hook import SessionRunHook

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]


def _hooks(hooks: Sequence[SessionRunHook] | None, where: str) -> tuple[SessionRunHook, ...]:
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"{where}: hooks must hold SessionRunHook instances, given: {hook!r}")
    return hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """The training half: input_fn, the global step to stop at (None: until the input ends), hooks."""

    def __new__(cls, input_fn: Callable, max_steps: int | None = None, hooks: Sequence[SessionRunHook] | None = None,
                saving_listeners: Sequence[CheckpointSaverListener] | None = None) -> "TrainSpec":
        if not callable(input_fn):
            raise TypeError(f"TrainSpec: input_fn must be callable, given: {input_fn!r}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"TrainSpec: must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _hooks(hooks, "TrainSpec"), tuple(saving_listeners or ()))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                   "start_delay_secs", "throttle_secs"])):
    """The evaluation half: input_fn, batches per evaluation (None: until the input ends), the eval
    folder's name, hooks, exporters, and at least throttle_secs between two evaluations."""

    def __new__(cls, input_fn: Callable, steps: int | None = 100, name: str | None = None,
                hooks: Sequence[SessionRunHook] | None = None, exporters: Exporter | Sequence[Exporter] | None = None,
                start_delay_secs: int = 120, throttle_secs: int = 600) -> "EvalSpec":
        if not callable(input_fn):
            raise TypeError(f"EvalSpec: input_fn must be callable, given: {input_fn!r}")
        if steps is not None and steps <= 0:
            raise ValueError(f"EvalSpec: must specify steps > 0, given: {steps}")
        if start_delay_secs < 0:
            raise ValueError(f"EvalSpec: must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"EvalSpec: must specify throttle_secs >= 0, given: {throttle_secs}")
        exporters = () if exporters is None else (exporters,) if isinstance(exporters, Exporter) else tuple(exporters)
        names = [exporter.name for exporter in exporters if isinstance(exporter, Exporter)]
        if len(names) != len(exporters):
            raise TypeError(f"EvalSpec: exporters must be Exporter instances, given: {exporters!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"EvalSpec: exporters must have distinct names, given {names}")
        return super().__new__(cls, input_fn, steps, name, _hooks(hooks, "EvalSpec"), exporters, start_delay_secs,
                               throttle_secs)


class _EvaluateOnNewCheckpoint(CheckpointSaverListener):
    """Evaluates (and exports) after each checkpoint save, skipping the one written before the first
    step and any within throttle_secs of the previous evaluation; the last checkpoint always."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec, max_steps: int | None):
        self._estimator, self._spec, self._max_steps = estimator, eval_spec, max_steps
        self.eval_result: dict[str, Any] | None = None
        self.export_results: list[bytes] = []
        self._last_checkpoint: str | None = None

    def begin(self) -> None:
        self._timer = SecondOrStepTimer(every_secs=self._spec.throttle_secs)
        self._first_save = True

    def after_save(self, session: Any, global_step_value: int) -> None:
        if self._first_save:  # the checkpoint of the restored or initial model: nothing trained yet
            self._first_save = False
            return
        if self._timer.should_trigger_for_step(global_step_value):
            self._evaluate(global_step_value)
        else:
            tf_logging.info("Skip the current checkpoint eval due to throttle secs (%s secs).", self._spec.throttle_secs)

    def end(self, session: Any, global_step_value: int) -> None:
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate(global_step_value)

    def _evaluate(self, global_step_value: int) -> None:
        self._timer.update_last_triggered_step(global_step_value)
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None or checkpoint == self._last_checkpoint:
            raise RuntimeError(f"There was no new checkpoint after the training (step {global_step_value}) to "
                               f"evaluate in {self._estimator.model_dir}")
        self._last_checkpoint = checkpoint
        self.eval_result = self._estimator.evaluate(self._spec.input_fn, steps=self._spec.steps, name=self._spec.name,
                                                    checkpoint_path=checkpoint, hooks=self._spec.hooks)
        final = self._max_steps is not None and self.eval_result["global_step"] >= self._max_steps
        for exporter in self._spec.exporters:
            path = os.path.join(self._estimator.model_dir, "export", exporter.name)
            written = exporter.export(self._estimator, path, checkpoint, self.eval_result, final)
            if written is not None:
                self.export_results.append(written)


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec
                       ) -> tuple[dict[str, Any] | None, list[bytes]]:
    """Train and evaluate `estimator` locally; returns (the last evaluation's metrics, the exports written).

    Evaluations follow the checkpoints, so RunConfig.save_checkpoints_steps/secs sets how often they
    happen (the default: every 600 seconds, and at the end).
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f"train_and_evaluate: estimator must be a tf.estimator.Estimator, given {estimator!r}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"train_and_evaluate: train_spec must be a TrainSpec, given {train_spec!r}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"train_and_evaluate: eval_spec must be an EvalSpec, given {eval_spec!r}")
    config = estimator.config
    if not (config.save_checkpoints_steps or config.save_checkpoints_secs):
        raise ValueError("train_and_evaluate evaluates each new checkpoint: set RunConfig.save_checkpoints_steps "
                         "or save_checkpoints_secs")
    tf_logging.info("Start train and evaluate loop. The evaluate will happen after every checkpoint "
              "(save_checkpoints_steps %s or save_checkpoints_secs %s).",
              config.save_checkpoints_steps, config.save_checkpoints_secs)
    listener = _EvaluateOnNewCheckpoint(estimator, eval_spec, train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=train_spec.max_steps,
                    saving_listeners=[listener, *train_spec.saving_listeners])
    return listener.eval_result, listener.export_results
