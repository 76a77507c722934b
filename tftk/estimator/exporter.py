"""`tf.estimator.{Exporter, FinalExporter, LatestExporter}`: what train_and_evaluate exports after an
evaluation, under model_dir/export/<name>/<timestamp>."""

from __future__ import annotations

import os
import shutil
from typing import Any, Callable, Mapping

__all__ = ["Exporter", "FinalExporter", "LatestExporter", "BestExporter"]


class Exporter:
    """Exports a model after an evaluation; `export` returns the folder written, or None."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: Mapping[str, Any],
               is_the_final_export: bool) -> bytes | None:
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: Mapping[str, str] | None,
                 as_text: bool):
        if not name:
            raise ValueError("Exporter: name must be a non-empty string (it names the export folder)")
        if not callable(serving_input_receiver_fn):
            raise ValueError("Exporter: serving_input_receiver_fn must be a function returning a ServingInputReceiver")
        self._name, self._receiver_fn = name, serving_input_receiver_fn
        self._assets_extra, self._as_text = assets_extra, as_text

    @property
    def name(self) -> str:
        return self._name

    def _export(self, estimator: Any, export_path: str, checkpoint_path: str) -> bytes:
        return estimator.export_saved_model(export_path, self._receiver_fn, assets_extra=self._assets_extra,
                                            as_text=self._as_text, checkpoint_path=checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports once, after the evaluation at the end of training (TrainSpec.max_steps reached)."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: Mapping[str, str] | None = None,
                 as_text: bool = False):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: Mapping[str, Any],
               is_the_final_export: bool) -> bytes | None:
        return self._export(estimator, export_path, checkpoint_path) if is_the_final_export else None


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the newest `exports_to_keep` (None: all)."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable, assets_extra: Mapping[str, str] | None = None,
                 as_text: bool = False, exports_to_keep: int | None = 5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError(f"LatestExporter: exports_to_keep must be positive or None, given {exports_to_keep}")
        self._exports_to_keep = exports_to_keep

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: Mapping[str, Any],
               is_the_final_export: bool) -> bytes | None:
        written = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._exports_to_keep)
        return written


def _keep_newest(export_path: str, count: int | None) -> None:
    """Delete all but the `count` newest timestamped exports (None: keep all)."""
    if count is not None:
        versions = sorted(int(d) for d in os.listdir(export_path) if d.isdigit())
        for old in versions[:-count]:
            shutil.rmtree(os.path.join(export_path, str(old)), ignore_errors=True)


def _loss_smaller(best_eval_result: Mapping[str, Any], current_eval_result: Mapping[str, Any]) -> bool:
    """BestExporter's default comparison: the lower `loss` is better."""
    for name, result in (("best_eval_result", best_eval_result), ("current_eval_result", current_eval_result)):
        if not result or "loss" not in result:
            raise ValueError(f"{name} cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best so far (`compare_fn(best_eval_result, current_eval_result)`,
    default: lower loss), keeping the newest `exports_to_keep`. The best so far starts from the evaluations
    already in model_dir's event files (`event_file_pattern`), so a restarted training keeps its record."""

    def __init__(self, name: str = "best_exporter", serving_input_receiver_fn: Callable | None = None,
                 event_file_pattern: str | None = "eval/*.tfevents.*", compare_fn: Callable = _loss_smaller,
                 assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
                 exports_to_keep: int | None = 5):
        if serving_input_receiver_fn is None:
            raise ValueError("BestExporter: `serving_input_receiver_fn` must be defined.")
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if not callable(compare_fn):
            raise ValueError("BestExporter: `compare_fn` must be a function of (best_eval_result, current_eval_result)")
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError(f"BestExporter: exports_to_keep must be positive or None, given {exports_to_keep}")
        self._compare_fn, self._event_file_pattern = compare_fn, event_file_pattern
        self._exports_to_keep = exports_to_keep
        self._best_eval_result: Mapping[str, Any] | None = None
        self._model_dir: str | None = None

    def export(self, estimator: Any, export_path: str, checkpoint_path: str, eval_result: Mapping[str, Any],
               is_the_final_export: bool) -> bytes | None:
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            self._model_dir = estimator.model_dir
            self._best_eval_result = _best_in_events(os.path.join(estimator.model_dir, self._event_file_pattern),
                                                     self._compare_fn, eval_result)
        if self._best_eval_result is None or self._compare_fn(best_eval_result=self._best_eval_result,
                                                              current_eval_result=eval_result):
            self._best_eval_result = eval_result
            written = self._export(estimator, export_path, checkpoint_path)
            _keep_newest(export_path, self._exports_to_keep)
            return written
        return None


def _best_in_events(pattern: str, compare_fn: Callable, current: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The best evaluation recorded in the event files matching `pattern` before `current` (its global step)."""
    import glob

    from tftk.summary.events import summary_iterator
    by_step: dict[int, dict[str, float]] = {}
    for path in sorted(glob.glob(pattern)):
        for event in summary_iterator(path):
            if event.HasField("summary"):
                values = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
                by_step.setdefault(event.step, {}).update(values)
    best = None
    for step, result in sorted(by_step.items()):
        if step >= current.get("global_step", float("inf")) or not result:
            continue
        result = {**result, "global_step": step}
        if best is None or compare_fn(best_eval_result=best, current_eval_result=result):
            best = result
    return best
