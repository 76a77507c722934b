"""`tftk hpsearch` as functions: a run config becomes a hyperparameter search whose best trial is stored
as the model's best config (so `tftk train --best` uses it).

A search lives in `<results_root>/<model>/hpsearch-<YYYYmmdd-HHMMSS>/`: `search.yaml` (the base config
and the search settings, written before any trial runs, so `--resume DIR` needs nothing else), the
journal and `trials/<trial>/` (each a run folder). Every trial's config is the base config's
non-default fields plus the sampled hyperparameters, given to `tftk.training_loop.run_trial`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import secrets
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Iterator, Literal, Mapping, Sequence

import yaml

from tftk.atomic import atomic_write_text
from tftk.runs import make_folder, new_run_dir
from tftk.config import RunConfig, flatten_dotted, resolve_config, set_dotted, validate_config
from tftk.user_input import UserInputError

__all__ = ["SEARCH_FILE", "TRIAL_FUNCTION", "SearchSettings", "BestTrial", "SearchOutcome", "parse_fixed_params",
           "check_fixed_params", "trial_base_fields", "start_search", "resume_search", "store_best", "SearchInterrupted"]

SEARCH_FILE = "search.yaml"
TRIAL_FUNCTION = "tftk.training_loop:run_trial"
# Set by the search for every trial (iterations, folder, seed, thread share), or naming a run: never carried over.
TRIAL_FIELDS = frozenset({"max_iter", "result_dir", "random_seed", "threads", "name", "best", "debug", "results_root"})


@dataclass(frozen=True)
class SearchSettings:
    """What defines a search (saved in search.yaml; a resume runs with exactly these)."""

    algorithm: Literal["hyperband", "random"] = "hyperband"
    mode: Literal["async", "sync"] = "async"
    fullsearch: bool = False
    max_resource: int | None = None  # R; None: the base config's max_iter
    eta: int = 3
    n_configs: int | None = None  # random search only
    seed: int | None = None  # None: drawn when the search starts
    fixed_params: dict[str, Any] = dataclasses.field(default_factory=dict)
    trial_function: str = TRIAL_FUNCTION  # 'module:function' with run_trial's signature (a wrapper of it)


@dataclass(frozen=True)
class BestTrial:
    """The search's best trial that still has its checkpoint, and what the best-config store did with it."""

    trial_id: str
    config: RunConfig  # the trial's saved run config
    metric: float  # as the model reports it (not negated)
    resource: int
    checkpoint: str
    store_updated: bool
    store: Path  # the model's best_config.yaml


@dataclass(frozen=True)
class SearchOutcome:
    """A finished (or dry-run) search: `result` is hpsearch's SearchResult; `best` None for a dry run."""

    search_dir: Path
    settings: SearchSettings
    result: Any
    best: BestTrial | None


def parse_fixed_params(text: str | None) -> dict[str, Any]:
    """--fixed-params JSON -> dict; UserInputError for bad JSON or anything but an object."""
    if text is None:
        return {}
    try:
        params = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserInputError(f"--fixed-params: not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(params, dict):
        raise UserInputError('--fixed-params: expected a JSON object such as \'{"lr": 0.01}\'')
    return params


def _with_flat(config: RunConfig, flat: Mapping[str, Any], schema, origin: str) -> RunConfig:
    """`config` with dotted-key values applied, validated (errors name `origin`)."""
    data = config.model_dump(mode="json")
    for key, value in flat.items():
        set_dotted(data, tuple(key.split(".")), value, origin)
    return validate_config(data, lambda name: schema, origin)


def check_fixed_params(params: Mapping[str, Any], base: RunConfig) -> dict[str, Any]:
    """Dotted fixed params, each a searchable field of the run config or of the model's schema, values valid."""
    from models import model_schema

    schema = model_schema(base.model_name)
    known = {key for key in RunConfig.model_fields if key != "model"} | {f"model.{key}" for key in schema.model_fields}
    flat = flatten_dotted(params)
    for key in flat:
        if key == "model_name":
            raise UserInputError("--fixed-params: model_name cannot be fixed; the model comes from the config")
        if key in TRIAL_FIELDS:
            raise UserInputError(f"--fixed-params: {key!r} is set by the search for each trial"
                                 f"{' (use --max-resource)' if key == 'max_iter' else ''}; remove it")
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known - TRIAL_FIELDS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UserInputError(f"--fixed-params: {key!r} is not a field of the run config nor of "
                                 f"{base.model_name}'s model section{hint}")
    _with_flat(base, flat, schema, "--fixed-params")
    return flat


def trial_base_fields(base: RunConfig) -> dict[str, Any]:
    """What every trial inherits from the base config: its non-default fields, minus TRIAL_FIELDS.

    model_name always; the rest only when set, so the live table and the journal show little more than
    the sampled hyperparameters.
    """
    from models import model_schema

    schema = model_schema(base.model_name)
    defaults = {key: field.get_default(call_default_factory=True) for key, field in RunConfig.model_fields.items()}
    defaults.update({f"model.{key}": field.get_default(call_default_factory=True)
                     for key, field in schema.model_fields.items()})
    return {key: value for key, value in flatten_dotted(base.model_dump(mode="json")).items()
            if key not in TRIAL_FIELDS and (key == "model_name" or value != defaults.get(key))}


class _ModelSampler:
    """hpsearch's sampler: the base fields, then the model class's `get_random_config(fixed_params, rng)`."""

    def __init__(self, model_class, base_fields: dict[str, Any]):
        self.model_class = model_class
        self.base_fields = base_fields

    def __call__(self, rng, fixed_params: dict) -> dict:
        return {**self.base_fields, **self.model_class.get_random_config(fixed_params, rng)}


def start_search(config_path: str | Path, overrides: Sequence[str] = (), settings: SearchSettings | None = None, *,
                 fixed_params_json: str | None = None, dry_run: bool = False, out: IO[str] | None = None,
                 now: datetime | None = None, **run_options: Any) -> SearchOutcome:
    """Search hyperparameters of the model in `config_path` (plus `overrides`); store the best config.

    Args:
      settings: the search (algorithm, R, eta, seed, ...); `fixed_params` there are merged with
        `fixed_params_json` (the CLI's --fixed-params text).
      dry_run: print the plan and budget; create no folder, train nothing.
      run_options: nb_process, trial_timeout, backend, address, live (how to run, not what).
    Every input is checked before the search folder is created; a search that fails on its settings
    before any trial started leaves no folder behind.
    """
    from models import get_model_class, model_schema

    settings = settings or SearchSettings()
    base = resolve_config(config_path, overrides, model_schema, draw_seed=False)
    get_model_class(base.model_name).check_config(base)
    fixed = check_fixed_params({**settings.fixed_params, **parse_fixed_params(fixed_params_json)}, base)
    seed = secrets.randbelow(2**31) if settings.seed is None else settings.seed
    max_resource = base.max_iter if settings.max_resource is None else settings.max_resource
    settings = dataclasses.replace(settings, fixed_params=fixed, seed=seed, max_resource=max_resource)
    _check_settings(settings)
    out = out or sys.stdout
    if dry_run:
        folder = Path(base.results_root) / base.model_name / "hpsearch-<time>"
        return _run(folder, base, settings, resume=False, dry_run=True, out=out, **run_options)
    created = make_folder(Path(base.results_root) / base.model_name)
    search_dir = new_run_dir(base.model_name, base.results_root, now=now, prefix="hpsearch-")
    atomic_write_text(search_dir / SEARCH_FILE, yaml.safe_dump(
        {**dataclasses.asdict(settings), "base_config": base.model_dump(mode="json")}, sort_keys=False))
    print(f"search folder: {search_dir} (continue a stopped search with: tftk hpsearch --resume {search_dir})",
          file=out, flush=True)
    try:
        with _resume_hint(search_dir):
            return _run(search_dir, base, settings, resume=False, dry_run=False, out=out, **run_options)
    except UserInputError:  # a search that fails on its settings before any trial started leaves nothing
        if not _any_trial_started(search_dir):
            shutil.rmtree(created or search_dir, ignore_errors=True)
        raise


def resume_search(search_dir: str | Path, *, dry_run: bool = False, out: IO[str] | None = None,
                  **run_options: Any) -> SearchOutcome:
    """Continue the search in `search_dir` with its saved settings; finished trials are not run again."""
    from models import model_schema

    search_dir = Path(search_dir)
    path = search_dir / SEARCH_FILE
    if not search_dir.is_dir():
        raise UserInputError(f"--resume {search_dir}: no such folder")
    if not path.exists():
        raise UserInputError(f"--resume {search_dir}: not a search folder (no {SEARCH_FILE}); "
                             "pass a results/<model>/hpsearch-<time> folder")
    try:
        saved = yaml.safe_load(path.read_text(encoding="utf-8"))
        base = validate_config(saved.pop("base_config"), model_schema, str(path))
        settings = SearchSettings(**saved)
    except (yaml.YAMLError, AttributeError, KeyError, TypeError) as error:
        raise UserInputError(f"--resume {search_dir}: unreadable {SEARCH_FILE} ({error})") from None
    with _resume_hint(search_dir):
        return _run(search_dir, base, settings, resume=True, dry_run=dry_run, out=out or sys.stdout, **run_options)


class SearchInterrupted(KeyboardInterrupt):
    """A search stopped by Ctrl-C or SIGTERM after its running trials saved; the message says how to resume."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@contextlib.contextmanager
def _resume_hint(search_dir: Path) -> Iterator[None]:
    """Ctrl-C / SIGTERM during a search -> SearchInterrupted naming the resume command (exit 130 / 143)."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        raise SearchInterrupted(f"{interrupt or 'interrupted'}; running trials saved their checkpoints, resume with: "
                                f"tftk hpsearch --resume {search_dir}", getattr(interrupt, "exit_code", 130)) from None


def _check_settings(settings: SearchSettings) -> None:
    """Settings that no single hpsearch call can reject before work starts."""
    from hpsearch import plan_brackets

    if settings.fullsearch and settings.algorithm != "hyperband":
        raise UserInputError("--fullsearch runs hyperband stages; it cannot be combined with --random")
    if settings.fullsearch and "lr" in settings.fixed_params:
        raise UserInputError("--fullsearch searches lr: remove it from --fixed-params or drop --fullsearch")
    plan_brackets(settings.algorithm, settings.max_resource, settings.eta, settings.n_configs)


def _run(search_dir: Path, base: RunConfig, settings: SearchSettings, *, resume: bool, dry_run: bool,
         out: IO[str], **run_options: Any) -> SearchOutcome:
    from hpsearch import Execution, SearchSpec, run_fullsearch, run_search
    from models import get_model_class

    sampler = _ModelSampler(get_model_class(base.model_name), trial_base_fields(base))
    spec = SearchSpec(settings.max_resource, settings.algorithm, settings.mode, settings.eta, settings.n_configs,
                      seed=settings.seed, fixed_params=settings.fixed_params)
    execution = Execution(dry_run=dry_run, resume=resume, **run_options)
    if settings.fullsearch:
        if not dry_run:
            print(f"fullsearch total {_fullsearch_budget(settings)}", file=out, flush=True)
        result = run_fullsearch(settings.trial_function, sampler, search_dir, spec, execution, out)
    else:
        result = run_search(settings.trial_function, sampler, search_dir, spec, execution, out)
    best = None if dry_run else store_best(result, base.results_root)
    return SearchOutcome(search_dir, settings, result, best)


def _fullsearch_budget(settings: SearchSettings) -> str:
    from hpsearch import plan_brackets
    from hpsearch.brackets import budget_line
    from hpsearch.fullsearch import LR_FACTORS

    hyperband = plan_brackets("hyperband", settings.max_resource, settings.eta)
    return budget_line(hyperband + plan_brackets("grid", settings.max_resource, settings.eta, len(LR_FACTORS)) + hyperband)


def store_best(result, results_root: str | Path) -> BestTrial | None:
    """Offer the best ranked trial that kept its checkpoint to the model's best-config store."""
    from models import get_model_class, model_schema
    from tftk.runs import best_config_path, load_run_config, update_best_config
    from tftk.train.checkpoint_state import latest_checkpoint

    for trial in result.trials:  # ranked, best first
        checkpoint = latest_checkpoint(trial.trial_dir) if trial.metric is not None else None
        if checkpoint is None:
            continue
        config = load_run_config(trial.trial_dir, model_schema)
        higher = config.metric_mode == "max"
        metric = trial.metric if higher else -trial.metric  # trials report higher-is-better
        searched = get_model_class(config.model_name).searched_hyperparameters(config)
        updated = update_best_config(config.model_name, config, metric, checkpoint, higher, results_root=results_root,
                                     hyperparameters=searched)
        return BestTrial(trial.trial_id, config, metric, trial.resource, checkpoint, updated,
                         best_config_path(config.model_name, results_root))
    return None


def _any_trial_started(search_dir: Path) -> bool:
    from hpsearch.journal import read_journal

    return any(event["event"] == "start" for journal in search_dir.rglob("journal.jsonl")
               for event in read_journal(journal))
