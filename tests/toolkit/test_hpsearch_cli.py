"""`tftk hpsearch` end to end on the shipped digits: budget, best config for `train --best`, dry run,
a killed search resumed, a crashing trial, and every bad input (one line, exit 2, nothing written)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hpsearch.journal import read_journal
from tftk.cli import app
from tftk.runs import load_best_config
from tftk.search import SEARCH_FILE, SearchSettings, start_search
from tests.toolkit import hpsearch_trials
from tftk.client.threads import usable_cores

ROOT = Path(__file__).resolve().parents[2]
TFTK = shutil.which("tftk", path=str(Path(sys.executable).parent)) or shutil.which("tftk")
DIGITS_MLP = ROOT / "configs" / "digits_mlp.yaml"
SMALL = '{"nb_units": 16, "model.hidden2": 16}'  # small hidden layers: each rung trains in a fraction of a second
# R=9, eta=3: brackets s=2 (9x1, 3x3, 1x9), s=1 (5x3, 1x9), s=0 (3x9).
BUDGET = "budget: 3 bracket(s), 17 trials, 69 training iterations"
RESULTS_PER_RUNG = {("s2", 1): 9, ("s2", 3): 3, ("s2", 9): 1, ("s1", 3): 5, ("s1", 9): 1, ("s0", 9): 3}


def hpsearch(*args):
    return CliRunner().invoke(app, ["hpsearch", *map(str, args)])


def events(search_dir: Path, kind: str) -> list[dict]:
    return [e for e in read_journal(search_dir / "journal.jsonl") if e["event"] == kind]


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """One hyperband search (R=9, eta=3, 2 processes, seed 1) shared by the tests that only read it."""
    root = tmp_path_factory.mktemp("results")
    result = hpsearch("--config", DIGITS_MLP, "--max-resource", 9, "--eta", 3, "--nb-process", 2, "--seed", 1,
                      "--fixed-params", SMALL, f"results_root={root}")
    assert result.exit_code == 0, result.output + result.stderr
    (search_dir,) = (root / "MnistMLP").glob("hpsearch-*")
    return root, search_dir, result.stdout


def test_search_prints_the_budget_first_and_runs_the_plan(searched):
    root, search_dir, stdout = searched
    lines = stdout.splitlines()
    assert lines[0] == f"search folder: {search_dir} (continue a stopped search with: tftk hpsearch --resume {search_dir})"
    assert lines[1] == BUDGET
    assert search_dir.name.startswith("hpsearch-") and datetime.strptime(search_dir.name[9:], "%Y%m%d-%H%M%S")
    results = events(search_dir, "result")
    assert Counter((e["trial"][:2], e["resource"]) for e in results) == RESULTS_PER_RUNG
    assert "hpsearch: trials ranked (best first)" in stdout
    for start in events(search_dir, "start"):  # base fields + sampled, fixed params forced
        assert start["config"]["model_name"] == "MnistMLP" and start["config"]["nb_units"] == 16
        assert start["config"]["model.hidden2"] == 16 and "max_iter" not in start["config"]


def test_each_trial_is_a_run_folder_with_its_share_of_the_cores(searched):
    _, search_dir, _ = searched
    for start in events(search_dir, "start"):
        path = search_dir / "trials" / start["trial"] / "config.yaml"
        if path.exists():  # pruned trials keep only their events
            saved = yaml.safe_load(path.read_text())
            assert saved["threads"] == max(1, usable_cores() // 2)
            assert saved["random_seed"] == start["seed"] and saved["lr"] == start["config"]["lr"]
    kept = [p for p in (search_dir / "trials").iterdir() if (p / "checkpoint").exists()]
    assert sorted(p.name for p in kept) == sorted({e["trial"] for e in events(search_dir, "result") if e["resource"] == 9})


def test_best_trial_is_stored_with_its_metric_and_checkpoint(searched):
    root, search_dir, stdout = searched
    at_max = {e["trial"]: e["metric"] for e in events(search_dir, "result") if e["resource"] == 9}
    best_trial = max(at_max, key=lambda t: (at_max[t], t))
    stored = load_best_config("MnistMLP", root)
    trial_dir = search_dir / "trials" / best_trial
    assert stored.metric == at_max[best_trial] and stored.metric_name == "validation_accuracy"
    assert stored.checkpoint_path == str(trial_dir / "model.ckpt-9") and Path(stored.checkpoint_path + ".index").exists()
    assert stored.run_dir == str(trial_dir)
    assert stored.config == yaml.safe_load((trial_dir / "config.yaml").read_text())
    assert f"best trial {best_trial}: validation_accuracy = {stored.metric:.6g} after 9 iterations" in stdout
    assert f"best config stored in {root / 'MnistMLP' / 'best_config.yaml'}" in stdout


def test_train_best_uses_the_searched_config(searched, tmp_path):
    root, _, _ = searched
    stored = load_best_config("MnistMLP", root).config
    # The budget never comes from the store (issue 14): give the trial's max_iter explicitly.
    result = CliRunner().invoke(app, ["train", "--config", str(DIGITS_MLP), "--best", f"results_root={root}",
                                      "--max-iter", "9", "--result-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output + result.stderr
    resolved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    for key in ("lr", "nb_units", "initial_stddev", "max_iter", "model"):
        assert resolved[key] == stored[key], key
    assert resolved["lr"] != 0.5  # the file's lr was replaced by the searched one


def test_resume_of_a_finished_search_reruns_nothing(searched):
    root, search_dir, _ = searched
    before = read_journal(search_dir / "journal.jsonl")
    result = hpsearch("--resume", search_dir)
    assert result.exit_code == 0, result.output + result.stderr
    assert read_journal(search_dir / "journal.jsonl") == before
    assert f"best config not stored: the one in {root / 'MnistMLP' / 'best_config.yaml'} is at least as good" \
        in result.stdout  # the same metric again


def test_dry_run_prints_the_plan_and_creates_nothing(tmp_path):
    result = hpsearch("--config", DIGITS_MLP, "--max-resource", 9, "--dry-run", f"results_root={tmp_path}")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ("hyperband search plan (R=9, eta=3, mode=async):\n"
                             "  bracket s=2: 9 x 1  3 x 3  1 x 9  (21 iterations)\n"
                             "  bracket s=1: 5 x 3  1 x 9  (21 iterations)\n"
                             "  bracket s=0: 3 x 9  (27 iterations)\n"
                             f"{BUDGET}\n")
    assert list(tmp_path.iterdir()) == []
    random = hpsearch("--config", DIGITS_MLP, "--random", 4, "--dry-run", f"results_root={tmp_path}")
    assert random.stdout.splitlines()[-1] == "budget: 1 bracket(s), 4 trials, 8000 training iterations"  # R = max_iter
    assert list(tmp_path.iterdir()) == []


def test_a_crashing_trial_is_recorded_as_failed_and_the_search_goes_on(tmp_path, capsys):
    settings = SearchSettings(max_resource=9, seed=4, fixed_params={"nb_units": 16, "model.hidden2": 16},
                              trial_function="tests.toolkit.hpsearch_trials:run_trial_failing_for_large_lr")
    outcome = start_search(DIGITS_MLP, [f"results_root={tmp_path}"], settings, nb_process=2)
    failures = events(outcome.search_dir, "failure")
    starts = {e["trial"]: e["config"]["lr"] for e in events(outcome.search_dir, "start")}
    large = {t for t, lr in starts.items() if lr > hpsearch_trials.LR_LIMIT}
    assert large and {e["trial"] for e in failures} == large  # seed 4 samples some, and only those fail
    assert all("FloatingPointError: diverged at lr=" in e["error"] for e in failures)
    assert all(e["rung"] == 0 for e in failures)  # never promoted
    ran = {e["trial"] for e in events(outcome.search_dir, "result") if e["rung"] == 0}
    assert ran == set(starts) - large and len(starts) == 17  # every other trial of the plan still ran
    assert outcome.best is not None and outcome.best.config.lr <= hpsearch_trials.LR_LIMIT
    assert load_best_config("MnistMLP", tmp_path).checkpoint_path == outcome.best.checkpoint
    assert "FAILED: FloatingPointError: diverged" in capsys.readouterr().out


def test_killed_search_resumes_without_rerunning_finished_trials(tmp_path):
    command = [TFTK, "hpsearch", "--config", str(DIGITS_MLP), "--max-resource", "9", "--nb-process", "2", "--seed", "3",
               "--fixed-params", SMALL, f"results_root={tmp_path}"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    while True:  # kill once a few trials have finished
        journals = list(tmp_path.glob("MnistMLP/hpsearch-*/journal.jsonl"))
        if journals and len(events(journals[0].parent, "result")) >= 4:
            break
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no trial finished within 120 s"
        time.sleep(0.01)
    process.kill()
    process.communicate(timeout=60)
    search_dir = journals[0].parent
    finished = events(search_dir, "result")
    assert len(finished) < sum(RESULTS_PER_RUNG.values()), "the search ended before it was killed"
    configs_before = {e["trial"]: e["config"] for e in events(search_dir, "start")}

    resumed = hpsearch("--resume", search_dir, "--nb-process", 2)
    assert resumed.exit_code == 0, resumed.output + resumed.stderr
    journal = read_journal(search_dir / "journal.jsonl")
    results = Counter((e["trial"], e["rung"]) for e in journal if e["event"] == "result")
    assert max(results.values()) == 1  # no rung of a trial finished twice
    assert Counter((e["trial"][:2], e["resource"]) for e in journal if e["event"] == "result") == RESULTS_PER_RUNG
    finished_keys = {(e["trial"], e["rung"]) for e in finished}
    after_kill = journal[journal.index(finished[-1]) + 1:]
    assert not [e for e in after_kill if e["event"] == "start" and (e["trial"], e["rung"]) in finished_keys]
    for e in after_kill:  # same configs as before the kill (and as the same seed samples)
        if e["event"] == "start" and e["trial"] in configs_before:
            assert e["config"] == configs_before[e["trial"]]
    assert load_best_config("MnistMLP", tmp_path).run_dir.startswith(str(search_dir / "trials"))


BAD_INPUTS = [
    (["--config", DIGITS_MLP, "model_name=MnistMPL"], "unknown model 'MnistMPL' (did you mean 'MnistMLP'?)"),
    (["--config", DIGITS_MLP, "--fixed-params", "{lr: 1}"], "--fixed-params: not valid JSON"),
    (["--config", DIGITS_MLP, "--fixed-params", "[1]"], "--fixed-params: expected a JSON object"),
    (["--config", DIGITS_MLP, "--fixed-params", '{"lrr": 0.1}'],
     "--fixed-params: 'lrr' is not a field of the run config nor of MnistMLP's model section (did you mean 'lr'?)"),
    (["--config", DIGITS_MLP, "--fixed-params", '{"model.hidden3": 4}'], "(did you mean 'model.hidden2'?)"),
    (["--config", DIGITS_MLP, "--fixed-params", '{"max_iter": 4}'],
     "--fixed-params: 'max_iter' is set by the search for each trial (use --max-resource); remove it"),
    (["--config", DIGITS_MLP, "--fixed-params", '{"lr": -1}'], "--fixed-params: lr: Input should be greater than 0"),
    (["--config", DIGITS_MLP, "--fullsearch", "--random", 3], "--fullsearch runs hyperband stages"),
    (["--config", DIGITS_MLP, "--fullsearch", "--fixed-params", '{"lr": 0.1}'], "--fullsearch searches lr"),
    (["--config", DIGITS_MLP, "--backend", "dask"], "backend='dask' needs the scheduler address"),
    (["--config", DIGITS_MLP, "--backend", "spark"], "unknown backend 'spark'"),
    (["--max-resource", 9], "--config FILE is required (or --resume DIR to continue a search)"),
    (["--config", ROOT / "nope.yaml"], "nope.yaml: config file not found"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS, ids=[m[:30] for _, m in BAD_INPUTS])
def test_bad_input_is_one_line_exit_2_and_leaves_nothing(tmp_path, args, message):
    result = hpsearch(*args, f"results_root={tmp_path}", "--max-resource", 3)
    assert result.exit_code == 2, result.output + result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert not list(tmp_path.rglob("hpsearch-*")), list(tmp_path.rglob("*"))


def test_resume_needs_a_search_folder_and_takes_its_saved_settings(tmp_path, searched):
    _, search_dir, _ = searched
    cases = [(tmp_path / "missing", [], "no such folder"),
             (tmp_path, [], f"--resume {tmp_path}: not a search folder (no {SEARCH_FILE})"),
             (search_dir, ["--max-resource", 27, "--seed", 2],
              f"--resume continues {search_dir} with its saved settings; drop --max-resource, --seed")]
    for folder, extra, message in cases:
        result = hpsearch("--resume", folder, *extra)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []
    assert yaml.safe_load((search_dir / SEARCH_FILE).read_text())["seed"] == 1


@pytest.mark.slow  # about 10 s: three stages, each starting its own worker processes
def test_fullsearch_runs_three_stages_and_stores_their_best(tmp_path):
    result = hpsearch("--config", DIGITS_MLP, "--fullsearch", "--max-resource", 3, "--nb-process", 2, "--seed", 5,
                      "--fixed-params", SMALL, f"results_root={tmp_path}")
    assert result.exit_code == 0, result.output + result.stderr
    (search_dir,) = (tmp_path / "MnistMLP").glob("hpsearch-*")
    assert result.stdout.splitlines()[1] == "fullsearch total budget: 5 bracket(s), 15 trials, 37 training iterations"  # 11 + 5 x 3 + 11
    first, grid, third = (search_dir / stage for stage in ("1-hyperband", "2-lr-search", "3-hyperband-fixed-lr"))
    at_max = {e["trial"]: e["metric"] for e in events(first, "result") if e["resource"] == 3}
    best_lr = next(e["config"]["lr"] for e in events(first, "start")
                   if e["trial"] == min(at_max, key=lambda t: (-at_max[t], t)))  # ties: the first trial id
    grid_lrs = sorted(e["config"]["lr"] for e in events(grid, "start"))
    assert grid_lrs == pytest.approx(sorted(best_lr * f for f in (0.1, 0.316, 1.0, 3.16, 10.0)))
    assert len({e["config"]["lr"] for e in events(third, "start")}) == 1  # the lr search's winner, fixed
    stored = load_best_config("MnistMLP", tmp_path)
    everything = [e for stage in (first, grid, third) for e in events(stage, "result") if e["resource"] == 3]
    assert stored.metric == max(e["metric"] for e in everything)
    assert Path(stored.checkpoint_path + ".index").exists()
