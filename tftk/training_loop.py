"""What `tftk train` does, as functions the CLI, hpsearch and tests call: config -> run folder -> trained model.

`train_run` trains a resolved config in its run folder (restore-or-init, so an existing folder is
resumed from its checkpoint's global step) and updates the best-config store. `train_to` is the
same for a hyperparameter search trial: a config, an iteration budget and a folder in, the
validation metric out (`run_trial` has hpsearch's trial-function signature).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from tftk.config import (RunConfig, apply_best_config, expand_dotted, flatten_dotted, parse_override,
                         resolve_config, validate_config)
from tftk.framework.errors import DataLossError
from tftk.user_input import UserInputError
from tftk.runs import CONFIG_FILE, load_best_config, open_run_dir, update_best_config

__all__ = ["TrainResult", "load_train_config", "best_config_changes", "apply_stored_best", "explicit_keys", "train_run", "train_to",
           "run_trial"]

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
    stop_signal: int | None = None  # SIGINT or SIGTERM when interrupted

    @property
    def metric(self) -> float | None:
        """The config's ranking metric (e.g. validation_accuracy) at the end, if it was evaluated."""
        return self.metrics.get(self.config.metric)


def load_train_config(path: str | Path | None, overrides: Sequence[str] = (),
                      flags: Mapping[str, Any] | None = None) -> RunConfig:
    """The config `tftk train` runs: the file (or the saved config of --result-dir), flags, overrides.

    With `best`, the stored best run's searched hyperparameters (same model and dataset) replace the
    file's, except those given as flags or overrides: explicit input wins. No seed is drawn here:
    `prepare_run_dir` takes a resumed run's saved seed or draws a new one.
    """
    from models import model_schema

    flags = dict(flags or {})
    if path is None:
        result_dir = flags.get("result_dir")
        if result_dir is None or not (Path(result_dir) / CONFIG_FILE).exists():
            raise UserInputError("--config FILE is required (or --result-dir naming an existing run to resume)")
        path = Path(result_dir) / CONFIG_FILE
    config = resolve_config(path, overrides, model_schema, flags=flags, draw_seed=False)
    return apply_stored_best(config, explicit_keys(flags, overrides)) if config.best else config


def explicit_keys(flags: Mapping[str, Any], overrides: Sequence[str]) -> set[str]:
    """The dotted keys the user gave on the command line (flags set, `key=value` overrides)."""
    return ({field for field, value in flags.items() if value is not None}
            | {".".join(parse_override(text)[0]) for text in overrides})


def best_config_changes(config: RunConfig, explicit: Collection[str] = ()) -> dict[str, tuple[Any, Any]]:
    """What --best would change in `config`: dotted key -> (current, stored) for the searched hyperparameters
    of the stored best run of the same model and dataset, minus the `explicit` keys (given as flags)."""
    from models import get_model_class

    record = load_best_config(config.model_name, config.results_root, config.dataset)
    if record is None:
        raise UserInputError(f"--best: no best config stored for {config.model_name} on {config.dataset} under "
                             f"{config.results_root}/ yet; train or search without --best first")
    current = flatten_dotted(config.model_dump(mode="json"))
    searched = record.hyperparameters or get_model_class(config.model_name).searched_hyperparameters(
        validate_config(record.config))
    return {key: (current.get(key), value) for key, value in searched.items()
            if key not in explicit and current.get(key) != value}


def apply_stored_best(config: RunConfig, explicit: Collection[str] = ()) -> RunConfig:
    """`config` with the stored best's searched hyperparameters (not the `explicit` keys); best=False after,
    so the saved config.yaml holds the values the run used and a resume applies nothing again."""
    from models import model_schema

    changes = {key: stored for key, (_, stored) in best_config_changes(config, explicit).items()}
    return apply_best_config(config, changes, model_schema).model_copy(update={"best": False})


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
    if config.best:  # a config that did not come through load_train_config
        config = apply_stored_best(config)
    model_class.check_config(config)
    run = open_run_dir(config, force=force, model_schema_lookup=model_schema)
    started = time.perf_counter()
    try:  # build and restore first: a start or resume that fails here changes nothing on disk
        model = make_model(run.config)
    except BaseException:
        run.discard()
        raise
    try:
        run.commit()
    except BaseException:
        model.close()
        run.discard()
        raise
    model.log = log
    try:
        start_step = model.step
        if on_start is not None:
            on_start(start_step, run.config)
        outcome = model.train(on_step=on_step)
    except BaseException:
        model.close()
        if not model.saver.last_checkpoints:  # a new run that failed before its first checkpoint leaves nothing
            run.discard()
        raise
    model.close()
    config = run.config
    metric = outcome["metrics"].get(config.metric)
    best_updated = False
    if update_best and metric is not None and outcome["step"] > start_step:
        try:
            best_updated = update_best_config(
                config.model_name, config, metric, outcome["checkpoint"], config.metric_mode == "max",
                results_root=config.results_root, hyperparameters=model_class.searched_hyperparameters(config))
        except (DataLossError, OSError) as error:  # the run itself is fine: say so and keep its summary
            log(f"warning: best config not updated: {error}")
    return TrainResult(run.path, config, run.resumed, start_step, outcome["step"], outcome["interrupted"],
                       outcome["checkpoint"], outcome["metrics"], best_updated, time.perf_counter() - started,
                       outcome["signal"])


def trial_threads(asked: int, budget: int) -> int:
    """A trial's thread count: what its config asks (0: all cores), never more than the worker's
    budget (0: none)."""
    if budget <= 0:
        return asked
    return budget if asked <= 0 else min(asked, budget)


def train_to(config: RunConfig | Mapping[str, Any], max_iter: int, result_dir: str | Path, seed: int | None = None,
             *, log: Callable[[str], None] | None = None) -> float:
    """Train `config` up to `max_iter` steps in `result_dir` (restoring its checkpoint if any); the metric.

    `config` is a RunConfig or a mapping of run-config fields, where dotted keys (`model.hidden1`,
    as `get_random_config` returns them) set fields of the model section. The returned value is
    the config's ranking metric, negated when lower is better, so that higher is always better.
    Threads: config.threads, at most the TFTK_NUM_THREADS budget where hpsearch set one (its workers
    x threads fit the cores: a trial asking for more would oversubscribe them), the budget when unset.
    """
    from models import model_schema

    data = config.model_dump(mode="json") if isinstance(config, RunConfig) else expand_dotted(config, "trial config")
    data.update(max_iter=int(max_iter), result_dir=str(result_dir), best=False, debug=False, name=None)
    if seed is not None:
        data["random_seed"] = int(seed)
    data["threads"] = trial_threads(int(data.get("threads") or 0), int(os.environ.get("TFTK_NUM_THREADS", "0") or 0))
    resolved = validate_config(data, model_schema, "trial config")
    result = train_run(resolved, update_best=False, log=log or (lambda line: None))
    if result.interrupted:  # stopped by a signal after saving: not a result, the search resumes it later
        raise KeyboardInterrupt(f"trial stopped at step {result.step} (checkpoint saved)")
    if result.metric is None:
        raise UserInputError(f"{resolved.model_name} reports no '{resolved.metric}' "
                             f"(it reports: {', '.join(result.metrics) or 'nothing'}); set `metric:` in the config")
    return result.metric if resolved.metric_mode == "max" else -result.metric


def run_trial(config: dict, resource: int, trial_dir: Path, seed: int) -> float:
    """hpsearch's trial function: train `config` to `resource` iterations in `trial_dir`, return the metric."""
    return train_to(config, resource, trial_dir, seed)

