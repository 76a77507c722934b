"""`tftk export`: a trained run as a SavedModel that tftk's loader and real TensorFlow both run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import tftk as tf
from tftk.cli import app
from tftk.datasets import load_dataset

from tests.tf_oracle import run_script_in_tf

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run = tmp_path_factory.mktemp("run") / "digits"
    result = invoke("train", "--config", ROOT / "configs" / "digits_mlp.yaml", "--max-iter", 50, "batch_size=50",
                    "--random-seed", 3, "--result-dir", run, "results_root=" + str(run.parent))
    assert result.exit_code == 0, result.stderr
    return run


TF_PREDICT = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
with tf.Graph().as_default(), tf.Session() as sess:
    sig = tf.saved_model.loader.load(sess, ["serve"], sys.argv[1]).signature_def["serving_default"]
    print(json.dumps(sess.run(sig.outputs["predictions"].name, {sig.inputs["images"].name: np.load(sys.argv[2])}).tolist()))
"""


@pytest.mark.slow  # runs real TensorFlow in a subprocess
def test_export_matches_infer_in_tftk_and_tensorflow(run_dir, tmp_path):
    out = tmp_path / "sm"
    result = invoke("export", "--result-dir", run_dir, "--out", out)
    assert result.exit_code == 0, result.stderr
    images = load_dataset("digits", dtype=np.uint8).test.images[:20]
    scaled = (images.astype(np.float32) / 16.0).reshape(20, 64)  # what tftk infer feeds the MLP (pixels max 16)
    np.save(tmp_path / "scaled.npy", scaled)
    expected = invoke("infer", "--result-dir", run_dir, "--input", tmp_path / "scaled.npy", "--show", 0,
                      "--output", tmp_path / "p.npy")
    assert expected.exit_code == 0, expected.stderr
    predictions = np.load(tmp_path / "p.npy")
    with tf.Graph().as_default(), tf.Session() as sess:
        sig = tf.saved_model.loader.load(sess, ["serve"], str(out)).signature_def["serving_default"]
        assert sorted(sig.outputs) == ["logits", "predictions"]
        ours = sess.run(sig.outputs["predictions"].name, {sig.inputs["images"].name: scaled})
    np.testing.assert_array_equal(ours, predictions)
    script = tmp_path / "predict.py"
    script.write_text(TF_PREDICT)
    np.testing.assert_array_equal(json.loads(run_script_in_tf(str(script), str(out), str(tmp_path / "scaled.npy"))),
                                  predictions)


def test_export_bad_input_is_one_line_exit_2(run_dir, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    for args, text in [(["--result-dir", run_dir, "--out", tmp_path / "full"], "already exists and is not empty"),
                       (["--result-dir", tmp_path / "nothing", "--out", tmp_path / "o"], "no checkpoint")]:
        result = invoke("export", *args)
        assert result.exit_code == 2, result.output
        assert text in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()
