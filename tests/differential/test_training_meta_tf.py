"""Real TensorFlow imports a tftk *training* graph (.meta + checkpoint) and keeps training.

tftk builds each program of `training_models`, trains one step, saves (V2 checkpoint + .meta),
then trains on; TensorFlow (`tf_continue_training.py`, in its own venv) imports the .meta with
`tf.train.import_meta_graph`, restores the checkpoint and runs the same steps. The losses must
agree: every node tftk wrote, gradient and optimizer included, is a TF op TF runs the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf

from tests.differential import training_models
from tests.tf_oracle import run_script_in_tf

STEPS = 3
SCRIPT = Path(__file__).parent / "tf_continue_training.py"


def _train_in_tftk(name: str, directory: Path) -> list[float]:
    """Train `name` one step, save, train STEPS more; write the spec for TF; return those losses."""
    batches = training_models.batches(name, STEPS + 1)
    with tf.Graph().as_default():
        feeds, loss, train_op = training_models.MODELS[name](tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, dict(zip(feeds, batches[0])))
            prefix = saver.save(sess, str(directory / "model.ckpt"), global_step=1)
            losses = []
            for batch in batches[1:]:
                sess.run(train_op, dict(zip(feeds, batch)))
                losses.append(float(sess.run(loss, dict(zip(feeds, batch)))))
    np.savez(directory / "feeds.npz", **{f"s{s}_{i}": v for s, batch in enumerate(batches[1:])
                                         for i, v in enumerate(batch)})
    (directory / "spec.json").write_text(json.dumps({
        "prefix": prefix, "train_op": train_op.name, "loss": loss.name,
        "feeds": [t.name for t in feeds], "steps": STEPS}))
    return losses


@pytest.fixture(scope="module")
def continued(tmp_path_factory):
    """{model: (tftk's losses, TF's result)}, TF run once for all models."""
    ours = {}
    for name in training_models.MODELS:
        directory = tmp_path_factory.mktemp(name)
        ours[name] = (directory, _train_in_tftk(name, directory))
    theirs = json.loads(run_script_in_tf(str(SCRIPT), *(str(d) for d, _ in ours.values())))
    return {name: (losses, theirs[str(d)]) for name, (d, losses) in ours.items()}


@pytest.mark.slow  # trains nine models in tftk and again in real TensorFlow
@pytest.mark.parametrize("name", sorted(training_models.MODELS))
def test_tensorflow_continues_training_from_a_tftk_meta_graph(continued, name):
    ours, theirs = continued[name]
    assert "error" not in theirs, theirs.get("error")
    np.testing.assert_allclose(theirs["losses"], ours, rtol=2e-5, atol=1e-6)
