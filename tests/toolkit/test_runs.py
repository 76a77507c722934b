"""Run folders, saved configs, metrics lines, run listing and the concurrent-safe best-config store."""

from __future__ import annotations

import json
import multiprocessing
import random
from datetime import datetime

import pytest
import yaml

from tftk.config import RunConfig, dump_config
from tftk.user_input import UserInputError
from tftk.runs import (MetricsLog, list_runs, load_best_config, load_run_config, new_run_dir, prepare_run_dir,
                       read_metrics, save_run_config, truncate_metrics, update_best_config)

NOW = datetime(2024, 5, 6, 7, 8, 9)


def make_config(tmp_path, **fields):
    return RunConfig(model_name="MnistMLP", results_root=str(tmp_path / "results"), random_seed=1, **fields)


def test_run_dirs_are_unique_within_one_second(tmp_path):
    paths = [new_run_dir("M", tmp_path, None, NOW) for _ in range(3)] + [new_run_dir("M", tmp_path, "exp", NOW)]
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        "M/20240506-070809", "M/20240506-070809_2", "M/20240506-070809_3", "M/20240506-070809-exp"]


def _make_dir(root, queue):
    queue.put(str(new_run_dir("M", root, "p", NOW)))


def test_run_dirs_are_unique_across_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_make_dir, args=(tmp_path, queue)) for _ in range(4)]
    for w in workers:
        w.start()
    names = sorted(queue.get(timeout=10) for _ in workers)
    for w in workers:
        w.join()
    assert len(set(names)) == 4


def test_prepare_saves_the_resolved_config_once(tmp_path):
    run = prepare_run_dir(make_config(tmp_path, name="a"), now=NOW)
    assert run.path == tmp_path / "results" / "MnistMLP" / "20240506-070809-a"
    assert not run.resumed and run.config.result_dir == str(run.path)
    assert (run.path / "config.yaml").read_text() == dump_config(run.config)
    assert load_run_config(run.path) == run.config


def test_resume_takes_the_saved_seed_and_allows_run_control_changes(tmp_path):
    first = prepare_run_dir(make_config(tmp_path).model_copy(update={"random_seed": None}))
    again = prepare_run_dir(make_config(tmp_path, result_dir=str(first.path), max_iter=4000)
                            .model_copy(update={"random_seed": None}))
    assert again.resumed and again.config.random_seed == first.config.random_seed
    assert again.changed == {"max_iter": (2000, 4000)}
    assert load_run_config(first.path).max_iter == 4000
    assert yaml.safe_load((first.path / "config.prev-1.yaml").read_text())["max_iter"] == 2000


def test_resume_with_a_different_config_is_refused_unless_forced(tmp_path):
    first = prepare_run_dir(make_config(tmp_path))
    before = (first.path / "config.yaml").read_text()
    changed = make_config(tmp_path, result_dir=str(first.path), lr=0.5, model={"hidden1": 3})
    with pytest.raises(UserInputError) as caught:
        prepare_run_dir(changed)
    assert str(caught.value) == (f"{first.path / 'config.yaml'}: this run was started with a different config "
                                 "(lr: 0.001 -> 0.5, model: {} -> {'hidden1': 3}); resume with the same settings, "
                                 "start a new run, or pass --force")
    assert (first.path / "config.yaml").read_text() == before
    assert sorted(p.name for p in first.path.iterdir()) == ["config.yaml"]
    forced = prepare_run_dir(changed, force=True)
    assert forced.config.lr == 0.5 and load_run_config(first.path).lr == 0.5
    assert (first.path / "config.prev-1.yaml").read_text() == before


def test_same_config_is_not_rewritten(tmp_path):
    run = prepare_run_dir(make_config(tmp_path))
    assert save_run_config(run.path, run.config.model_copy(update={"debug": False})) == {}
    assert sorted(p.name for p in run.path.iterdir()) == ["config.yaml"]


def test_load_run_config_of_a_plain_folder(tmp_path):
    with pytest.raises(UserInputError, match=r"not a run folder \(no config\.yaml\)"):
        load_run_config(tmp_path)


def test_metrics_lines_append_and_truncate(tmp_path):
    import numpy as np

    with MetricsLog(tmp_path) as log:
        log.append(10, {"loss": np.float32(0.5), "validation_accuracy": 0.25})
        log.append(20, {"loss": 0.25})
    with MetricsLog(tmp_path) as log:
        log.append(np.int64(30), {"loss": 0.125})
    assert (tmp_path / "metrics.jsonl").read_text() == (
        '{"step": 10, "loss": 0.5, "validation_accuracy": 0.25}\n{"step": 20, "loss": 0.25}\n'
        '{"step": 30, "loss": 0.125}\n')
    truncate_metrics(tmp_path, 20)
    assert [r["step"] for r in read_metrics(tmp_path)] == [10, 20]


def test_a_torn_last_line_is_skipped(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.0}\n{"step": 2, "lo')
    assert read_metrics(tmp_path) == [{"step": 1, "loss": 2.0}]


def test_list_runs(tmp_path):
    root = tmp_path / "results"
    a = prepare_run_dir(make_config(tmp_path), now=datetime(2024, 1, 2, 3, 4, 5)).path
    b = prepare_run_dir(make_config(tmp_path, metric="loss", metric_mode="min"), now=NOW).path
    c = prepare_run_dir(make_config(tmp_path).model_copy(update={"model_name": "ConvNet"}), now=NOW).path
    with MetricsLog(a) as log:
        for step, acc in [(100, 0.5), (200, 0.9), (300, 0.8)]:
            log.append(step, {"validation_accuracy": acc})
    with MetricsLog(b) as log:
        log.append(50, {"loss": 2.0})
        log.append(60, {"loss": 1.5})
    runs = list_runs(root)
    assert [(r.model, r.path, r.started, r.steps, r.metric, r.best_metric) for r in runs] == [
        ("MnistMLP", a, datetime(2024, 1, 2, 3, 4, 5), 300, "validation_accuracy", 0.9),
        ("ConvNet", c, NOW, None, "validation_accuracy", None),
        ("MnistMLP", b, NOW, 60, "loss", 1.5)]
    assert [r.path for r in list_runs(root, model="ConvNet")] == [c]
    assert list_runs(tmp_path / "absent") == []


def test_best_config_keeps_the_better_run(tmp_path):
    root = tmp_path / "results"
    config = make_config(tmp_path, lr=0.1)
    assert load_best_config("MnistMLP", root) is None
    assert update_best_config("MnistMLP", config, 0.8, "ckpt-1", results_root=root)
    assert not update_best_config("MnistMLP", config, 0.8, "ckpt-2", results_root=root)  # a tie is not better
    assert not update_best_config("MnistMLP", config, float("nan"), "ckpt-3", results_root=root)
    assert update_best_config("MnistMLP", config.model_copy(update={"lr": 0.2}), 0.9, "ckpt-4", results_root=root)
    best = load_best_config("MnistMLP", root)
    assert (best.metric, best.metric_name, best.checkpoint_path, best.config["lr"]) == \
        (0.9, "validation_accuracy", "ckpt-4", 0.2)
    assert update_best_config("Loss", {"lr": 1}, 2.0, "a", higher_is_better=False, results_root=root)
    assert update_best_config("Loss", {"lr": 2}, 1.0, "b", higher_is_better=False, results_root=root)
    assert not update_best_config("Loss", {"lr": 3}, 1.5, "c", higher_is_better=False, results_root=root)
    assert load_best_config("Loss", root).config == {"lr": 2}


def _compete(root, seed, results):
    rng = random.Random(seed)
    wins = []
    for i in range(100):
        metric = rng.random()
        if update_best_config("M", {"lr": metric, "worker": seed}, metric, f"w{seed}-{i}", results_root=root):
            wins.append(metric)
        assert load_best_config("M", root) is not None  # readers never see a torn file
    results.put((seed, wins))


def test_best_config_under_concurrent_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    workers = [ctx.Process(target=_compete, args=(tmp_path, seed, results)) for seed in range(4)]
    for w in workers:
        w.start()
    outcomes = dict(results.get(timeout=60) for _ in workers)
    for w in workers:
        w.join()
        assert w.exitcode == 0
    every_metric = [m for seed in range(4) for m in _metrics_of(seed)]
    best = load_best_config("M", tmp_path)
    assert best.metric == max(every_metric)
    assert best.config == {"lr": best.metric, "worker": next(s for s in range(4) if best.metric in _metrics_of(s))}
    for wins in outcomes.values():  # each process saw its own wins strictly increase
        assert wins == sorted(set(wins))
    assert sorted(p.name for p in (tmp_path / "M").iterdir()) == [".best_config.yaml.lock", "best_config.yaml"]


def _metrics_of(seed):
    rng = random.Random(seed)
    return [rng.random() for _ in range(100)]


def test_list_runs_skips_a_corrupt_run_and_says_so(tmp_path):
    good = prepare_run_dir(make_config(tmp_path), now=NOW).path
    bad = prepare_run_dir(make_config(tmp_path, name="bad"), now=NOW).path
    (bad / "config.yaml").write_text("model_name: [unclosed")
    skipped = []
    runs = list_runs(tmp_path / "results", on_skip=lambda run, reason: skipped.append((run, reason)))
    assert [r.path for r in runs] == [good]
    assert skipped[0][0] == bad and "unreadable YAML" in skipped[0][1]


def test_leftovers_of_killed_writes_are_removed_and_listed_checkpoints_kept(tmp_path):
    from tftk.runs import remove_leftovers

    names = ["model.ckpt-10.npz", "model.ckpt-20.npz", "model.ckpt-30.npz", ".model.ckpt-40.npz.x1y2.tmp",
             ".checkpoint.abc.tmp", "events.out.tfevents.1.host", "config.yaml", "model.ckpt-best.npz"]
    for name in names:
        (tmp_path / name).write_text("x")
    removed = remove_leftovers(tmp_path, "model.ckpt", [str(tmp_path / "model.ckpt-20"), str(tmp_path / "model.ckpt-30")])
    assert sorted(p.name for p in removed) == [".checkpoint.abc.tmp", ".model.ckpt-40.npz.x1y2.tmp", "model.ckpt-10.npz"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(names) - {p.name for p in removed})


def test_a_new_run_stores_its_results_root_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = prepare_run_dir(RunConfig(model_name="MnistMLP", random_seed=1), now=NOW)
    assert load_run_config(run.path).results_root == str(tmp_path / "results")
