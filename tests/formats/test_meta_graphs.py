"""Meta graphs and GraphDefs: import TF's .meta / frozen .pb into tftk, and tftk's own, and go on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.importer import UnsupportedNodeError
from tftk.proto.tensorflow import GraphDef, MetaGraphDef

from tests.formats import fixture_models

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_frozen_graph_from_tensorflow_gives_tensorflow_outputs(kind):
    values = np.load(FIXTURES / kind / "values.npz")
    graph_def = GraphDef.FromString((FIXTURES / kind / "frozen.pb").read_bytes())
    with tf.Graph().as_default() as graph:
        x, y = tf.import_graph_def(graph_def, return_elements=["x:0", "output:0"], name="frozen")
        assert y is graph.get_tensor_by_name("frozen/output:0")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {x: values["x_eval"]}), values["eval_output"], atol=1e-6)


def test_input_map_replaces_a_placeholder():
    graph_def = GraphDef.FromString((FIXTURES / "mlp" / "frozen.pb").read_bytes())
    values = np.load(FIXTURES / "mlp" / "values.npz")
    with tf.Graph().as_default():
        fixed = tf.constant(values["x_eval"])
        (y,) = tf.import_graph_def(graph_def, input_map={"x:0": fixed}, return_elements=["output:0"])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y), values["eval_output"], atol=1e-6)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_import_tensorflow_meta_graph_restore_and_continue_training(kind):
    """The TF1 idiom: import_meta_graph + restore + get_tensor_by_name + one more training step."""
    values = np.load(FIXTURES / kind / "values.npz")
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(str(FIXTURES / kind / "model.ckpt-3.meta"))
        train_op = tf.get_collection("train_op")[0]
        assert train_op.name == "train"
        assert {v.op.name for v in tf.trainable_variables()} >= {"out/kernel", "out/bias"}
        x, y = graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("y:0")
        loss, output = graph.get_tensor_by_name("loss:0"), graph.get_tensor_by_name("output:0")
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / kind / "model.ckpt-3"))
            np.testing.assert_allclose(sess.run(output, {x: values["x_eval"]}), values["eval_output"], atol=1e-6)
            feed = {x: values["x_train"], y: values["y_train"]}
            sess.run(train_op, feed)
            np.testing.assert_allclose(sess.run(loss, feed), values["loss_after_next_step"], rtol=1e-5)
            assert sess.run(graph.get_tensor_by_name("global_step:0")) == 4


def test_saver_writes_meta_that_tftk_imports_and_resumes(tmp_path):
    values = np.load(FIXTURES / "mlp" / "values.npz")
    with tf.Graph().as_default():
        model = fixture_models.build(tf, "mlp")
        tf.add_to_collection("train_op", model["train_op"])
        tf.summary.scalar("loss", model["loss"])
        saver = tf.train.Saver()
        feed = {model["x"]: values["x_train"], model["y"]: values["y_train"]}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(model["train_op"], feed)
            prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
            sess.run(model["train_op"], feed)
            expected = sess.run(model["loss"], feed)
    meta = MetaGraphDef.FromString(Path(prefix + ".meta").read_bytes())
    assert meta.saver_def.restore_op_name == "save/restore_all" and meta.saver_def.version == 2
    assert set(meta.collection_def) >= {"variables", "trainable_variables", "train_op", "summaries"}
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 1
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            sess.run(tf.get_collection("train_op")[0], {graph.get_tensor_by_name("x:0"): values["x_train"],
                                                         graph.get_tensor_by_name("y:0"): values["y_train"]})
            got = sess.run("loss:0", {"x:0": values["x_train"], "y:0": values["y_train"]})
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_unknown_op_type_names_node_and_type():
    graph_def = GraphDef()
    graph_def.node.add(name="mystery", op="FancyNewOp")
    with tf.Graph().as_default():
        with pytest.raises(UnsupportedNodeError, match="op type 'FancyNewOp' of node 'mystery' is not supported"):
            tf.import_graph_def(graph_def)


def test_missing_input_and_bad_meta_file_are_clear_errors(tmp_path):
    graph_def = GraphDef()
    graph_def.node.add(name="y", op="Identity", input=["nowhere"])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="node 'y' has input 'nowhere', which is not in the graph"):
            tf.import_graph_def(graph_def)
    bad = tmp_path / "bad.meta"
    bad.write_bytes(b"\xff\xff\xff garbage")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="bad.meta is not a MetaGraphDef"):
            tf.train.import_meta_graph(str(bad))
