"""`tf.estimator.Estimator`: a model_fn trained, evaluated and served from one model_dir.

Each call builds a fresh graph: input_fn gives features and labels (a tf.data Dataset or a
(features, labels) pair of tensors), model_fn turns them into an EstimatorSpec for the mode, and a
MonitoredSession restores the newest checkpoint of model_dir — or initialises, warm-started if asked
— so a second `train` goes on from the saved global step, exactly as TF 1.x does.

    def model_fn(features, labels, mode, params):
        ...
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    estimator = tf.estimator.Estimator(model_fn, model_dir="run")
    estimator.train(input_fn, steps=100)
    estimator.evaluate(eval_input_fn)      # {"loss": ..., "global_step": 100, ...}; also run/eval/ events
"""

from __future__ import annotations

import copy
import inspect
import os
import tempfile
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from tftk.estimator.evaluation import FinalOpsHook, StopAfterNEvalsHook, write_dict_to_summary
from tftk.estimator.mode_keys import ModeKeys
from tftk.estimator.model_fn import LOSS_METRIC_KEY, EstimatorSpec
from tftk.estimator.run_config import RunConfig
from tftk.estimator.warm_starting import WarmStartSettings, warm_start, warm_start_settings
from tftk.framework.ops import GraphKeys, Graph, get_collection, get_default_graph
from tftk.platform import tf_logging
from tftk.train.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener,
                                                LoggingTensorHook, NanTensorHook, StopAtStepHook)
from tftk.train.checkpoint_state import latest_checkpoint
from tftk.train.checkpoint_utils import list_variables, load_variable
from tftk.train.monitored_session import ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession
from tftk.train.session_run_hook import SessionRunHook
from tftk.train.training_util import create_global_step, get_global_step

__all__ = ["Estimator"]
_MODEL_FN_ARGS = {"features", "labels", "mode", "params", "config", "self"}


def function_args(fn: Callable) -> tuple[str, ...]:
    """The names of `fn`'s parameters (a function, a method, a partial or a callable object)."""
    return tuple(inspect.signature(fn).parameters)


class DatasetInitializerHook(SessionRunHook):
    """Runs a dataset iterator's initializer once the session exists (input_fn returned a Dataset)."""

    def __init__(self, iterator: Any):
        self._iterator = iterator

    def begin(self) -> None:
        self._initializer = self._iterator.initializer

    def after_create_session(self, session: Any, coord: Any) -> None:
        session.run(self._initializer)


class Estimator:
    """Trains, evaluates, predicts with and exports the model `model_fn` defines.

    Args:
      model_fn: `model_fn(features, labels, mode, params, config)` -> EstimatorSpec (labels, mode,
        params and config are optional parameters; features is required).
      model_dir: where checkpoints and summaries go (default: config.model_dir, else a temporary folder).
      config: a RunConfig.
      params: a dict handed to model_fn as `params` (copied).
      warm_start_from: a checkpoint path or folder, a SavedModel folder, or a WarmStartSettings:
        variables start from it when model_dir has no checkpoint yet.
    """

    def __init__(self, model_fn: Callable[..., EstimatorSpec], model_dir: str | os.PathLike | None = None,
                 config: RunConfig | None = None, params: Mapping[str, Any] | None = None,
                 warm_start_from: str | os.PathLike | WarmStartSettings | None = None):
        config = RunConfig() if config is None else config
        if not isinstance(config, RunConfig):
            raise ValueError(f"Estimator: config must be a tf.estimator.RunConfig, given {config!r}")
        if model_dir is not None:
            model_dir = os.fspath(model_dir)
            if config.model_dir is not None and os.path.abspath(config.model_dir) != os.path.abspath(model_dir):
                raise ValueError(f"Estimator: model_dir is set both in the constructor ({model_dir!r}) and in "
                                 f"RunConfig ({config.model_dir!r}) with different values; set one")
            config = config.replace(model_dir=model_dir)
        elif config.model_dir is None:
            config = config.replace(model_dir=tempfile.mkdtemp())
            tf_logging.warning("Using temporary folder as model directory: %s", config.model_dir)
        _check_model_fn(model_fn, params)
        self._config = config
        self._model_dir = config.model_dir
        self._model_fn = model_fn
        self._params = copy.deepcopy(dict(params or {}))
        self._warm_start_settings = warm_start_settings(warm_start_from)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: copy.deepcopy(self._config))
    params = property(lambda self: copy.deepcopy(self._params))
    model_fn = property(lambda self: self._model_fn)

    # ---- checkpoints ----------------------------------------------------------------------------

    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint prefix in model_dir, or None."""
        return latest_checkpoint(self._model_dir)

    def _require_checkpoint(self) -> None:
        if self.latest_checkpoint() is None:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir} (train first)")

    def get_variable_names(self) -> list[str]:
        """The names of the variables in the newest checkpoint, sorted."""
        self._require_checkpoint()
        return [name for name, _ in list_variables(self._model_dir)]

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the newest checkpoint."""
        self._require_checkpoint()
        return load_variable(self._model_dir, name)

    def eval_dir(self, name: str | None = None) -> str:
        """Where `evaluate(name=...)` writes its summaries: model_dir/eval or model_dir/eval_<name>."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    # ---- building a graph -----------------------------------------------------------------------

    def _call_input_fn(self, input_fn: Callable, mode: str) -> tuple[Any, Any, list[SessionRunHook]]:
        """(features, labels or None, hooks) from input_fn, which may take params, mode and config."""
        if not callable(input_fn):
            raise TypeError(f"input_fn must be a function returning a Dataset or (features, labels), given {input_fn!r}")
        wanted = function_args(input_fn)
        kwargs = {name: value for name, value in (("params", self.params), ("mode", mode), ("config", self.config))
                  if name in wanted}
        return parse_input_fn_result(input_fn(**kwargs))

    def _call_model_fn(self, features: Any, labels: Any, mode: str) -> EstimatorSpec:
        wanted = function_args(self._model_fn)
        kwargs: dict[str, Any] = {}
        if "labels" in wanted:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels; add a labels "
                             "parameter to model_fn or return only features from input_fn")
        for name, value in (("mode", mode), ("params", self.params), ("config", self.config)):
            if name in wanted:
                kwargs[name] = value
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return a tf.estimator.EstimatorSpec, it returned {type(spec).__name__}")
        if spec.mode != mode:
            raise ValueError(f"model_fn returned an EstimatorSpec for mode {spec.mode!r} when called in mode {mode!r}")
        return spec

    def _new_graph(self) -> Graph:
        """A graph with the config's seed and a global step, made the default by the caller."""
        graph = Graph()
        graph.seed = self._config.tf_random_seed
        with graph.as_default():
            create_global_step(graph)
        return graph

    def _checkpoint_to_read(self, checkpoint_path: str | None, purpose: str) -> str | None:
        """The given checkpoint, else model_dir's newest; None (and a log line) means the initial values."""
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if not checkpoint_path:
            tf_logging.info("Could not find trained model in model_dir: %s, running initialization to %s.",
                      self._model_dir, purpose)
        return checkpoint_path

    def _maybe_warm_start(self, checkpoint_path: str | None) -> None:
        if self._warm_start_settings is not None and not checkpoint_path:
            warm_start(*self._warm_start_settings)

    # ---- train ----------------------------------------------------------------------------------

    def train(self, input_fn: Callable, hooks: Sequence[SessionRunHook] | None = None, steps: int | None = None,
              max_steps: int | None = None, saving_listeners: Sequence[CheckpointSaverListener] | None = None
              ) -> "Estimator":
        """Train until input_fn's data runs out, `steps` more steps, or global step `max_steps`.

        Training goes on from model_dir's newest checkpoint; with max_steps at or below its global step
        nothing runs.
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Estimator.train: can not provide both steps and max_steps")
        if steps is not None and steps <= 0:
            raise ValueError(f"Estimator.train: must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Estimator.train: must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None and max_steps <= self._checkpoint_global_step():
            tf_logging.info("Skipping training since max_steps has already saved.")
            return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(StopAtStepHook(steps, max_steps))
        listeners = list(saving_listeners or [])
        for listener in listeners:
            if not isinstance(listener, CheckpointSaverListener):
                raise TypeError(f"saving_listeners must hold CheckpointSaverListener instances, given: {listener!r}")
        graph = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
            loss = self._train_with_spec(spec, input_hooks + hooks, listeners)
        tf_logging.info("Loss for final step: %s.", loss)
        return self

    def _checkpoint_global_step(self) -> int:
        path = self.latest_checkpoint()
        return 0 if path is None else int(load_variable(path, GraphKeys.GLOBAL_STEP))

    def _train_with_spec(self, spec: EstimatorSpec, worker_hooks: list[SessionRunHook],
                         listeners: list[CheckpointSaverListener]) -> Any:
        from tftk.ops.summary_ops import scalar
        from tftk.train.saver import Saver
        config = self._config
        self._maybe_warm_start(None)
        if not any(summary.op.name == "loss" for summary in get_collection(GraphKeys.SUMMARIES)):
            scalar("loss", spec.loss)
        get_default_graph().add_to_collection(GraphKeys.LOSSES, spec.loss)
        global_step = get_global_step()
        worker_hooks = worker_hooks + [NanTensorHook(spec.loss)]
        if config.log_step_count_steps:
            worker_hooks.append(LoggingTensorHook({"loss": spec.loss, "step": global_step},
                                                  every_n_iter=config.log_step_count_steps))
        worker_hooks += list(spec.training_hooks)
        if not (spec.scaffold.saver or get_collection(GraphKeys.SAVERS)):
            get_default_graph().add_to_collection(GraphKeys.SAVERS, Saver(
                sharded=True, max_to_keep=config.keep_checkpoint_max, defer_build=True, save_relative_paths=True,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours))
        chief_hooks: list[SessionRunHook] = []
        saver_hooks = [hook for hook in worker_hooks + list(spec.training_chief_hooks)
                       if isinstance(hook, CheckpointSaverHook)]
        if (config.save_checkpoints_secs or config.save_checkpoints_steps) and not saver_hooks:
            chief_hooks = [CheckpointSaverHook(self._model_dir, save_secs=config.save_checkpoints_secs,
                                               save_steps=config.save_checkpoints_steps, scaffold=spec.scaffold)]
            saver_hooks = chief_hooks
        if listeners:
            if not saver_hooks:
                raise ValueError("saving_listeners need a CheckpointSaverHook: set RunConfig.save_checkpoints_steps "
                                 "or save_checkpoints_secs")
            saver_hooks[0]._listeners.extend(listeners)
        loss, any_step = None, False
        with MonitoredTrainingSession(checkpoint_dir=self._model_dir, scaffold=spec.scaffold, hooks=worker_hooks,
                                      chief_only_hooks=chief_hooks + list(spec.training_chief_hooks),
                                      save_checkpoint_secs=0, save_summaries_steps=config.save_summary_steps,
                                      config=config.session_config,
                                      log_step_count_steps=config.log_step_count_steps) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
                any_step = True
        if not any_step:
            tf_logging.warning("Training with estimator made no steps. Perhaps input is empty or misspecified.")
        return loss

    # ---- evaluate -------------------------------------------------------------------------------

    def evaluate(self, input_fn: Callable, steps: int | None = None, hooks: Sequence[SessionRunHook] | None = None,
                 checkpoint_path: str | None = None, name: str | None = None) -> dict[str, Any]:
        """The metrics of eval_metric_ops, plus `loss` (its mean) and `global_step`, over `steps` batches
        (default: until input_fn's data runs out), from the newest checkpoint (or `checkpoint_path`).

        The values are also written as scalars to model_dir/eval (or eval_<name>) at the global step.
        """
        hooks = _check_hooks(hooks)
        if steps is not None:
            if steps <= 0:
                raise ValueError(f"Estimator.evaluate: must specify steps > 0, given: {steps}")
            hooks.append(StopAfterNEvalsHook(steps))
        checkpoint_path = self._checkpoint_to_read(checkpoint_path, "evaluate")
        from tftk.ops.control_flow_ops import group
        from tftk.ops.metrics_impl import mean
        graph = self._new_graph()
        with graph.as_default():
            features, labels, input_hooks = self._call_input_fn(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            self._maybe_warm_start(checkpoint_path)
            for reserved in (LOSS_METRIC_KEY, GraphKeys.GLOBAL_STEP):
                if reserved in spec.eval_metric_ops:
                    raise ValueError(f"eval_metric_ops: a metric named {reserved!r} is not allowed, because "
                                     f"Estimator already reports one under that name; rename it")
            metric_ops = {**spec.eval_metric_ops, LOSS_METRIC_KEY: mean(spec.loss)}
            values = {key: metric_ops[key][0] for key in sorted(metric_ops)}
            values[GraphKeys.GLOBAL_STEP] = get_global_step()
            update_op = group(*[metric_ops[key][1] for key in sorted(metric_ops)])
            final = FinalOpsHook(values)
            all_hooks = input_hooks + hooks + list(spec.evaluation_hooks) + [final]
            creator = ChiefSessionCreator(scaffold=spec.scaffold, config=self._config.session_config,
                                          checkpoint_filename_with_path=checkpoint_path)
            tf_logging.info("Starting evaluation")
            with MonitoredSession(creator, all_hooks) as session:
                while not session.should_stop():
                    session.run(update_op)
        results = final.final_ops_values
        if results is None:
            raise RuntimeError("Estimator.evaluate: the evaluation stopped before its metrics were read "
                               "(a hook failed)")
        results = {key: value for key, value in results.items()}
        write_dict_to_summary(self.eval_dir(name), results, int(results[GraphKeys.GLOBAL_STEP]))
        tf_logging.info("Saving dict for global step %s: %s", results[GraphKeys.GLOBAL_STEP],
                  ", ".join(f"{key} = {value}" for key, value in sorted(results.items())))
        return results

    # ---- predict --------------------------------------------------------------------------------

    def predict(self, input_fn: Callable, predict_keys: str | Sequence[str] | None = None,
                hooks: Sequence[SessionRunHook] | None = None, checkpoint_path: str | None = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yield model_fn's predictions for input_fn's features, one example at a time (a dict when the
        predictions are a dict, restricted to `predict_keys`), until input_fn's data runs out."""
        hooks = _check_hooks(hooks)
        checkpoint_path = self._checkpoint_to_read(checkpoint_path, "predict")
        graph = self._new_graph()
        with graph.as_default():
            features, _, input_hooks = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            self._maybe_warm_start(checkpoint_path)
            predictions = _select_keys(spec.predictions, predict_keys)
            creator = ChiefSessionCreator(scaffold=spec.scaffold, config=self._config.session_config,
                                          checkpoint_filename_with_path=checkpoint_path)
            with MonitoredSession(creator, input_hooks + hooks + list(spec.prediction_hooks)) as session:
                while not session.should_stop():
                    batch = session.run(predictions)
                    if not yield_single_examples:
                        yield batch
                    elif not isinstance(predictions, dict):
                        yield from batch
                    else:
                        for i in range(_batch_length(batch)):
                            yield {key: value[i] for key, value in batch.items()}

    # ---- export ---------------------------------------------------------------------------------

    def export_saved_model(self, export_dir_base: str | os.PathLike, serving_input_receiver_fn: Callable,
                           assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
                           checkpoint_path: str | None = None, experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """Write a SavedModel of the PREDICT graph fed by serving_input_receiver_fn, with the newest
        checkpoint's variables, to export_dir_base/<timestamp>; returns that folder (bytes, as TF)."""
        from tftk.estimator.saved_model_export import export_saved_model
        return export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                  checkpoint_path, experimental_mode)

    def export_savedmodel(self, export_dir_base: str | os.PathLike, serving_input_receiver_fn: Callable,
                          assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
                          checkpoint_path: str | None = None, strip_default_attrs: bool = False) -> bytes:
        """TF 1.x's older spelling of export_saved_model."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra, as_text,
                                       checkpoint_path)


def parse_input_fn_result(result: Any) -> tuple[Any, Any, list[SessionRunHook]]:
    """(features, labels or None, hooks) from what an input_fn returned: a Dataset (iterated, its
    initializer run by a hook), a (features, labels) pair, or features alone."""
    from tftk.data.dataset_ops import Dataset
    from tftk.data.iterator_ops import make_initializable_iterator
    hooks: list[SessionRunHook] = []
    if isinstance(result, Dataset):
        iterator = make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    if isinstance(result, (list, tuple)):
        if len(result) != 2:
            raise ValueError(f"input_fn should return (features, labels) as a tuple of 2, or features alone; "
                             f"it returned a {type(result).__name__} of {len(result)}")
        return result[0], result[1], hooks
    return result, None, hooks


def _check_model_fn(model_fn: Callable, params: Mapping[str, Any] | None) -> None:
    if not callable(model_fn):
        raise TypeError(f"Estimator: model_fn must be a function, given {model_fn!r}")
    signature = inspect.signature(model_fn)
    names = set(signature.parameters)
    if "features" not in names:
        raise ValueError(f"Estimator: model_fn ({model_fn}) must have a `features` parameter")
    if params and "params" not in names:
        raise ValueError(f"Estimator: model_fn ({model_fn}) has no `params` parameter, but params ({params}) "
                         f"are passed to Estimator")
    unexpected = sorted(name for name, parameter in signature.parameters.items()
                        if name not in _MODEL_FN_ARGS and parameter.default is inspect.Parameter.empty
                        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD))
    if unexpected:
        raise ValueError(f"Estimator: model_fn ({model_fn}) has parameters it will not be given: {unexpected} "
                         f"(allowed: features, labels, mode, params, config)")


def _check_hooks(hooks: Sequence[SessionRunHook] | None) -> list[SessionRunHook]:
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"hooks must hold tf.train.SessionRunHook instances, given: {hook!r}")
    return hooks


def _select_keys(predictions: Any, keys: str | Sequence[str] | None) -> Any:
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions")
    keys = [keys] if isinstance(keys, str) else list(keys)
    chosen = {key: value for key, value in predictions.items() if key in keys}
    if not chosen:
        raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, provided {keys}")
    return chosen


def _batch_length(batch: Mapping[str, np.ndarray]) -> int:
    lengths = {key: np.shape(value)[0] if np.ndim(value) else None for key, value in batch.items()}
    first = next(iter(lengths.values()))
    for key, length in lengths.items():
        if length is None:
            raise ValueError(f"predictions[{key!r}] is a scalar; with yield_single_examples=True every prediction "
                             f"needs a batch dimension")
        if length != first:
            raise ValueError(f"Batch length of predictions should be same: {key!r} has {length} rows, others {first}")
    return first
