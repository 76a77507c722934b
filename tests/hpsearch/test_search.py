"""Whole searches on toy objectives with real worker processes: results, failures, timeouts, resume."""

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from hpsearch import Execution, SearchSpec, run_search
from hpsearch.journal import read_journal
from hpsearch.sampling import sample_config
from tftk.user_input import UserInputError
import hpsearch_toys as toys
from tftk.client.threads import usable_cores

HERE = Path(__file__).parent


def events(search_dir, kind):
    return [e for e in read_journal(Path(search_dir) / "journal.jsonl") if e["event"] == kind]


def test_async_hyperband_with_two_processes(tmp_path):
    out = io.StringIO()
    result = run_search(toys.quadratic, toys.sample_lr, tmp_path, SearchSpec(max_resource=9, eta=3, seed=3),
                        Execution(nb_process=2), out=out)
    assert out.getvalue().startswith("budget: 3 bracket(s), 17 trials, 69 training iterations\n")
    results = events(tmp_path, "result")
    assert Counter((e["trial"][:2], e["resource"]) for e in results) == {
        ("s2", 1): 9, ("s2", 3): 3, ("s2", 9): 1, ("s1", 3): 5, ("s1", 9): 1, ("s0", 9): 3}
    at_max = [t for t in result.trials if t.resource == 9]
    assert result.best.metric == max(t.metric for t in at_max) == toys.objective(result.best.config["lr"], 9)
    assert result.best.trial_dir == tmp_path / "trials" / result.best.trial_id
    assert (result.best.trial_dir / toys.CHECKPOINT).exists()
    # promoted trials continued from their own checkpoint: each run started where the last rung ended
    runs = [line.split() for line in (tmp_path / "runs.log").read_text().splitlines()]
    for trial in {r[0] for r in runs}:
        resources = [int(r[1]) for r in runs if r[0] == trial]
        assert [r[2] for r in runs if r[0] == trial] == [f"from={x}" for x in [0] + resources[:-1]]
    assert {json.loads((tmp_path / "trials" / r[0] / toys.CHECKPOINT).read_text())["threads"]
            for r in runs if (tmp_path / "trials" / r[0] / toys.CHECKPOINT).exists()} == {str(max(1, usable_cores() // 2))}
    pruned = {e["trial"] for e in events(tmp_path, "pruned")}
    assert len(pruned) == 17 - 5  # all but the five trials that reached R=9
    for trial in pruned:
        files = os.listdir(tmp_path / "trials" / trial)
        assert toys.CHECKPOINT not in files and any(f.startswith("events.out.tfevents") for f in files)
    assert "hpsearch: trials ranked (best first)" in out.getvalue()


def test_hparams_summaries_in_the_trial_dir(tmp_path):
    result = run_search(toys.quadratic, toys.sample_lr, tmp_path, SearchSpec(algorithm="random", n_configs=1, max_resource=4),
                        out=io.StringIO())
    from tftk.summary import summary_iterator  # the toolkit's event reader

    found = {}
    for path in sorted(result.best.trial_dir.glob("events.out.tfevents*")):
        for event in summary_iterator(str(path)):
            for value in event.summary.value:
                found[value.tag] = (event.step, value)
    assert {"_hparams_/experiment", "_hparams_/session_start_info", "hpsearch/metric"} <= set(found)
    step, value = found["hpsearch/metric"]
    assert step == 4 and value.simple_value == pytest.approx(result.best.metric, rel=1e-6)


def test_same_seed_samples_the_same_configs(tmp_path):
    spec, execution = SearchSpec(algorithm="random", n_configs=4, max_resource=2, seed=11), Execution(nb_process=2)
    first = run_search(toys.quadratic, toys.sample_lr, tmp_path / "a", spec, execution, io.StringIO())
    second = run_search(toys.quadratic, toys.sample_lr, tmp_path / "b", spec, execution, io.StringIO())
    assert sorted(json.dumps(t.config) for t in first.trials) == sorted(json.dumps(t.config) for t in second.trials)
    assert [e["config"] for e in events(tmp_path / "a", "start")] == [sample_config(toys.sample_lr, 11, 0, i, {}) for i in range(4)]


GRID = [{"lr": 0.01}, {"lr": 0.5}, {"lr": 0.001}]


@pytest.mark.parametrize("trial_fn, timeout, error", [
    (toys.raises_for_large_lr, None, "ValueError: diverged at lr=0.5"),
    (toys.hangs_for_large_lr, 6.0, "timed out after 6 s"),  # room for a loaded machine
    (toys.dies_for_large_lr, None, "worker process died (exit code 3)"),
])
def test_a_failing_trial_is_recorded_and_the_search_goes_on(tmp_path, trial_fn, timeout, error):
    result = run_search(trial_fn, None, tmp_path, SearchSpec(algorithm="grid", configs=GRID, max_resource=3),
                        Execution(nb_process=2, trial_timeout=timeout), out=io.StringIO())
    failures = events(tmp_path, "failure")
    assert [f["trial"] for f in failures] == ["s0-0001"] and error in failures[0]["error"]
    assert [t.status for t in result.trials] == ["done", "done", "failed"]
    assert result.best.config == {"lr": 0.01}


def test_non_finite_metric_is_a_failure(tmp_path):
    result = run_search(toys.nan_metric, None, tmp_path, SearchSpec(algorithm="grid", configs=GRID[:1], max_resource=1),
                        out=io.StringIO())
    assert result.best is None and "trial returned a non-finite metric nan" in result.trials[0].error


def test_dry_run_prints_the_plan_and_trains_nothing(tmp_path):
    out = io.StringIO()
    result = run_search(toys.quadratic, toys.sample_lr, tmp_path / "s", SearchSpec(max_resource=81), Execution(dry_run=True),
                        out=out)
    assert "bracket s=4: 81 x 1  27 x 3  9 x 9  3 x 27  1 x 81" in out.getvalue()
    assert result.budget == "budget: 5 bracket(s), 143 trials, 1581 training iterations"
    assert not (tmp_path / "s").exists()


def test_an_existing_search_needs_resume_and_the_same_settings(tmp_path):
    spec, resume, out = SearchSpec(algorithm="random", n_configs=2, max_resource=2), Execution(resume=True), io.StringIO()
    run_search(toys.quadratic, toys.sample_lr, tmp_path, spec, out=out)
    with pytest.raises(UserInputError, match="already holds a search: pass resume=True"):
        run_search(toys.quadratic, toys.sample_lr, tmp_path, spec, out=out)
    with pytest.raises(UserInputError, match="cannot resume .*: seed was 0, now 5"):
        run_search(toys.quadratic, toys.sample_lr, tmp_path, dataclasses.replace(spec, seed=5), resume, out)
    again = run_search(toys.quadratic, toys.sample_lr, tmp_path, spec, resume, out)  # already done: nothing reruns
    assert len((tmp_path / "runs.log").read_text().splitlines()) == 2 and again.best is not None


def test_trial_function_must_be_importable(tmp_path):
    with pytest.raises(UserInputError, match="must be a top-level function of an importable module"):
        run_search(lambda c, r, d, s: 0.0, toys.sample_lr, tmp_path, SearchSpec(max_resource=3), out=io.StringIO())


RESUMABLE = "hpsearch.SearchSpec(max_resource=9, eta=3, seed=5)"  # with 2 processes


def test_killed_search_resumes_without_rerunning_finished_trials(tmp_path):
    script = (f"import io, hpsearch, hpsearch_toys as t\n"
              f"hpsearch.run_search(t.slow_quadratic, t.sample_lr, {str(tmp_path)!r}, {RESUMABLE}, "
              f"hpsearch.Execution(nb_process=2), io.StringIO())\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 60
    while len(events(tmp_path, "result")) < 6:
        assert process.poll() is None and time.monotonic() < deadline, "the search ended before it could be killed"
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = {(e["trial"], e["resource"]) for e in events(tmp_path, "result")}
    assert len(finished) < 22  # killed mid-way (the whole search runs 22 rungs)
    runs_before = len((tmp_path / "runs.log").read_text().splitlines())

    result = run_search(toys.slow_quadratic, toys.sample_lr, tmp_path, SearchSpec(max_resource=9, eta=3, seed=5),
                        Execution(nb_process=2, resume=True), io.StringIO())
    rerun = [line.split() for line in (tmp_path / "runs.log").read_text().splitlines()[runs_before:]]
    assert not {(r[0], int(r[1])) for r in rerun} & finished
    assert len({(e["trial"], e["resource"]) for e in events(tmp_path, "result")}) == 22
    for start in events(tmp_path, "start"):  # same configs the search would have sampled
        bracket, index = start["bracket"], start["index"]
        assert start["config"] == sample_config(toys.sample_lr, 5, bracket, index, {})
    assert result.best is not None and result.best.resource == 9
