"""What `tftk train` does, as functions the CLI, hpsearch and tests call: config -> run folder -> trained model.

`train_run` trains a resolved config in its run folder (restore-or-init, so an existing folder is
resumed from its checkpoint's global step) and updates the best-config store. `train_to` is the
same for a hyperparameter search trial: a config, an iteration budget and a folder in, the
validation metric out (`run_trial` has hpsearch's trial-function signature).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tftk.config import RunConfig, parse_override, resolve_config, validate_config
from tftk.user_input import UserInputError
from tftk.runs import CONFIG_FILE, prepare_run_dir, update_best_config

__all__ = ["TrainResult", "load_train_config", "train_run", "train_to", "run_trial"]

StepCallback = Callable[[int, dict[str, float]], None]


@dataclass(frozen=True)
class TrainResult:
    """How a training run ended."""

    run_dir: Path
    config: RunConfig
    resumed: bool
    start_step: int
    step: int
    interrupted: bool
    checkpoint: str | None
    metrics: dict[str, float] = field(default_factory=dict)
    best_updated: bool = False
    seconds: float = 0.0

    @property
    def metric(self) -> float | None:
        """The config's ranking metric (e.g. validation_accuracy) at the end, if it was evaluated."""
        return self.metrics.get(self.config.metric)


def load_train_config(path: str | Path | None, overrides: Sequence[str] = (),
                      flags: Mapping[str, Any] | None = None) -> RunConfig:
    """The config `tftk train` runs: the file (or the saved config of --result-dir), flags, overrides.

    No seed is drawn here: `prepare_run_dir` takes a resumed run's saved seed or draws a new one.
    """
    from models import model_schema

    flags = dict(flags or {})
    if path is None:
        result_dir = flags.get("result_dir")
        if result_dir is None or not (Path(result_dir) / CONFIG_FILE).exists():
            raise UserInputError("--config FILE is required (or --result-dir naming an existing run to resume)")
        path = Path(result_dir) / CONFIG_FILE
    return resolve_config(path, overrides, model_schema, flags=flags, draw_seed=False)


def train_run(config: RunConfig, *, force: bool = False, update_best: bool = True,
              log: Callable[[str], None] = print, on_start: Callable[[int, RunConfig], None] | None = None,
              on_step: StepCallback | None = None) -> TrainResult:
    """Train `config` to max_iter in its run folder (a new one unless config.result_dir names one).

    Args:
      force: resume a run folder even if hyperparameters differ from its saved config.
      update_best: store the config as the model's best when its metric beats the stored one.
      log: receives the model's status and evaluation lines.
      on_start: called with (global step after restore-or-init, run config) before the first step.
      on_step: called with (step, {"loss": ...}) after every step.
    """
    from models import get_model_class, make_model, model_schema

    model_class = get_model_class(config.model_name)
    if config.best:
        config = model_class.get_best_config(config)
    model_class.check_config(config)
    existed = config.result_dir is not None and Path(config.result_dir).exists()
    run = prepare_run_dir(config, force=force, model_schema_lookup=model_schema)
    started = time.perf_counter()
    try:
        model = make_model(run.config)
    except BaseException:
        if not run.resumed and not existed:  # leave no half-made run folder behind
            shutil.rmtree(run.path, ignore_errors=True)
        raise
    model.log = log
    try:
        start_step = model.step
        if on_start is not None:
            on_start(start_step, run.config)
        outcome = model.train(on_step=on_step)
    finally:
        model.close()
    config = run.config
    metric = outcome["metrics"].get(config.metric)
    best_updated = bool(update_best and metric is not None and outcome["step"] > start_step and update_best_config(
        config.model_name, config, metric, outcome["checkpoint"], config.metric_mode == "max",
        results_root=config.results_root))
    return TrainResult(run.path, config, run.resumed, start_step, outcome["step"], outcome["interrupted"],
                       outcome["checkpoint"], outcome["metrics"], best_updated, time.perf_counter() - started)


def train_to(config: RunConfig | Mapping[str, Any], max_iter: int, result_dir: str | Path, seed: int | None = None,
             *, log: Callable[[str], None] | None = None) -> float:
    """Train `config` up to `max_iter` steps in `result_dir` (restoring its checkpoint if any); the metric.

    `config` is a RunConfig or a mapping of run-config fields, where dotted keys (`model.hidden1`,
    as `get_random_config` returns them) set fields of the model section. The returned value is
    the config's ranking metric, negated when lower is better, so that higher is always better.
    Threads: config.threads, else the TFTK_NUM_THREADS environment variable (set by hpsearch).
    """
    from models import model_schema

    data = config.model_dump(mode="json") if isinstance(config, RunConfig) else _expand_dotted(config)
    data.update(max_iter=int(max_iter), result_dir=str(result_dir), best=False, debug=False, name=None)
    if seed is not None:
        data["random_seed"] = int(seed)
    if not data.get("threads"):
        data["threads"] = int(os.environ.get("TFTK_NUM_THREADS", "0") or 0)
    resolved = validate_config(data, model_schema, "trial config")
    result = train_run(resolved, update_best=False, log=log or (lambda line: None))
    if result.metric is None:
        raise UserInputError(f"{resolved.model_name} reports no '{resolved.metric}' "
                             f"(it reports: {', '.join(result.metrics) or 'nothing'}); set `metric:` in the config")
    return result.metric if resolved.metric_mode == "max" else -result.metric


def run_trial(config: dict, resource: int, trial_dir: Path, seed: int) -> float:
    """hpsearch's trial function: train `config` to `resource` iterations in `trial_dir`, return the metric."""
    return train_to(config, resource, trial_dir, seed)


def _expand_dotted(flat: Mapping[str, Any]) -> dict[str, Any]:
    """{"lr": 0.1, "model.hidden1": 64} -> {"lr": 0.1, "model": {"hidden1": 64}} (sections merged)."""
    data: dict[str, Any] = {}
    for key, value in flat.items():
        keys, _ = parse_override(f"{key}=")
        node = data
        for part in keys[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UserInputError(f"config key {key!r}: {part} is a value, not a section")
        if isinstance(value, Mapping) and isinstance(node.get(keys[-1]), dict):
            node[keys[-1]].update(value)
        else:
            node[keys[-1]] = dict(value) if isinstance(value, Mapping) else value
    return data
