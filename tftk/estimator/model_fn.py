"""`tf.estimator.EstimatorSpec`: what a model_fn returns, checked field by field when it is built.

A wrong spec fails here, at the model_fn's return, with one line naming the field, the mode and
what the field must be — not later inside a session run.
"""

from __future__ import annotations

import collections
from typing import Any, Mapping, Sequence

from tftk.estimator.export_output import ExportOutput
from tftk.estimator.mode_keys import ModeKeys
from tftk.framework.ops import Operation, Tensor
from tftk.framework.sparse_tensor import SparseTensor
from tftk.train.monitored_session import Scaffold
from tftk.train.session_run_hook import SessionRunHook

__all__ = ["EstimatorSpec", "LOSS_METRIC_KEY", "AVERAGE_LOSS_METRIC_KEY"]

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"
_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs", "training_chief_hooks",
           "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _FIELDS)):
    """The ops a model_fn defines for one mode.

    Args:
      mode: a ModeKeys value.
      predictions: a Tensor or a dict of Tensors (required in PREDICT).
      loss: a scalar Tensor (required in TRAIN and EVAL).
      train_op: the op one training step runs (required in TRAIN).
      eval_metric_ops: dict name -> (value tensor, update op), as tf.metrics return them.
      export_outputs: dict signature name -> ExportOutput, for export_saved_model.
      training_chief_hooks / training_hooks / evaluation_hooks / prediction_hooks: SessionRunHooks.
      scaffold: a tf.train.Scaffold (init ops, saver, summary op).
    """

    def __new__(cls, mode: str, predictions: Any = None, loss: Any = None, train_op: Any = None,
                eval_metric_ops: Mapping[str, Any] | None = None,
                export_outputs: Mapping[str, ExportOutput] | None = None,
                training_chief_hooks: Sequence[SessionRunHook] | None = None,
                training_hooks: Sequence[SessionRunHook] | None = None, scaffold: Scaffold | None = None,
                evaluation_hooks: Sequence[SessionRunHook] | None = None,
                prediction_hooks: Sequence[SessionRunHook] | None = None) -> "EstimatorSpec":
        if mode not in _MODES:
            raise ValueError(f"EstimatorSpec: mode={mode!r} is not one of {list(_MODES)} (use tf.estimator.ModeKeys)")
        if predictions is None and mode == ModeKeys.PREDICT:
            raise ValueError("EstimatorSpec: predictions are required in PREDICT mode (a Tensor or a dict of Tensors)")
        predictions = {} if predictions is None else predictions
        _check_predictions(predictions)
        if loss is None and mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError(f"EstimatorSpec: loss is required in {mode.upper()} mode (a scalar Tensor)")
        if loss is not None:
            loss = _check_loss(loss)
        if train_op is None and mode == ModeKeys.TRAIN:
            raise ValueError("EstimatorSpec: train_op is required in TRAIN mode (e.g. optimizer.minimize(loss, "
                             "global_step=tf.train.get_global_step()))")
        if train_op is not None and not isinstance(train_op, (Operation, Tensor)):
            raise TypeError(f"EstimatorSpec: train_op must be an Operation or a Tensor, given: {train_op!r}")
        eval_metric_ops = dict(eval_metric_ops or {})
        for key, pair in eval_metric_ops.items():
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"EstimatorSpec: eval_metric_ops[{key!r}] must be a (metric_value, update_op) "
                                f"tuple as tf.metrics return it, given: {pair!r}")
        if export_outputs is not None:
            if not isinstance(export_outputs, Mapping):
                raise TypeError(f"EstimatorSpec: export_outputs must be a dict of ExportOutput, given: {export_outputs!r}")
            for key, output in export_outputs.items():
                if not isinstance(output, ExportOutput):
                    raise TypeError(f"EstimatorSpec: export_outputs[{key!r}] must be an ExportOutput "
                                    f"(PredictOutput, ClassificationOutput, RegressionOutput), given: {output!r}")
        hooks = {name: tuple(value or ()) for name, value in (
            ("training_chief_hooks", training_chief_hooks), ("training_hooks", training_hooks),
            ("evaluation_hooks", evaluation_hooks), ("prediction_hooks", prediction_hooks))}
        for name, values in hooks.items():
            for hook in values:
                if not isinstance(hook, SessionRunHook):
                    raise TypeError(f"EstimatorSpec: {name} must hold SessionRunHook instances, given: {hook!r}")
        scaffold = scaffold or Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError(f"EstimatorSpec: scaffold must be a tf.train.Scaffold, given: {scaffold!r}")
        _check_same_graph(predictions, loss, train_op, eval_metric_ops)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
                               hooks["training_chief_hooks"], hooks["training_hooks"], scaffold,
                               hooks["evaluation_hooks"], hooks["prediction_hooks"])

    def _replace(self, **changes: Any) -> "EstimatorSpec":
        """A copy with `changes`, checked again like a new spec."""
        return EstimatorSpec(**{**self._asdict(), **changes})


def _check_predictions(predictions: Any) -> None:
    items = predictions.items() if isinstance(predictions, Mapping) else [(None, predictions)]
    for key, value in items:
        if not isinstance(value, (Tensor, SparseTensor)):
            where = "predictions" if key is None else f"predictions[{key!r}]"
            raise TypeError(f"EstimatorSpec: {where} must be a Tensor, given: {value!r}")


def _check_loss(loss: Any) -> Tensor:
    if isinstance(loss, Operation) or not isinstance(loss, Tensor):
        raise TypeError(f"EstimatorSpec: loss must be a scalar Tensor, given: {loss!r}")
    shape = loss.shape
    if shape.ndims is not None and shape.num_elements() != 1:
        raise ValueError(f"EstimatorSpec: loss must be a scalar, given a Tensor of shape {shape} "
                         f"(reduce it, e.g. tf.reduce_mean)")
    if shape.ndims not in (None, 0):
        from tftk.ops.array_ops import reshape
        loss = reshape(loss, [])
    return loss


def _check_same_graph(predictions: Any, loss: Any, train_op: Any, eval_metric_ops: Mapping[str, Any]) -> None:
    """Every tensor and op of the spec belongs to one graph (the one the Estimator built)."""
    found = list(predictions.values()) if isinstance(predictions, Mapping) else [predictions]
    found += [loss, train_op] + [item for pair in eval_metric_ops.values() for item in pair]
    graphs = {id(item.graph): item for item in found if isinstance(item, (Tensor, Operation))}
    if len(graphs) > 1:
        names = ", ".join(item.name for item in graphs.values())
        raise ValueError(f"EstimatorSpec: its tensors come from different graphs ({names}); build them all "
                         f"inside the model_fn")
