"""`tftk train` runs a model given as a tf.estimator model_fn (models/estimator_model.py's EstimatorMLP):
checkpoints, summaries written by the model_fn, resume, the best-config store, `tftk infer` — and the
same model_fn in tf.estimator.Estimator, warm-started from the tftk run, predicts what the run infers."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import tftk as tf
from tftk.cli import app

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "digits_estimator_mlp.yaml"


def _cli(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    _cli("train", "--config", str(CONFIG), "--result-dir", str(root / "mlp"), "--random-seed", "3",
         f"results_root={root}", "max_iter=60", "save_every=30", "log_every=10")
    return root / "mlp"


def _scalars(folder: Path) -> dict[str, list[int]]:
    steps: dict[str, list[int]] = {}
    for name in sorted(os.listdir(folder)):
        if name.startswith("events.out.tfevents"):
            for event in tf.train.summary_iterator(str(folder / name)):
                for value in event.summary.value:
                    steps.setdefault(value.tag, []).append(event.step)
    return steps


def test_a_model_fn_trains_with_checkpoints_summaries_and_best_config(run):
    assert tf.train.latest_checkpoint(str(run)).endswith("model.ckpt-60")
    tags = _scalars(run)
    assert tags["cross_entropy"] == [10, 20, 30, 40, 50, 60]  # the model_fn's own tf.summary.scalar
    assert tags["loss"] == tags["cross_entropy"]
    assert (run.parent / "EstimatorMLP").exists()  # the best-config store of the model
    variables = [name for name, _ in tf.train.list_variables(str(run))]
    assert "hidden1/kernel" in variables and "softmax_linear/bias" in variables


def test_resume_goes_on_from_the_checkpoint(run, tmp_path):
    import shutil
    copy = tmp_path / "mlp"
    shutil.copytree(run, copy)
    result = _cli("train", "--result-dir", str(copy), "max_iter=80", f"results_root={run.parent}")
    assert "60 -> 80" in result.output
    assert tf.train.latest_checkpoint(str(copy)).endswith("model.ckpt-80")


def test_the_same_model_fn_in_an_estimator_predicts_what_tftk_infer_infers(run, tmp_path):
    from models.estimator_model import EstimatorMLP
    from tftk.datasets import load_dataset

    images = load_dataset("digits", str(Path(__file__).resolve().parents[2] / "data"), seed=3).test.images[:20]
    inputs = tmp_path / "inputs.npy"
    np.save(inputs, images)
    _cli("infer", "--result-dir", str(run), "--input", str(inputs), "--output", str(tmp_path / "out.npy"))
    inferred = np.load(tmp_path / "out.npy")
    params = {"nb_units": 128, "hidden2": 32, "initial_stddev": 0.1, "lr": 0.5, "num_classes": 10}
    estimator = tf.estimator.Estimator(EstimatorMLP.estimator_model_fn, model_dir=str(tmp_path / "est"), params=params,
                                       warm_start_from=str(run))
    predicted = [p["class_ids"] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({"images": images}, shuffle=False))]
    np.testing.assert_array_equal(predicted, inferred)
