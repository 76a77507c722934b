"""Training graphs written as TF ops only: gradient helpers as TF's compositions, TF's attrs and
input order, and tftk's importer reading those compositions back to the same values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats import op_signatures
from tftk.formats.functions import graph_library

from tests.differential import training_models

TF_TYPES = set(json.loads((Path(op_signatures.__file__).with_name("tf_op_signatures.json")).read_text()))


@pytest.mark.parametrize("name", ["softmax_regression", "mlp_momentum", "cnn_adam", "deep_mnist", "sliced_rmsprop",
                                  "mixed_adagrad", "static_lstm", "static_gru", "lstm_adam", "gru_adam"])
def test_training_graph_has_only_tensorflow_op_types(name):
    with tf.Graph().as_default():
        training_models.MODELS[name](tf)
        tf.train.Saver()
        graph_def = tf.train.export_meta_graph().graph_def
    assert {n.op for n in graph_def.node} <= TF_TYPES
    assert {n.op for f in graph_library(graph_def).function for n in f.node_def} <= TF_TYPES  # loop bodies
    tftk_only = [n.name for n in graph_def.node if "_tftk_output_types" in n.attr and "_tftk_attrs" not in n.attr]
    assert tftk_only == []


def _x(shape, seed=0):
    return np.random.RandomState(seed).rand(*shape).astype(np.float64) + 0.5


# (what, function of x building a scalar, x's static shape as built, fed value)
HELPER_CASES = [
    ("SumToShape", lambda x: tf.reduce_sum(tf.square(x + tf.constant(np.ones((4, 3, 2))))), [3, 2], _x((3, 2))),
    ("SumToShapeOf", lambda x: tf.reduce_sum(x * tf.constant(np.arange(6.0).reshape(3, 2))), [None, 2], _x((3, 2))),
    ("ExpandReduced", lambda x: tf.reduce_sum(tf.square(tf.reduce_sum(x, axis=[0, 2]))), [2, 3, 4], _x((2, 3, 4))),
    ("ExpandReduced_negative", lambda x: tf.reduce_sum(tf.square(tf.reduce_max(x, axis=-1))), None, _x((2, 5))),
    ("ReducedCount", lambda x: tf.reduce_mean(tf.square(tf.reduce_mean(x, axis=1))), [None, 4], _x((3, 4))),
    ("ReshapeLike", lambda x: tf.reduce_sum(tf.square(tf.reshape(x, [-1]))), [None, 3], _x((2, 3))),
    ("SumKeep_Max", lambda x: tf.reduce_sum(tf.reduce_max(x * x, axis=0)), [3, 2], _x((3, 2))),
    ("MaxPoolGrad", lambda x: tf.reduce_sum(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME") ** 2),
     [None, 4, 4, 1], _x((2, 4, 4, 1))),
    ("MaximumMask_MinimumMask", lambda x: tf.reduce_sum(tf.clip_by_value(x, 0.8, 1.2) * tf.maximum(x, 1.0)),
     [None, 3], _x((4, 3))),
    ("SigmoidCrossEntropyWithLogits", lambda x: tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.constant(np.eye(3)[[0, 2, 1, 0]]), logits=(x - 1.0) * 5.0)), [4, 3], _x((4, 3))),
    ("ConcatGradSlice", lambda x: tf.reduce_sum(tf.concat([x * 2.0, x, tf.square(x)], 1) ** 2), [None, 3], _x((2, 3))),
    ("Split_SplitV", lambda x: tf.reduce_sum(tf.split(x, 2, axis=1)[1] ** 2 + tf.split(x, [2, -1], axis=1)[1] ** 3),
     [None, 4], _x((3, 4))),
]


@pytest.mark.parametrize("what, build, shape, value", HELPER_CASES, ids=[c[0] for c in HELPER_CASES])
def test_gradient_helpers_read_back_from_their_tensorflow_form(what, build, shape, value):
    """The exported GraphDef (TF ops only) imported into a fresh tftk graph gives the same gradient."""
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float64, shape, name="x")
        (grad,) = tf.gradients(build(x), [x])
        with tf.Session() as sess:
            expected = sess.run(grad, {x: value})
        graph_def = graph.as_graph_def()
    assert {n.op for n in graph_def.node} <= TF_TYPES
    with tf.Graph().as_default():
        x2, grad2 = tf.import_graph_def(graph_def, return_elements=["x:0", grad.name], name="")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad2, {x2: value}), expected, rtol=1e-12)


def test_optimizer_inputs_are_written_in_tensorflow_order_and_read_back():
    """ApplyMomentum is (var, accum, lr, grad, momentum) in TF, (var, accum, lr, momentum, grad) in tftk."""
    with tf.Graph().as_default() as graph:
        w = tf.Variable([1.0, 2.0], name="w")
        train = tf.train.MomentumOptimizer(0.5, 0.25).minimize(tf.reduce_sum(w * w), name="train")
        graph_def = graph.as_graph_def()
    node = next(n for n in graph_def.node if n.op == "ApplyMomentum")
    assert node.input[3].startswith("gradients/") and node.input[4].endswith("/momentum")
    assert list(node.attr["_tftk_inputs"].list.i) == [0, 1, 2, 4, 3]
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            sess.run(["w/Assign", "w/Momentum/Assign"])
            sess.run(train.name)
            sess.run(train.name)
            # g = 2w; accum = 0.25 accum + g; w -= 0.5 accum: w = [0, 0] after one step, then
            # accum = 0.25 * [2, 4] + 0 and w = -0.5 * accum
            np.testing.assert_allclose(sess.run("w:0"), [-0.25, -0.5])


@pytest.mark.parametrize("key", [
    (slice(None), -1), (1, slice(None, None, -1)), (Ellipsis, 0), (slice(1, 3), None, slice(None, None, 2)),
    (slice(-2, None),)], ids=["last_column", "reversed_row", "ellipsis", "new_axis_stride", "negative_start"])
def test_strided_slice_written_with_tensorflow_masks_and_read_back(key):
    value = np.arange(24.0).reshape(4, 6)
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float64, [None, 6], name="x")
        y = tf.identity(x[key] * 2.0, name="y")
        (grad,) = tf.gradients(tf.reduce_sum(y * y), [x])
        graph_def = graph.as_graph_def()
        with tf.Session() as sess:
            expected = sess.run([y, grad], {x: value})
    np.testing.assert_array_equal(expected[0], value[key] * 2.0)
    assert {n.op for n in graph_def.node} <= TF_TYPES
    with tf.Graph().as_default():
        x2, y2, grad2 = tf.import_graph_def(graph_def, return_elements=["x:0", "y:0", grad.name], name="")
        with tf.Session() as sess:
            for got, want in zip(sess.run([y2, grad2], {x2: value}), expected):
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["softmax_regression", "mlp_momentum", "cnn_adam", "sliced_rmsprop",
                                  "mixed_adagrad", "static_lstm", "static_gru", "lstm_adam", "gru_adam"])
def test_tftk_resumes_training_from_its_own_tensorflow_form_meta_graph(tmp_path, name):
    """The .meta holds TF's ops only; tftk's importer maps them back and trains on with the same losses."""
    batches = training_models.batches(name, 3)
    with tf.Graph().as_default():
        feeds, loss, train_op = training_models.MODELS[name](tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, dict(zip(feeds, batches[0])))
            prefix = saver.save(sess, str(tmp_path / "model.ckpt"))
            expected = []
            for batch in batches[1:]:
                sess.run(train_op, dict(zip(feeds, batch)))
                expected.append(sess.run(loss, dict(zip(feeds, batch))))
    names = [t.name for t in feeds]
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            got = []
            for batch in batches[1:]:
                feed = {graph.get_tensor_by_name(n): v for n, v in zip(names, batch)}
                sess.run(train_op.name, feed)
                got.append(sess.run(loss.name, feed))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)
