"""tftk's GraphDefs in real TensorFlow: frozen graphs and graph_util, with TF's outputs compared."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.proto.tensorflow import GraphDef

from tests.formats import fixture_models
from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"

TF_RUN_FROZEN = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
graph_def = tf.GraphDef()
graph_def.ParseFromString(open(sys.argv[1], "rb").read())
x = np.load(sys.argv[2])
with tf.Graph().as_default():
    out, = tf.import_graph_def(graph_def, return_elements=["output:0"], input_map={"x:0": tf.constant(x)}, name="")
    with tf.Session() as sess:
        print(json.dumps(sess.run(out).tolist()))
"""


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_tftk_frozen_graph_runs_in_tensorflow(tmp_path, kind):
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default() as graph:
        model = fixture_models.build(tf, kind)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(model["train_op"], {model["x"]: values["x_train"], model["y"]: values["y_train"]})
            ours = sess.run(model["output"], {model["x"]: values["x_eval"]})
            frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["output"])
    assert {n.op for n in frozen.node}.isdisjoint({"VariableV2", "Assign", "ApplyAdam"})
    tf.train.write_graph(frozen, str(tmp_path), "frozen.pb", as_text=False)
    np.save(tmp_path / "x.npy", values["x_eval"])
    script = tmp_path / "run.py"
    script.write_text(TF_RUN_FROZEN)
    theirs = json.loads(run_script_in_tf(str(script), str(tmp_path / "frozen.pb"), str(tmp_path / "x.npy")))
    np.testing.assert_allclose(theirs, ours, rtol=1e-5, atol=1e-6)
    with tf.Graph().as_default():  # and tftk reads its own frozen file back
        (y,) = tf.import_graph_def(GraphDef.FromString((tmp_path / "frozen.pb").read_bytes()),
                                   return_elements=["output:0"], input_map={"x:0": tf.constant(values["x_eval"])})
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), ours, rtol=1e-6)


def test_extract_sub_graph_and_remove_training_nodes():
    graph_def = GraphDef.FromString((FIXTURES / "mlp" / "frozen.pb").read_bytes())
    sub = tf.graph_util.extract_sub_graph(graph_def, ["logits"])
    assert "output" not in {n.name for n in sub.node} and "x" in {n.name for n in sub.node}
    with pytest.raises(ValueError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(graph_def, ["nope"])
    slim = tf.graph_util.remove_training_nodes(graph_def)
    assert "Identity" not in {n.op for n in slim.node}
    values = np.load(FIXTURES / "mlp" / "values.npz")
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(slim, return_elements=["output:0"], input_map={"x:0": tf.constant(values["x_eval"])})
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), values["eval_output"], atol=1e-6)


def test_write_graph_text_round_trips(tmp_path):
    from google.protobuf import text_format
    with tf.Graph().as_default() as graph:
        fixture_models.build(tf, "mlp")
        path = tf.train.write_graph(graph, str(tmp_path), "g.pbtxt", as_text=True)
    parsed = text_format.Parse(Path(path).read_text(), GraphDef())
    assert parsed == graph.as_graph_def()
