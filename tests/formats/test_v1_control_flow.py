"""TF1 control flow (while frames, Switch/Merge conds) in files TensorFlow wrote, run in tftk.

The fixtures (tests/fixtures/formats/control_flow, made by make_control_flow_fixtures.py with
TF's v1 control flow) hold TF's outputs beside each model; with TensorFlow present the slow test
writes them afresh and checks tftk against the new files too.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.op_table import UnsupportedNodeError
from tftk.proto.tensorflow import GraphDef

from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats" / "control_flow"
MAKE = FIXTURES.parent / "make_control_flow_fixtures.py"
RNNS = ["lstm", "gru"]


def _load(folder: Path, form: str, sess) -> None:
    """Load one of the TF-written files of `folder` into the session's graph."""
    if form == "frozen":
        tf.import_graph_def(GraphDef.FromString((folder / "frozen.pb").read_bytes()), name="")
    elif form == "saved_model":
        tf.saved_model.loader.load(sess, ["serve"], str(folder / "saved_model"))
    else:
        saver = tf.train.import_meta_graph(str(folder / "model.ckpt-3.meta"))
        saver.restore(sess, str(folder / "model.ckpt-3"))


def _check_inference(folder: Path, kind: str, form: str) -> None:
    values = np.load(folder / kind / "values.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        _load(folder / kind, form, sess)
        out = sess.run("output:0", {"x:0": values["x_eval"]})
        np.testing.assert_allclose(out, values["eval_output"], rtol=1e-5, atol=1e-6)
        if kind in RNNS:  # sequence_length fed: the frame's Select/copy-through paths
            out = sess.run("output:0", {"x:0": values["x_eval"], "lengths:0": values["eval_lengths"]})
            np.testing.assert_allclose(out, values["eval_output_lengths"], rtol=1e-5, atol=1e-6)
        if kind == "switched":  # the other branch: batch statistics, then dropout's mask
            feed = {"x:0": values["x_eval"], "is_training:0": True}
            features = sess.run("features:0", feed)
            np.testing.assert_allclose(features, values["training_features"], rtol=1e-5, atol=1e-6)
            dropped = sess.run("dropped:0", dict(feed, **{"dropout_on:0": True}))
            kept = dropped != 0
            np.testing.assert_allclose(dropped[kept], 2 * features[kept], rtol=1e-6)
            assert 0 < kept.sum() < (features != 0).sum()


KINDS = ["lstm", "gru", "switched", "nested"]


@pytest.mark.parametrize("form", ["frozen", "saved_model", "meta"])
@pytest.mark.parametrize("kind", KINDS)
def test_tf1_control_flow_files_run_as_tensorflow_did(kind, form):
    _check_inference(FIXTURES, kind, form)


def _check_training(folder: Path, kind: str) -> None:
    """import_meta_graph + restore + 3 steps of TF's own train_op (TF1 gradient loops with their stacks
    and gradient TensorArrays, gradients through Switch/Merge, BN updates in a cond): TF's losses and
    variables after them."""
    values = np.load(folder / kind / "values.npz")
    with tf.Graph().as_default(), tf.Session() as sess:
        _load(folder / kind, "meta", sess)
        train_op = sess.graph.get_operation_by_name("train")
        feed = {"x:0": values["x_train"], "y:0": values["y_train"]}
        if kind == "switched":
            feed["is_training:0"] = True
        losses = [sess.run([train_op, "loss:0"], feed)[1] for _ in range(3)]
        variables = {v.op.name: v for v in tf.trainable_variables()}
        after = sess.run({name: variables[name[len("after/"):]] for name in values.files if name.startswith("after/")})
    np.testing.assert_allclose(losses, values["losses_after"], rtol=1e-5)
    assert after and all(np.allclose(after[k], values[k], rtol=1e-5, atol=1e-6) for k in after), \
        {k: float(np.abs(after[k] - values[k]).max()) for k in after}


@pytest.mark.parametrize("kind", KINDS)
def test_meta_graph_with_tf1_control_flow_goes_on_training_as_tensorflow_did(kind):
    _check_training(FIXTURES, kind)


def _mutated(kind: str, edit) -> GraphDef:
    graph_def = GraphDef.FromString((FIXTURES / kind / "frozen.pb").read_bytes())
    edit({n.name: n for n in graph_def.node}, graph_def)
    return graph_def


def _second_loop_cond(nodes, graph_def):
    extra = graph_def.node.add()
    extra.CopyFrom(nodes["rnn/rnn/while/LoopCond"])
    extra.name = "rnn/rnn/while/LoopCond_2"


def _three_way_merge(nodes, graph_def):
    nodes["bn/cond/Merge"].input.append(nodes["bn/cond/Merge"].input[0])


def _exit_outside_a_loop(nodes, graph_def):
    extra = graph_def.node.add()
    extra.CopyFrom(next(n for n in graph_def.node if n.op == "Exit"))
    extra.name, extra.input[:] = "stray_exit", ["x"]


@pytest.mark.parametrize("kind, edit, message", [
    ("lstm", _second_loop_cond, r"loop frame 'rnn/rnn/while/while_context' has 2 LoopCond nodes"),
    ("switched", _three_way_merge, r"node 'bn/cond/Merge'.*a Merge of 3 inputs"),
    ("lstm", _exit_outside_a_loop, r"Exit node 'stray_exit' is not inside a loop frame"),
])
def test_unsupported_v1_structures_name_the_node(kind, edit, message):
    with tf.Graph().as_default():
        with pytest.raises(UnsupportedNodeError, match=message):
            tf.import_graph_def(_mutated(kind, edit), name="")


@pytest.mark.slow  # runs real TensorFlow in a subprocess (about 30 s)
def test_fresh_tensorflow_files_run_in_tftk(tmp_path):
    run_script_in_tf(str(MAKE), str(tmp_path))
    for kind in KINDS:
        for form in ["frozen", "saved_model", "meta"]:
            _check_inference(tmp_path, kind, form)
        _check_training(tmp_path, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_tftk_gradients_through_imported_loops_match_tensorflows_gradient_graph(kind):
    """Two gradient paths agree: TF's own gradient graph in the .meta (its v1 gradient loops, rebuilt)
    and tftk's tf.gradients through the While / cond the import made of the forward frames."""
    from tftk.proto.tensorflow import MetaGraphDef
    meta = MetaGraphDef.FromString((FIXTURES / kind / "model.ckpt-3.meta").read_bytes())
    tf_grads = {n.input[0]: n.input[9] for n in meta.graph_def.node if n.op == "ApplyAdam"}  # var -> grad
    values = np.load(FIXTURES / kind / "values.npz")
    feed = {"x:0": values["x_train"], "y:0": values["y_train"]}
    if kind == "switched":
        feed["is_training:0"] = True
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        _load(FIXTURES / kind, "meta", sess)
        variables = {v.op.name: v for v in tf.trainable_variables()}
        ours = tf.gradients(graph.get_tensor_by_name("loss:0"), [variables[name] for name in tf_grads])
        theirs = [graph.get_tensor_by_name(ref if ":" in ref else ref + ":0") for ref in tf_grads.values()]
        got, expected = sess.run([ours, theirs], feed)
    assert len(got) == len(variables)
    for name, g, e in zip(tf_grads, got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6, err_msg=name)
