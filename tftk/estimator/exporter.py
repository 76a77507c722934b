"""`tf.estimator.{Exporter, FinalExporter, LatestExporter}`: what train_and_evaluate exports after an
evaluation, under model_dir/export/<name>/<timestamp>."""

from __future__ import annotations

import os
import shutil
from typing import Any, Callable, Mapping

__all__ = ["Exporter", "FinalExporter", "LatestExporter"]


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
        if self._exports_to_keep is not None:
            versions = sorted(int(d) for d in os.listdir(export_path) if d.isdigit())
            for old in versions[:-self._exports_to_keep]:
                shutil.rmtree(os.path.join(export_path, str(old)), ignore_errors=True)
        return written
