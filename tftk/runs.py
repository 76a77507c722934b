"""Run folders and the best-config store.

A run lives in `<results_root>/<model>/<YYYYmmdd-HHMMSS>[-name]/` with its resolved config
(`config.yaml`, written once), its metrics (`metrics.jsonl`, one JSON object per line) and
whatever the trainer adds (checkpoints, TensorBoard events). `<results_root>/<model>/
best_config.yaml` remembers the best run so far; concurrent runs update it under a file lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import re
import secrets
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import yaml

from tftk.atomic import atomic_write_text
from tftk.config import RUN_IDENTITY_FIELDS, RunConfig, SchemaLookup, dump_config, resolve_config
from tftk.framework.errors import DataLossError
from tftk.run_fields import RUN_FIELDS
from tftk.user_input import UserInputError

__all__ = ["CONFIG_FILE", "METRICS_FILE", "BEST_CONFIG_FILE", "RESUMABLE_FIELDS", "RunDir", "RunSummary",
           "BestConfig", "new_run_dir", "make_folder", "open_run_dir", "config_changes", "prepare_run_dir", "save_run_config", "load_run_config",
           "MetricsLog", "read_metrics", "truncate_metrics", "list_runs", "load_best_config",
           "update_best_config", "best_config_path", "DEFAULT_DATASET", "run_checkpoints", "remove_leftovers"]

CONFIG_FILE = "config.yaml"
METRICS_FILE = "metrics.jsonl"
BEST_CONFIG_FILE = "best_config.yaml"
_STAMP = "%Y%m%d-%H%M%S"

# Fields a resumed run may change without --force: they steer the run, not what it learns.
RESUMABLE_FIELDS = frozenset({"max_iter", "debug", "save_every", "log_every", "max_to_keep", "threads"})


@dataclass(frozen=True)
class RunDir:
    """A run folder opened for training: its path, its config, and what a resume changed.

    Nothing is written until `commit()` (the config, after the model was built and restored), and
    `discard()` removes what opening created, so a start or resume that fails changes nothing on disk.
    """

    path: Path
    config: RunConfig
    resumed: bool
    changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # key -> (saved, new)
    created: Path | None = None  # the topmost folder opening created (None: it existed)
    force: bool = False

    def commit(self) -> None:
        """Write config.yaml (a resume with changes keeps the old one as config.prev-N.yaml)."""
        save_run_config(self.path, self.config, force=self.force)

    def discard(self) -> None:
        """Remove the folders opening created (a resumed run's folder is left as it was)."""
        if self.created is not None:
            shutil.rmtree(self.created, ignore_errors=True)


def new_run_dir(model_name: str, results_root: str | Path = "results", name: str | None = None,
                now: datetime | None = None, *, prefix: str = "") -> Path:
    """Create and return a fresh `<results_root>/<model>/<prefix><YYYYmmdd-HHMMSS>[-name]` (`_2`, `_3`... if taken).

    The one naming rule of run folders and search folders (`prefix="hpsearch-"`); mkdir is atomic, so
    parallel processes never share a folder.
    """
    base = f"{prefix}{(now or datetime.now()).strftime(_STAMP)}{'-' + name if name else ''}"
    parent = Path(results_root) / model_name
    make_folder(parent)
    for attempt in range(1, 10_000):
        path = parent / (base if attempt == 1 else f"{base}_{attempt}")
        try:
            path.mkdir()  # atomic: exactly one process wins each name
            return path
        except FileExistsError:
            continue
    raise UserInputError(f"{parent}: no free folder name for {base}")


def make_folder(path: Path) -> Path | None:
    """mkdir -p `path`; the topmost folder it created (None if it existed). A file in the way is a UserInputError."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise UserInputError(f"{part}: is a file, not a folder; choose another run folder or results root")
    path.mkdir(parents=True, exist_ok=True)
    return missing[-1] if missing else None


def open_run_dir(config: RunConfig, *, force: bool = False, model_schema_lookup: SchemaLookup | None = None,
                 now: datetime | None = None) -> RunDir:
    """Create (or reopen, when `config.result_dir` names one) the run folder; write nothing in it yet.

    A run folder that already holds a config is being resumed: a missing `random_seed` is taken from
    it, RESUMABLE_FIELDS may change, any other difference is a UserInputError unless `force` (raised
    here, before anything is written). A new run's results_root is stored absolute, so the run finds
    its best-config store from any working directory.
    """
    if config.result_dir is None:
        model_folder = Path(config.results_root) / config.model_name
        created = make_folder(model_folder)
        try:
            path = new_run_dir(config.model_name, config.results_root, config.name, now)
        except BaseException:
            if created is not None:
                shutil.rmtree(created, ignore_errors=True)
            raise
        created = created or path
    else:
        path = Path(config.result_dir)
        created = make_folder(path)
    try:
        saved = load_run_config(path, model_schema_lookup) if (path / CONFIG_FILE).exists() else None
        seed = config.random_seed
        if seed is None:
            seed = saved.random_seed if saved is not None else secrets.randbelow(2**31)
        root = config.results_root if saved is not None else str(Path(config.results_root).absolute())
        config = config.model_copy(update={"result_dir": str(path), "random_seed": seed, "results_root": root})
        changed = config_changes(path, config, force=force)
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    return RunDir(path, config, resumed=saved is not None, changed=changed, created=created, force=force)


def prepare_run_dir(config: RunConfig, *, force: bool = False, model_schema_lookup: SchemaLookup | None = None,
                    now: datetime | None = None) -> RunDir:
    """`open_run_dir` and save the config there at once (for callers that build no model first)."""
    run = open_run_dir(config, force=force, model_schema_lookup=model_schema_lookup, now=now)
    run.commit()
    return run


def config_changes(run_dir: str | Path, config: RunConfig, *, force: bool = False) -> dict[str, tuple[Any, Any]]:
    """What `config` changes in the run's saved config.yaml (key -> (saved, new)); writes nothing.

    Changes outside RESUMABLE_FIELDS (and run-identity fields) raise UserInputError unless `force`.
    """
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return {}
    old = _read_yaml(path)
    new = config.model_dump(mode="json")
    changed = {key: (old.get(key), new.get(key)) for key in sorted(set(old) | set(new))
               if old.get(key) != new.get(key) and key not in RUN_IDENTITY_FIELDS}
    forbidden = [key for key in changed if key not in RESUMABLE_FIELDS]
    if forbidden and not force:
        details = ", ".join(f"{key}: {changed[key][0]!r} -> {changed[key][1]!r}" for key in forbidden)
        raise UserInputError(f"{path}: this run was started with a different config ({details}); "
                             "resume with the same settings, start a new run, or pass --force")
    return changed


def save_run_config(run_dir: str | Path, config: RunConfig, *, force: bool = False) -> dict[str, tuple[Any, Any]]:
    """Write `config.yaml` once; on a later call return what changed (key -> (saved, new)).

    Changes outside RESUMABLE_FIELDS (and run-identity fields) raise UserInputError unless
    `force`. A changed config is written anew and the old one kept as `config.prev-N.yaml`.
    """
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        atomic_write_text(path, dump_config(config))
        return {}
    changed = config_changes(run_dir, config, force=force)
    if not changed:
        return {}
    history = next(path.with_name(f"config.prev-{n}.yaml") for n in range(1, 10_000)
                   if not path.with_name(f"config.prev-{n}.yaml").exists())
    atomic_write_text(history, path.read_text(encoding="utf-8"))
    atomic_write_text(path, dump_config(config))
    return changed


def load_run_config(run_dir: str | Path, model_schema_lookup: SchemaLookup | None = None) -> RunConfig:
    """The config a run was saved with (UserInputError if the folder holds none)."""
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        raise UserInputError(f"{run_dir}: not a run folder (no {CONFIG_FILE})")
    return resolve_config(path, (), model_schema_lookup)


def run_checkpoints(run_dir: str | Path) -> tuple[str | None, list[str]]:
    """The run's latest checkpoint and the older ones its state file lists, each resolved inside `run_dir`.

    Paths in the state file are relative to the folder (TF's rule); one leading outside the folder
    (`/abs/x`, `../../x`) is never trusted: the latest is a DataLossError, an older one is left out, so
    checkpoint retention can never delete a file outside the run.
    """
    from tftk.train.checkpoint_state import STATE_FILENAME, get_checkpoint_state

    state = get_checkpoint_state(run_dir)
    if state is None or not state.model_checkpoint_path:
        return None, []
    folder = Path(run_dir).resolve()

    def inside(prefix: str) -> bool:
        return folder in Path(prefix).resolve().parents

    if not inside(state.model_checkpoint_path):
        raise DataLossError(message=f"{Path(run_dir) / STATE_FILENAME}: the latest checkpoint "
                                    f"{state.model_checkpoint_path} is outside the run folder; fix or remove the file")
    return state.model_checkpoint_path, [p for p in state.all_model_checkpoint_paths if inside(p)]


def remove_leftovers(run_dir: str | Path, checkpoint_name: str, kept: Sequence[str]) -> list[Path]:
    """Delete what killed writes left in the run folder: temp files of atomic writes (`.<name>.<random>.tmp`)
    and checkpoints `<checkpoint_name>-<step>*` that the state file does not list. Returns what went."""
    folder = Path(run_dir)
    kept_names = {Path(prefix).name for prefix in kept}
    pattern = re.compile(rf"^({re.escape(checkpoint_name)}-\d+)(\..*)?$")
    removed = []
    for path in folder.iterdir():
        match = pattern.match(path.name)
        leftover = (path.name.startswith(".") and path.name.endswith(".tmp")) or \
            (match is not None and match.group(1) not in kept_names)
        if leftover and path.is_file():
            path.unlink()
            removed.append(path)
    return removed


class MetricsLog:
    """Appends `{"step": N, ...}` lines to the run's metrics.jsonl, flushed line by line.

    No wall-clock values are added, so two runs with the same config and seed write the same file.
    """

    def __init__(self, run_dir: str | Path):
        self.path = Path(run_dir) / METRICS_FILE
        self._file = open(self.path, "a", encoding="utf-8")

    def append(self, step: int, values: Mapping[str, Any]) -> None:
        record = {"step": int(step), **{key: _plain(value) for key, value in values.items()}}
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> MetricsLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """All metrics records of a run (a torn last line from a killed process is skipped)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.exists():
        return []
    records = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number < len(lines):
                raise DataLossError(message=f"{path}:{number}: not a JSON line") from None
    return records


def truncate_metrics(run_dir: str | Path, step: int) -> None:
    """Drop records after `step` (a resumed run recomputes them from its checkpoint)."""
    path = Path(run_dir) / METRICS_FILE
    kept = [record for record in read_metrics(run_dir) if record["step"] <= step]
    if path.exists():
        atomic_write_text(path, "".join(json.dumps(record) + "\n" for record in kept))


@dataclass(frozen=True)
class RunSummary:
    """One line of `tftk runs`."""

    model: str
    path: Path
    started: datetime
    steps: int | None
    metric: str
    best_metric: float | None


def list_runs(results_root: str | Path = "results", model: str | None = None,
              on_skip: Callable[[Path, str], None] | None = None) -> list[RunSummary]:
    """Every run folder (one with a config.yaml) under `results_root`, oldest first.

    A run whose files cannot be read is skipped; `on_skip(run_folder, reason)` hears of it.
    """
    root = Path(results_root)
    model_dirs = [root / model] if model else sorted(p for p in root.glob("*") if p.is_dir())
    runs = []
    for model_dir in model_dirs:
        for path in sorted(model_dir.glob(f"*/{CONFIG_FILE}")):
            try:
                runs.append(_summary(model_dir.name, path))
            except (DataLossError, OSError, KeyError, TypeError, ValueError) as error:
                if on_skip is not None:
                    on_skip(path.parent, str(error))
    return sorted(runs, key=lambda r: (r.started, str(r.path)))


def _summary(model: str, path: Path) -> RunSummary:
    """One `tftk runs` line from a run's config.yaml and metrics.jsonl."""
    run = path.parent
    config = _read_yaml(path)
    metric = str(config.get("metric", "validation_accuracy"))
    records = read_metrics(run)
    values = [r[metric] for r in records if isinstance(r.get(metric), (int, float)) and not math.isnan(r[metric])]
    best = (min if config.get("metric_mode") == "min" else max)(values) if values else None
    return RunSummary(model, run, _started(run), records[-1]["step"] if records else None, metric, best)


# The dataset a record without one is filed under: the run config's default dataset.
DEFAULT_DATASET = next(row.default for row in RUN_FIELDS if row.name == "dataset")


@dataclass(frozen=True)
class BestConfig:
    """The stored best run of a model on one dataset: its config, the metric that made it best, and the
    searched hyperparameters (`lr`, `model.hidden2`, ...) that `tftk train --best` applies."""

    model_name: str
    metric_name: str
    metric: float
    higher_is_better: bool
    checkpoint_path: str
    run_dir: str | None
    updated: str
    config: dict[str, Any]  # the whole config of the run that earned it (what it was; not all of it is applied)
    dataset: str = DEFAULT_DATASET
    hyperparameters: dict[str, Any] = field(default_factory=dict)  # dotted keys: the only values --best applies


def best_config_path(model: str, results_root: str | Path = "results") -> Path:
    """The model's best-config store: one record per dataset."""
    return Path(results_root) / model / BEST_CONFIG_FILE


def load_best_config(model: str, results_root: str | Path = "results",
                     dataset: str = DEFAULT_DATASET) -> BestConfig | None:
    """The stored best config of `model` on `dataset`, or None if no run has stored one yet."""
    return _read_best_store(best_config_path(model, results_root)).get(dataset)


def update_best_config(model: str, config: RunConfig | Mapping[str, Any], metric: float, checkpoint_path: str | Path,
                       higher_is_better: bool = True, *, metric_name: str | None = None,
                       results_root: str | Path = "results", dataset: str | None = None,
                       hyperparameters: Mapping[str, Any] | None = None) -> bool:
    """Store `config` as the model's best on its dataset if `metric` beats the stored one; True if it did.

    Records of other datasets are kept as they are. Read-compare-write happens under an exclusive
    flock, and the write is atomic, so runs in parallel processes never lose a better result nor
    leave a torn file. A non-finite metric never wins.
    """
    metric = float(metric)
    if not math.isfinite(metric):
        return False
    if isinstance(config, RunConfig):
        metric_name = metric_name or config.metric
        config = config.model_dump(mode="json")
    dataset = dataset or str(dict(config).get("dataset", DEFAULT_DATASET))
    path = best_config_path(model, results_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.with_name(f".{BEST_CONFIG_FILE}.lock")):
        store = _read_best_store(path)
        current = store.get(dataset)
        if current is not None:
            better = metric > current.metric if higher_is_better else metric < current.metric
            if not better:
                return False
        store[dataset] = BestConfig(model, metric_name or "metric", metric, higher_is_better, str(checkpoint_path),
                                    dict(config).get("result_dir"), datetime.now().isoformat(timespec="seconds"),
                                    dict(config), dataset, dict(hyperparameters or {}))
        atomic_write_text(path, yaml.safe_dump({key: record.__dict__ for key, record in store.items()},
                                               sort_keys=False))
    return True


def _read_best_store(path: Path) -> dict[str, BestConfig]:
    """dataset -> record of a best-config store (empty if there is none); DataLossError if it is corrupt."""
    if not path.exists():
        return {}
    data = _read_yaml(path)
    if "config" in data and "model_name" in data:  # a store from before records were filed by dataset
        data = {str(dict(data["config"]).get("dataset", DEFAULT_DATASET)): data}
    store = {}
    for dataset, record in data.items():
        try:
            store[str(dataset)] = BestConfig(**record)
        except TypeError as error:
            raise DataLossError(message=f"{path}: {dataset}: not a best-config record ({error})") from None
    return store


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `lock_path` (released when the process dies, too)."""
    with open(lock_path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise DataLossError(message=f"{path}: unreadable YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise DataLossError(message=f"{path}: expected a mapping")
    return data


def _started(run: Path) -> datetime:
    """When a run started: from its folder name, else from its config file's time."""
    try:
        return datetime.strptime(run.name[:15], _STAMP)
    except ValueError:
        return datetime.fromtimestamp((run / CONFIG_FILE).stat().st_mtime)


def _plain(value: Any) -> Any:
    """numpy scalars -> Python numbers, so json can write them."""
    return value.item() if hasattr(value, "item") else value
