"""What `Estimator.evaluate` runs around its metric updates: stop after N batches, read the metric
values once at the end, and write them as TensorBoard scalars to model_dir/eval[_name]."""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from tftk.framework.ops import GraphKeys
from tftk.platform import tf_logging
from tftk.train.session_run_hook import SessionRunHook

__all__ = ["StopAfterNEvalsHook", "FinalOpsHook", "write_dict_to_summary"]


class StopAfterNEvalsHook(SessionRunHook):
    """Requests a stop after `num_evals` runs (one run = one batch of metric updates)."""

    def __init__(self, num_evals: int, log_progress: bool = True):
        self._num_evals = num_evals
        self._log_progress = log_progress
        self._evals_completed = 0

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self._evals_completed += 1
        if self._log_progress and (self._evals_completed == self._num_evals
                                   or self._evals_completed % max(1, self._num_evals // 10) == 0):
            tf_logging.info("Evaluation [%d/%d]", self._evals_completed, self._num_evals)
        if self._evals_completed >= self._num_evals:
            run_context.request_stop()


class FinalOpsHook(SessionRunHook):
    """Runs `final_ops` once when the session ends cleanly; their values in `final_ops_values`."""

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None):
        self._final_ops = final_ops
        self._feed_dict = final_ops_feed_dict
        self.final_ops_values: Any = None

    def end(self, session: Any) -> None:
        self.final_ops_values = session.run(self._final_ops, feed_dict=self._feed_dict)


def write_dict_to_summary(output_dir: str, dictionary: Mapping[str, Any], global_step: int) -> None:
    """Write each real scalar of `dictionary` (not global_step) as a simple_value at `global_step`."""
    from tftk.summary.writer import FileWriterCache, Summary
    summary = Summary()
    for key, value in sorted(dictionary.items()):
        if key == GraphKeys.GLOBAL_STEP or value is None:
            continue
        array = np.asarray(value)
        if array.size == 1 and (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            summary.value.add(tag=key, simple_value=float(array.reshape(())))
        else:
            tf_logging.warning("Skipping summary for %s, must be a float or an int scalar; got %s of shape %s",
                         key, array.dtype, array.shape)
    os.makedirs(output_dir, exist_ok=True)
    writer = FileWriterCache.get(output_dir)
    writer.add_summary(summary, global_step)
    writer.flush()
