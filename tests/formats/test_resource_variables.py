"""Resource variables (VarHandleOp, ReadVariableOp, AssignVariableOp, ResourceApply*) written by
real TensorFlow: frozen graph, SavedModel, .meta + checkpoint load in tftk and train as in TF.

Fixtures: tests/fixtures/formats/make_resource_fixtures.py (resource_<optimizer>/).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.importer import UnsupportedNodeError
from tftk.proto.tensorflow import AttrValue, GraphDef
from tftk.summary.tensor_proto import make_tensor_proto

from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"
SCRIPT = FIXTURES / "make_resource_fixtures.py"
OPTIMIZERS = ["gd", "adam", "momentum"]


def _frozen_output(folder: Path, x_eval: np.ndarray) -> np.ndarray:
    graph_def = GraphDef.FromString((folder / "frozen.pb").read_bytes())
    with tf.Graph().as_default():
        x, y = tf.import_graph_def(graph_def, return_elements=["x:0", "output:0"])
        with tf.Session() as sess:
            return sess.run(y, {x: x_eval})


def _saved_model_output(folder: Path, x_eval: np.ndarray) -> np.ndarray:
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(folder / "saved_model"))
        signature = meta.signature_def["serving_default"]
        return sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: x_eval})


def _meta_restore_and_train(folder: Path, values) -> tuple[np.ndarray, list, float, int]:
    """import_meta_graph + restore + the eval output, then 3 training steps' losses; the counter
    (AssignAdd/SubVariableOp) and global step after them."""
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(str(folder / "model.ckpt-0.meta"))
        assert {v.op.name for v in tf.trainable_variables()} == {"dense/kernel", "dense/bias", "emb",
                                                                "out/kernel", "out/bias"}
        train = graph.get_operation_by_name("train")
        feed = {"x:0": values["x_train"], "y:0": values["y_train"]}
        with tf.Session() as sess:
            saver.restore(sess, str(folder / "model.ckpt-0"))
            output = sess.run("output:0", {"x:0": values["x_eval"]})
            losses = []
            for _ in range(3):
                sess.run(train, feed)
                losses.append(sess.run("loss:0", feed))
            return output, losses, sess.run("counter:0"), sess.run("global_step:0")


def _check(folder: Path) -> None:
    values = np.load(folder / "values.npz")
    np.testing.assert_allclose(_frozen_output(folder, values["x_eval"]), values["eval_output"], atol=1e-6)
    np.testing.assert_allclose(_saved_model_output(folder, values["x_eval"]), values["eval_output"], atol=1e-6)
    output, losses, counter, step = _meta_restore_and_train(folder, values)
    np.testing.assert_allclose(output, values["eval_output"], atol=1e-6)
    np.testing.assert_allclose(losses, values["losses"], rtol=2e-5)
    assert (counter, step) == (4.5, 3)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_tensorflow_resource_variable_model_loads_and_trains_as_in_tensorflow(optimizer):
    _check(FIXTURES / f"resource_{optimizer}")


@pytest.mark.slow  # runs real TensorFlow in a subprocess
def test_fixtures_regenerated_by_tensorflow_load_and_train_the_same(tmp_path):
    run_script_in_tf(str(SCRIPT), str(tmp_path))
    for optimizer in OPTIMIZERS:
        _check(tmp_path / f"resource_{optimizer}")


def _handle_graph(op: str, attrs: dict) -> GraphDef:
    graph_def = GraphDef()
    handle = graph_def.node.add(name="v", op="VarHandleOp")
    handle.attr["dtype"].CopyFrom(AttrValue(type=1))
    handle.attr["shape"].shape.dim.add(size=3)
    node = graph_def.node.add(name="use", op=op, input=["v", "v"])
    for key, value in attrs.items():
        node.attr[key].CopyFrom(value)
    return graph_def


@pytest.mark.parametrize("op, attrs, message", [
    ("ResourceScatterMul", {}, "op type 'ResourceScatterMul' of node 'use' is not supported"),
    ("ResourceGather", {"batch_dims": AttrValue(i=1)}, "node 'use': ResourceGather with batch_dims=1"),
])
def test_uncovered_resource_ops_name_node_and_op(op, attrs, message):
    with tf.Graph().as_default():
        with pytest.raises(UnsupportedNodeError, match=message):
            tf.import_graph_def(_handle_graph(op, attrs))


def _node(graph_def: GraphDef, name: str, op: str, inputs=(), **attrs) -> None:
    node = graph_def.node.add(name=name, op=op, input=list(inputs))
    for key, value in attrs.items():
        node.attr[key].CopyFrom(value)


def _float_handle(graph_def: GraphDef, name: str, shared_name: str) -> None:
    shape = AttrValue()
    shape.shape.dim.add(size=2)
    _node(graph_def, name, "VarHandleOp", dtype=AttrValue(type=1), shape=shape,
          shared_name=AttrValue(s=shared_name.encode()))


def test_handles_sharing_a_name_are_one_variable_and_variable_shape_reads_its_shape():
    """Two VarHandleOps of one shared_name are one variable (TF's resource manager); b is its own."""
    graph_def = GraphDef()
    _float_handle(graph_def, "a", "w")
    _float_handle(graph_def, "a_again", "w")
    _float_handle(graph_def, "b", "other")
    value = AttrValue()
    value.tensor.CopyFrom(make_tensor_proto(np.array([1.5, -2.0], np.float32)))
    _node(graph_def, "value", "Const", dtype=AttrValue(type=1), value=value)
    for handle in ("a", "b"):
        _node(graph_def, f"init_{handle}", "AssignVariableOp", [handle, "value"], dtype=AttrValue(type=1))
    _node(graph_def, "add", "AssignAddVariableOp", ["a_again", "value"], dtype=AttrValue(type=1))
    for handle in ("a", "b"):
        _node(graph_def, f"read_{handle}", "ReadVariableOp", [handle], dtype=AttrValue(type=1))
    _node(graph_def, "shape", "VariableShape", ["a_again"], out_type=AttrValue(type=9))
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run(["init_a", "init_b"])
            sess.run("add")
            a, b, shape = sess.run(["read_a:0", "read_b:0", "shape:0"])
    np.testing.assert_array_equal(a, [3.0, -4.0])
    np.testing.assert_array_equal(b, [1.5, -2.0])
    assert shape.tolist() == [2] and shape.dtype == np.int64
