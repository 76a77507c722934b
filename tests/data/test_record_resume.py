"""The toolkit's tf.data-fed training resumes exactly: a run stopped (SIGINT / SIGTERM, or SIGKILL
between checkpoints) and resumed ends bit-identical to an uninterrupted one, because the pipeline's
position is in every checkpoint (models/record_input.py)."""

import os
import random
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from models import make_model, model_schema
from tftk.config import resolve_config
from tests.faults.test_kill_resume import ENV, TFTK, _assert_same_run

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "configs" / "digits_convnet_tfrecord.yaml"
SMALL = ["model.conv1_filters=4", "model.conv2_filters=4", "nb_units=16", "batch_size=20",
         "model.shuffle_buffer=300"]


def _train(tmp_path, run, stop_at=None):
    """Train the small ConvNet from records to step 16 (a SIGINT after step `stop_at`); its variables."""
    (tmp_path / run).mkdir(exist_ok=True)
    config = resolve_config(CONFIG, ["max_iter=16", "save_every=5", "log_every=4", "random_seed=4",
                                     f"result_dir={tmp_path / run}", f"model.train_records={tmp_path / 'train.tfrecord'}",
                                     *SMALL], model_schema)
    model = make_model(config)
    model.log = lambda line: None
    model.train(on_step=lambda step, values: step == stop_at and os.kill(os.getpid(), signal.SIGINT))
    values = model.sess.run(model._variables())
    model.close()
    return values


@pytest.mark.slow
@pytest.mark.parametrize("stop_at", [3, 7, 10])
def test_stopped_tf_data_training_resumes_bit_identical(tmp_path, stop_at):
    reference = _train(tmp_path, "reference")
    _train(tmp_path, "run", stop_at)
    resumed = _train(tmp_path, "run")
    for ours, theirs in zip(resumed, reference):
        np.testing.assert_array_equal(ours, theirs)
    assert (tmp_path / "run" / "metrics.jsonl").read_text() == (tmp_path / "reference" / "metrics.jsonl").read_text()


def _cli(run: Path) -> list[str]:
    return [TFTK, "train", "--config", str(CONFIG), "--max-iter", "60", "--random-seed", "9", "--result-dir", str(run),
            f"results_root={run.parent / 'results'}", "save_every=6", "log_every=3",
            f"model.train_records={run.parent / 'train.tfrecord'}", *SMALL]


@pytest.mark.slow
def test_killed_tf_data_training_resumes_bit_identical(tmp_path):
    reference = tmp_path / "reference"
    done = subprocess.run(_cli(reference), capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    run, rng = tmp_path / "run", random.Random("tf.data faults")
    for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGKILL):
        process = subprocess.Popen(_cli(run), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        try:
            process.wait(timeout=rng.uniform(2.0, 5.0))
        except subprocess.TimeoutExpired:
            process.send_signal(sig)
        _, stderr = process.communicate(timeout=120)
        assert "Traceback" not in stderr, stderr
    done = subprocess.run(_cli(run), capture_output=True, text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    _assert_same_run(run, reference)
