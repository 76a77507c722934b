"""Files of TF 2's functional control flow (control flow v2) load in tftk.

The fixtures (tests/fixtures/formats/, made by make_control_flow_v2_fixtures.py with real TF):
rnn_v2, a dynamic_rnn LSTM: a `StatelessWhile` with its cond/body FunctionDefs and TensorLists,
and in the .meta the gradient's While reading the forward's accumulators (TensorListPopBack) —
tftk runs the frozen graph and the SavedModel to TF's outputs and resumes training from the .meta
with TF's losses; cond_v2, a nested tf.cond as `StatelessIf` and its gradient (Optionals carrying
the taken branch's intermediates) — the same values as TF for inputs taking either branch.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.op_table import BUILDERS
from tftk.proto.tensorflow import GraphDef

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"
FIXTURE = FIXTURES / "rnn_v2"
# dynamic_rnn's graph outside the loop (transposes, the time range) and its gradient: op builders
# the TF1 control-flow import adds (formats/op_table.py, branch wave3/cfimport)
NEEDED = ("Range", "Transpose", "InvertPermutation", "SigmoidGrad", "TanhGrad", "Sin", "Cos")
pytestmark = pytest.mark.skipif(not all(op in BUILDERS for op in NEEDED),
                                reason=f"import builders for {NEEDED} are not in this tree yet")


@pytest.fixture(scope="module")
def values():
    return np.load(FIXTURE / "values.npz")


def test_frozen_graph_runs_to_tensorflows_outputs(values):
    graph_def = GraphDef.FromString((FIXTURE / "frozen.pb").read_bytes())
    assert "StatelessWhile" in {n.op for n in graph_def.node}
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(graph_def, return_elements=["output:0"], input_map={"x:0": tf.constant(values["x_eval"])})
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), values["eval_output"], rtol=1e-5, atol=1e-6)


def test_saved_model_runs_to_tensorflows_outputs(values):
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(FIXTURE / "saved_model"))
        signature = meta.signature_def["serving_default"]
        out = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: values["x_eval"]})
    np.testing.assert_allclose(out, values["eval_output"], rtol=1e-5, atol=1e-6)


def test_meta_graph_resumes_training_with_tensorflows_losses(values):
    prefix = str(FIXTURE / "model.ckpt-3")
    feed = {"x:0": values["x_train"], "y:0": values["y_train"]}
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run("output:0", {"x:0": values["x_eval"]}), values["eval_output"],
                                       rtol=1e-5, atol=1e-6)
            losses = []
            for _ in range(3):
                sess.run("train", feed)
                losses.append(sess.run("loss:0", feed))
    np.testing.assert_allclose(losses, values["next_losses"], rtol=2e-5)


@pytest.mark.parametrize("sign", ["positive", "negative"])
def test_functional_cond_and_its_gradient_give_tensorflows_values(sign):
    cond = np.load(FIXTURES / "cond_v2" / "values.npz")
    graph_def = GraphDef.FromString((FIXTURES / "cond_v2" / "frozen.pb").read_bytes())
    assert "StatelessIf" in {n.op for n in graph_def.node}
    with tf.Graph().as_default():
        x, y, grad = tf.import_graph_def(graph_def, return_elements=["x:0", "y:0", "grad:0"], name="")
        with tf.Session() as sess:
            got = sess.run([y, grad], {x: cond[f"x_{sign}"]})
    np.testing.assert_allclose(got[0], cond[f"y_{sign}"], rtol=1e-12)
    np.testing.assert_allclose(got[1], cond[f"grad_{sign}"], rtol=1e-12)
