"""`run_search`: one hyperparameter search (hyperband, random or a fixed grid) run over a pool of workers,
journaled so that a killed search resumes where it stopped."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Literal

from hpsearch.brackets import Bracket, budget_line, format_plan, hyperband_brackets, single_rung_bracket
from hpsearch.display import SearchDisplay, ranking_table
from hpsearch.journal import Journal, read_journal
from hpsearch.pruning import remove_checkpoints
from hpsearch.records import TrialRecord, apply_event, ranked
from hpsearch.sampling import Sampler, sample_config, to_json_config, trial_seed
from hpsearch.scheduler import Job, Scheduler
from hpsearch.trial import TrialFunction, TrialOutcome, TrialTask, function_path
from tftk.user_input import UserInputError

__all__ = ["SearchResult", "SearchSpec", "Execution", "run_search", "plan_brackets", "capped_workers", "JOURNAL_NAME"]

JOURNAL_NAME = "journal.jsonl"
PROBES = 8  # configs drawn to tell searched keys from constant ones, from a bracket no search has:
PROBE_BRACKET = 2**31 - 1
Algorithm = Literal["hyperband", "random", "grid"]


@dataclass
class SearchResult:
    """A finished (or dry-run) search: `best` is None for a dry run or when every trial failed."""

    search_dir: Path
    best: TrialRecord | None
    trials: list[TrialRecord]  # ranked, best first
    budget: str
    wall_seconds: float
    nb_process: int

    @property
    def busy_seconds(self) -> float:
        return sum(t.busy_seconds for t in self.trials)

    @property
    def utilisation(self) -> float:
        """Worker busy time / (workers x wall time)."""
        return self.busy_seconds / (self.nb_process * self.wall_seconds) if self.wall_seconds > 0 else 0.0


def plan_brackets(algorithm: Algorithm, max_resource: int, eta: int = 3, n_configs: int | None = None) -> list[Bracket]:
    """The brackets a search runs: Hyperband's, or one bracket of `n_configs` trials at max_resource."""
    if algorithm == "hyperband":
        return hyperband_brackets(max_resource, eta)
    if algorithm in ("random", "grid"):
        if n_configs is None:
            raise UserInputError(f"a {algorithm} search needs the number of configs (n_configs)")
        return [single_rung_bracket(n_configs, max_resource)]
    raise UserInputError(f"unknown search algorithm {algorithm!r}: use 'hyperband', 'random' or 'grid'")


@dataclass(frozen=True)
class SearchSpec:
    """What defines a search: recorded in its journal's first line, and a resume must give the same.

    max_resource: R, training iterations of a fully trained trial. eta: Hyperband's reduction factor.
    algorithm: 'hyperband' (Li et al. 2018), 'random' (n_configs configs at max_resource) or 'grid'
      (the given `configs` at max_resource).
    mode: 'async' promotes as soon as a trial ranks in its rung's top 1/eta (ASHA); 'sync' runs
      Hyperband's brackets one after another with a barrier at each rung.
    seed: a trial's config and seed derive from (seed, bracket, index), so the same seed gives the
      same trials. fixed_params: forced into every sampled config.
    """

    max_resource: int
    algorithm: Algorithm = "hyperband"
    mode: Literal["async", "sync"] = "async"
    eta: int = 3
    n_configs: int | None = None
    configs: list[dict] | None = None
    seed: int = 0
    fixed_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Execution:
    """How a search runs; none of it changes which trials run nor what they report.

    nb_process: parallel trials (capped at the trials that can run and at the cores). trial_timeout:
      seconds, else the trial fails. backend: 'local' processes, or 'dask' at `address`.
    prune: called on the trial dir of a trial that can no longer be promoted (default: delete all but
      TensorBoard event files); None keeps everything. live: rich live table (default: when `out` is
      a terminal). dry_run: print the plan and budget, train nothing. resume: continue the search.
    """

    nb_process: int = 1
    trial_timeout: float | None = None
    backend: Literal["local", "dask"] = "local"
    address: str | None = None
    prune: Callable[[Path], None] | None = remove_checkpoints
    live: bool | None = None
    dry_run: bool = False
    resume: bool = False


def run_search(trial_fn: TrialFunction | str, sampler: Sampler | None, search_dir: str | os.PathLike,
               spec: SearchSpec, execution: Execution = Execution(), out: IO[str] | None = None) -> SearchResult:
    """Run (or resume, or only plan) one hyperparameter search and return its ranked trials.

    Args:
      trial_fn: `run_trial(config, resource, trial_dir, seed) -> float` (higher is better), a top-level
        function or its 'module:function' path; it trains to `resource` iterations in total, restoring
        trial_dir's checkpoint if there is one. Worker processes import it; it reads its thread budget
        from the TFTK_NUM_THREADS environment variable.
      sampler: `get_random_config(rng: np.random.Generator, fixed_params) -> dict`; unused for 'grid'.
      search_dir: holds `journal.jsonl` and `trials/<trial_id>/` (each trial's dir).
      spec: what the search is (SearchSpec); execution: how to run it (Execution).
      out: where to print (stdout).
    """
    algorithm, max_resource, eta, mode, seed = spec.algorithm, spec.max_resource, spec.eta, spec.mode, spec.seed
    nb_process, trial_timeout, n_configs = execution.nb_process, execution.trial_timeout, spec.n_configs
    out = out or sys.stdout
    fixed = to_json_config(spec.fixed_params)
    if algorithm == "grid":
        if not spec.configs:
            raise UserInputError("a grid search needs a non-empty list of configs")
        grid = [to_json_config({**c, **fixed}) for c in spec.configs]
        n_configs = len(grid)
    elif sampler is None:
        raise UserInputError(f"a {algorithm} search needs a sampler (get_random_config)")
    brackets = plan_brackets(algorithm, max_resource, eta, n_configs)
    if execution.dry_run:
        print(format_plan(brackets, f"{algorithm} search plan (R={max_resource}, eta={eta}, mode={mode})"), file=out)
        return SearchResult(Path(search_dir), None, [], budget_line(brackets), 0.0, nb_process)
    if not isinstance(nb_process, int) or nb_process < 1:
        raise UserInputError(f"nb_process must be a positive integer, got {nb_process!r}")
    if trial_timeout is not None and not 0 < trial_timeout < float("inf"):
        raise UserInputError(f"trial_timeout must be a positive number of seconds, got {trial_timeout!r}")
    if execution.backend == "local":
        from tftk.client.threads import usable_cores  # here: `import hpsearch` stays free of the engine
        nb_process = capped_workers(nb_process, sum(b.n_configs for b in brackets), usable_cores(), out)

    def config_of(job: Job) -> dict:
        if algorithm == "grid":
            return grid[job.index]
        return sample_config(sampler, seed, job.bracket, job.index, fixed)

    probes = grid if algorithm == "grid" else [sample_config(sampler, seed, PROBE_BRACKET, i, fixed) for i in range(PROBES)]

    header = {"event": "search", "algorithm": algorithm, "mode": mode, "max_resource": max_resource, "eta": eta,
              "n_configs": n_configs, "seed": seed, "fixed_params": fixed,
              "grid": grid if algorithm == "grid" else None}
    search = _Search(Path(search_dir), brackets, eta, mode, header, execution.resume, execution.prune)
    print(budget_line(brackets), file=out, flush=True)
    start = time.monotonic()
    search.hparam_keys = varying_keys(probes)
    search.run(function_path(trial_fn), config_of, seed,
               _make_pool(execution.backend, execution.address, nb_process, trial_timeout), SearchDisplay(out, execution.live))
    records = ranked(list(search.records.values()))
    best = next((r for r in records if r.metric is not None), None)
    if records:
        print(ranking_table(records), file=out, flush=True)
    return SearchResult(search.search_dir, best, records, budget_line(brackets), time.monotonic() - start, nb_process)


def varying_keys(configs: list[dict]) -> tuple[str, ...]:
    """The config keys whose values differ between `configs`: the searched hyperparameters, the columns worth
    showing in TensorBoard's HParams (keys every trial shares would repeat the same value in every row)."""
    keys = sorted({key for config in configs for key in config})
    return tuple(key for key in keys if len({json.dumps(config.get(key), sort_keys=True) for config in configs}) > 1)


def capped_workers(nb_process: int, trials: int, cores: int, out: IO[str]) -> int:
    """Workers no more than the trials that can run at once, nor than the cores (each worker gets
    cores // workers threads, so workers x threads <= cores); a warning says when the request was cut."""
    workers = max(1, min(nb_process, trials, cores))
    if workers < nb_process:
        reason = f"{trials} trial(s) can run at once" if trials <= cores else f"this machine has {cores} core(s)"
        print(f"warning: --nb-process {nb_process} lowered to {workers}: {reason}", file=out, flush=True)
    return workers


def worker_threads(workers: int, cores: int) -> int:
    """Each local worker's thread budget: cores // workers, at least 1 (with workers <= cores from
    capped_workers, workers x threads <= cores). Trials read it from TFTK_NUM_THREADS, and a trial
    config asking for more threads is cut to it (tftk.training_loop.train_to)."""
    return max(1, cores // workers)


def _make_pool(backend: str, address: str | None, nb_process: int, trial_timeout: float | None):
    from tftk.client.threads import usable_cores
    threads = worker_threads(nb_process, usable_cores())
    if backend == "local":
        from hpsearch.local_pool import LocalPool

        return LocalPool(nb_process, threads, trial_timeout)
    if backend == "dask":
        if not address:
            raise UserInputError("backend='dask' needs the scheduler address (address='tcp://host:8786')")
        from hpsearch.dask_pool import DaskPool

        return DaskPool(address, threads, trial_timeout, nb_process)
    raise UserInputError(f"unknown backend {backend!r}: use 'local' or 'dask'")


class _Search:
    """The loop joining scheduler, journal, pool and display; its state is the journal replayed."""

    def __init__(self, search_dir: Path, brackets: list[Bracket], eta: int, mode: str, header: dict,
                 resume: bool, prune: Callable[[Path], None] | None):
        self.search_dir = search_dir
        self.journal_path = search_dir / JOURNAL_NAME
        self.scheduler = Scheduler(brackets, eta, mode)
        self.records: dict[str, TrialRecord] = {}
        self.pruned: set[str] = set()
        self.prune = prune
        self.jobs: dict[str, Job] = {}
        self.hparam_keys: tuple[str, ...] = ()  # what TensorBoard's HParams shows of each config
        events = read_journal(self.journal_path)
        if events and not resume:
            raise UserInputError(f"{search_dir} already holds a search: pass resume=True to continue it, or choose another dir")
        if events:
            _check_same_search(events[0], header, search_dir)
        for event in events[1:]:
            self._replay(event)
        self.journal = Journal(self.journal_path)
        if not events:
            self.journal.append(header)

    def _replay(self, event: dict) -> None:
        apply_event(self.records, event, self.search_dir)
        kind = event["event"]
        if kind == "start":
            job = Job(event["bracket"], event["index"], event["rung"], event["resource"])
            if self.scheduler.running.get(job.trial_id) != job:  # a re-run after a resume starts it again
                self.scheduler.mark_started(job)
        elif kind in ("result", "failure"):
            job = self.scheduler.running[event["trial"]]
            self.scheduler.report(job, event.get("metric"))
        elif kind == "pruned":
            self.pruned.add(event["trial"])

    def _log(self, event: dict) -> None:
        self.journal.append({**event, "time": time.time()})
        apply_event(self.records, event, self.search_dir)

    def run(self, function: str, config_of: Callable[[Job], dict], seed: int, pool, display: SearchDisplay) -> None:
        resubmit = list(self.scheduler.running.values())  # in flight when the search was killed
        display.start()
        try:
            while True:
                while pool.free_slots() > 0:
                    job = resubmit.pop(0) if resubmit else self.scheduler.next_job()
                    if job is None:
                        break
                    if job.trial_id not in self.scheduler.running:
                        self.scheduler.mark_started(job)
                    self._start(job, function, config_of, seed, pool, display)
                if not self.scheduler.running:
                    if not self.scheduler.done():
                        raise RuntimeError("hpsearch scheduler stalled: nothing to run and the search is not done")
                    return
                for outcome in pool.wait():
                    self._finish(outcome, display)
                self._prune_dead(display)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: let running trials save, journal nothing more
            display.close()
            getattr(pool, "interrupt", pool.close)()
            raise
        finally:
            pool.close()
            display.close()
            self.journal.close()

    def _start(self, job: Job, function: str, config_of, seed: int, pool, display: SearchDisplay) -> None:
        record = self.records.get(job.trial_id)
        config = record.config if record else config_of(job)
        tseed = trial_seed(seed, job.bracket, job.index)
        self._log({"event": "start", "trial": job.trial_id, "bracket": job.bracket, "index": job.index,
                   "rung": job.rung, "resource": job.resource, "config": config, "seed": tseed})
        record = self.records[job.trial_id]
        pool.submit(TrialTask(job.trial_id, job.rung, function, config, job.resource, str(record.trial_dir), tseed,
                              pool.threads, self.hparam_keys))
        display.event(record, f"rung {job.rung} started ({job.resource} iterations)", self.records)

    def _finish(self, outcome: TrialOutcome, display: SearchDisplay) -> None:
        job = self.scheduler.running[outcome.trial_id]
        record = self.records[outcome.trial_id]
        if outcome.error is None:
            self._log({"event": "result", "trial": job.trial_id, "rung": job.rung, "resource": job.resource,
                       "metric": outcome.metric, "busy_seconds": outcome.busy_seconds})
            line = f"rung {job.rung} ({job.resource} iterations) metric={outcome.metric:.6g}"
        else:
            self._log({"event": "failure", "trial": job.trial_id, "rung": job.rung, "resource": job.resource,
                       "error": outcome.error, "busy_seconds": outcome.busy_seconds})
            line = f"rung {job.rung} FAILED: {outcome.error.splitlines()[-1]}"
        self.scheduler.report(job, outcome.metric)
        display.event(record, line, self.records)

    def _prune_dead(self, display: SearchDisplay) -> None:
        for tid in sorted(self.scheduler.prunable() - self.pruned):
            if self.prune is not None:
                self.prune(self.records[tid].trial_dir)
            self.pruned.add(tid)
            self._log({"event": "pruned", "trial": tid})
            display.event(self.records[tid], "stopped (checkpoints removed)", self.records)


def _check_same_search(recorded: dict, header: dict, search_dir: Path) -> None:
    """Resuming with other settings would silently mix two searches: refuse, naming the setting."""
    for key, value in header.items():
        if recorded.get(key) != value:
            raise UserInputError(
                f"cannot resume {search_dir}: {key} was {recorded.get(key)!r}, now {value!r}; "
                "resume with the original settings or choose another dir")
