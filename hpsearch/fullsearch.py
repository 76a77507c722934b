"""The article's fullsearch: hyperband, then a learning-rate search around the best config, then
hyperband again with that learning rate fixed; each stage is a search of its own in a subfolder."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import IO, Any

from hpsearch.brackets import budget_line, format_plan
from hpsearch.records import ranked
from hpsearch.sampling import Sampler
from hpsearch.search import Execution, SearchResult, SearchSpec, plan_brackets, run_search
from hpsearch.trial import TrialFunction
from tftk.user_input import UserInputError

__all__ = ["run_fullsearch", "LR_FACTORS", "STAGES"]

LR_FACTORS = (0.1, 0.316, 1.0, 3.16, 10.0)  # a log-spaced grid, one decade either side of the best lr
STAGES = ("1-hyperband", "2-lr-search", "3-hyperband-fixed-lr")


def _stage_seed(seed: int, stage: int) -> int:
    """Each stage samples its own configs, reproducibly from the search seed."""
    import numpy as np

    return int(np.random.SeedSequence([seed, stage]).generate_state(1)[0] >> 1)


def run_fullsearch(trial_fn: TrialFunction | str, sampler: Sampler, search_dir: str | os.PathLike,
                   spec: SearchSpec, execution: Execution = Execution(), out: IO[str] | None = None, *,
                   lr_key: str = "lr", lr_factors: tuple[float, ...] = LR_FACTORS) -> SearchResult:
    """Hyperband -> lr grid (best config, lr x each factor, at max_resource) -> hyperband with that lr fixed.

    `spec` gives R, eta, mode, the seed (each stage's is derived from it) and the fixed params;
    `execution` applies to every stage. Returns every trial of the three stages, ranked; `best` is
    the best of them all.
    """
    out = out or sys.stdout
    root = Path(search_dir)
    fixed = dict(spec.fixed_params)
    max_resource, eta, seed = spec.max_resource, spec.eta, spec.seed
    if lr_key in fixed:
        raise UserInputError(f"fullsearch searches {lr_key!r}: remove it from fixed_params or run a plain hyperband search")
    if execution.dry_run:
        hyperband = plan_brackets("hyperband", max_resource, eta)
        grid = plan_brackets("grid", max_resource, eta, len(lr_factors))
        for title, brackets in zip(STAGES, (hyperband, grid, hyperband)):
            print(format_plan(brackets, f"fullsearch stage {title} (R={max_resource}, eta={eta})"), file=out)
        print(f"fullsearch total {budget_line(hyperband + grid + hyperband)}", file=out)
        return SearchResult(root, None, [], budget_line(hyperband + grid + hyperband), 0.0, execution.nb_process)

    def stage(number: int, sampler: Sampler | None, **changes: Any) -> SearchResult:
        stage_spec = dataclasses.replace(spec, seed=_stage_seed(seed, number), **changes)
        return run_search(trial_fn, sampler, root / STAGES[number - 1], stage_spec, execution, out)

    first = stage(1, sampler, algorithm="hyperband", fixed_params=fixed)
    if first.best is None:
        raise UserInputError(f"fullsearch: every trial of {root / STAGES[0]} failed; see its journal for the errors")
    if lr_key not in first.best.config:
        raise UserInputError(f"fullsearch: the sampled configs have no {lr_key!r} key; pass lr_key='<name of the learning rate>'")
    lr = float(first.best.config[lr_key])
    grid = [{**first.best.config, lr_key: lr * factor} for factor in lr_factors]
    second = stage(2, None, algorithm="grid", configs=grid, fixed_params={})
    best_lr = second.best.config[lr_key] if second.best is not None else lr
    third = stage(3, sampler, algorithm="hyperband", fixed_params={**fixed, lr_key: best_lr})
    trials = ranked(first.trials + second.trials + third.trials)
    best = next((t for t in trials if t.metric is not None), None)
    wall = first.wall_seconds + second.wall_seconds + third.wall_seconds
    return SearchResult(root, best, trials, f"{first.budget}; {second.budget}; {third.budget}", wall, first.nb_process)
