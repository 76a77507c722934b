"""`--best` (issue 14 item 1): filed by model and dataset, only searched hyperparameters, explicit input wins,
and `tftk best` shows what it would change."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from models import get_model_class
from tftk.cli import app
from tftk.config import RunConfig
from tftk.runs import load_best_config, update_best_config
from tftk.training_loop import load_train_config

ROOT = Path(__file__).resolve().parents[2]
DIGITS_MLP = ROOT / "configs" / "digits_mlp.yaml"
MNIST_MLP = ROOT / "configs" / "mnist_mlp.yaml"


@pytest.fixture
def stored(tmp_path):
    """A digits best from a short search trial: lr 0.278, max_iter 27, threads 1."""
    root = tmp_path / "results"
    trial = RunConfig(model_name="MnistMLP", dataset="digits", lr=0.278, max_iter=27, threads=1, nb_units=64,
                      initial_stddev=0.05, results_root=str(root), result_dir="somewhere", model={"hidden2": 16})
    searched = get_model_class("MnistMLP").searched_hyperparameters(trial)
    assert update_best_config("MnistMLP", trial, 0.9, "somewhere/model.ckpt-27", results_root=root,
                              hyperparameters=searched)
    return root


def test_searched_hyperparameters_are_what_get_random_config_draws():
    config = RunConfig(model_name="MnistMLP", lr=0.3, nb_units=64, initial_stddev=0.05, max_iter=9,
                       model={"hidden2": 16})
    assert get_model_class("MnistMLP").searched_hyperparameters(config) == \
        {"lr": 0.3, "nb_units": 64, "initial_stddev": 0.05, "model.hidden2": 16}


def test_best_applies_searched_values_only_and_explicit_input_wins(stored):
    config = load_train_config(DIGITS_MLP, [f"results_root={stored}", "nb_units=8"],
                               {"best": True, "max_iter": 2000, "initial_stddev": 0.2})
    assert (config.lr, config.model["hidden2"]) == (0.278, 16)  # searched: from the store
    assert (config.nb_units, config.initial_stddev) == (8, 0.2)  # explicit override and flag win
    assert (config.max_iter, config.threads, config.dataset, config.best) == (2000, 0, "digits", False)


def test_best_is_filed_by_dataset(stored, tmp_path):
    assert load_best_config("MnistMLP", stored, "mnist") is None
    result = CliRunner().invoke(app, ["train", "--config", str(MNIST_MLP), "--best", f"results_root={stored}",
                                      "--result-dir", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "no best config stored for MnistMLP on mnist" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_better_run_on_another_dataset_keeps_the_first_record(stored):
    other = RunConfig(model_name="MnistMLP", dataset="mnist", lr=0.01)
    assert update_best_config("MnistMLP", other, 0.5, "x", results_root=stored, hyperparameters={"lr": 0.01})
    assert load_best_config("MnistMLP", stored).config["lr"] == 0.278
    assert load_best_config("MnistMLP", stored, "mnist").hyperparameters == {"lr": 0.01}
    assert not update_best_config("MnistMLP", other, float("inf"), "y", results_root=stored)  # never non-finite


def test_tftk_best_shows_what_it_would_change(stored):
    shown = CliRunner().invoke(app, ["best", "MnistMLP", "--config", str(DIGITS_MLP), "--results-root", str(stored)])
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines() == ["lr: 0.5 -> 0.278", "nb_units: 128 -> 64", "initial_stddev: 0.1 -> 0.05",
                                         "model.hidden2: 32 -> 16"]
    kept = CliRunner().invoke(app, ["best", "MnistMLP", "--config", str(DIGITS_MLP), "lr=0.4", "model.hidden2=16",
                                    "--results-root", str(stored)])
    assert kept.stdout.splitlines() == ["nb_units: 128 -> 64", "initial_stddev: 0.1 -> 0.05"]
    record = CliRunner().invoke(app, ["best", "MnistMLP", "--results-root", str(stored)])
    assert "# dataset digits; --best applies: lr=0.278, nb_units=64, initial_stddev=0.05, model.hidden2=16" \
        in record.stdout
    assert yaml.safe_load(record.stdout)["max_iter"] == 27  # the record still says what the run was
