"""tf.saved_model's constants, Builder, contains_saved_model and main_op, compared with real TF.

Every constant equals TensorFlow's value; contains_saved_model answers as TF does for folders
written by TF (the fixtures) and by tftk; main_op / main_op_with_restore run the same
initialise-then-restore sequence, in a session and inside a SavedModel loaded by both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf

from tests.tf_oracle import both_succeeded, run_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "formats"

CONSTANTS = ["ASSETS_DIRECTORY", "ASSETS_KEY", "CLASSIFY_INPUTS", "CLASSIFY_METHOD_NAME", "CLASSIFY_OUTPUT_CLASSES",
             "CLASSIFY_OUTPUT_SCORES", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
             "GPU", "LEGACY_INIT_OP_KEY", "MAIN_OP_KEY", "PREDICT_INPUTS", "PREDICT_METHOD_NAME", "PREDICT_OUTPUTS",
             "REGRESS_INPUTS", "REGRESS_METHOD_NAME", "REGRESS_OUTPUTS", "SAVED_MODEL_FILENAME_PB",
             "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION", "SERVING", "TPU", "TRAINING",
             "VARIABLES_DIRECTORY", "VARIABLES_FILENAME"]

CONSTANTS_SNIPPET = f"""
outputs = {{n: np.array(getattr(tf.saved_model, n)) for n in {CONSTANTS!r}}}
outputs["Builder_is_SavedModelBuilder"] = np.array(tf.saved_model.Builder is tf.saved_model.builder.SavedModelBuilder)
"""

# Two variables: a global one the Saver checkpoints, a local one only an initialiser sets.
VARIABLES = """
v = tf.Variable(3.0, name="v")
loc = tf.Variable(5.0, name="loc", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
"""

MAIN_OP_SNIPPET = VARIABLES + """
op = tf.saved_model.main_op.main_op()
with tf.Session() as sess:
    sess.run(op)
    sess.run([tf.assign(v, 7.0), tf.assign(loc, 9.0)])
    before = sess.run([v, loc])
    sess.run(op)
    outputs = {"before": before, "after": sess.run([v, loc]), "type": np.array(op.type)}
"""

MAIN_OP_WITH_RESTORE_SNIPPET = VARIABLES + """
import os, tempfile
saver = tf.train.Saver([v])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(tf.assign(v, 7.0))
    path = saver.save(sess, os.path.join(tempfile.mkdtemp(), "ckpt"))
op = tf.saved_model.main_op_with_restore(tf.get_default_graph().get_operation_by_name(saver.saver_def.restore_op_name))
with tf.Session() as sess:
    sess.run(op, {saver.saver_def.filename_tensor_name: path})
    outputs = {"values": sess.run([v, loc]), "control": np.array(sorted(i.name for i in op.control_inputs)),
               "type": np.array(op.type)}
"""

LOAD_SNIPPET = """
with tf.Session() as sess:
    meta = tf.saved_model.loader.load(sess, [tf.saved_model.SERVING], str(inputs["path"]))
    graph = tf.get_default_graph()
    outputs = {"v": sess.run("v:0"), "loc": sess.run("loc:0"),
               "main_ops": np.array(len(graph.get_collection(tf.saved_model.MAIN_OP_KEY))),
               "y": sess.run(meta.signature_def["serving_default"].outputs["y"].name,
                             {meta.signature_def["serving_default"].inputs["x"].name: inputs["x"]})}
"""

CONTAINS_SNIPPET = 'outputs = {"contains": np.array(tf.saved_model.contains_saved_model(str(inputs["path"])))}'


def _write_tftk_saved_model(folder: Path, as_text: bool = False) -> None:
    """A tftk SavedModel whose main op re-initialises `v` (trained to 7.0) and initialises `loc`."""
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        loc = tf.Variable(5.0, name="loc", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.add(x * v, loc, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign(v, 7.0))
            builder = tf.saved_model.Builder(str(folder))
            signature = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(sess, [tf.saved_model.SERVING],
                                                 {tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
                                                 main_op=tf.saved_model.main_op.main_op())
            builder.save(as_text=as_text)


def test_constants_equal_tensorflows():
    cases = {"constants": (CONSTANTS_SNIPPET, {})}
    expected, got = both_succeeded(run_in_tf(cases), cases, "constants")
    assert sorted(got.outputs) == sorted(expected.outputs)
    for name, value in expected.outputs.items():
        assert got.outputs[name].dtype.kind == value.dtype.kind and got.outputs[name] == value, name


@pytest.mark.slow  # real TensorFlow in a subprocess, three sessions each side
def test_main_op_and_main_op_with_restore_match_tensorflow():
    cases = {"main_op": (MAIN_OP_SNIPPET, {}), "with_restore": (MAIN_OP_WITH_RESTORE_SNIPPET, {})}
    oracle = run_in_tf(cases)
    expected, got = both_succeeded(oracle, cases, "main_op")
    np.testing.assert_array_equal(expected.outputs["before"], [7.0, 9.0])
    for key in ("before", "after", "type"):
        np.testing.assert_array_equal(got.outputs[key], expected.outputs[key])
    np.testing.assert_array_equal(got.outputs["after"], [3.0, 5.0])  # initialisers ran again
    expected, got = both_succeeded(oracle, cases, "with_restore")
    # TF's op depends on the init group and the restore op but orders neither before the other,
    # so v ends up restored (7) or re-initialised (3); loc, which only an initialiser sets, is 5.
    for result in (expected, got):
        assert float(result.outputs["values"][0]) in (3.0, 7.0) and float(result.outputs["values"][1]) == 5.0
    np.testing.assert_array_equal(expected.outputs["control"], ["group_deps", "save/restore_all"])
    for key in ("control", "type"):
        np.testing.assert_array_equal(got.outputs[key], expected.outputs[key])


@pytest.mark.parametrize("given, message", [
    ("no_such_op", "the default graph has no op named 'no_such_op'"),
])
def test_main_op_with_restore_by_name(given, message):
    """tftk takes the documented op *name* too (TF's group() rejects a str); an unknown name says so."""
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        saver = tf.train.Saver([v])
        op = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
        assert sorted(i.name for i in op.control_inputs)[-1] == saver.saver_def.restore_op_name
        with pytest.raises(ValueError, match=message):
            tf.saved_model.main_op_with_restore(given)


@pytest.mark.slow  # real TensorFlow loads the tftk folder
@pytest.mark.parametrize("as_text", [False, True])
def test_saved_model_with_main_op_loads_alike(tmp_path, as_text):
    folder = tmp_path / "sm"
    _write_tftk_saved_model(folder, as_text)
    inputs = {"path": np.array(str(folder)), "x": np.array([1.0, 2.0], np.float32)}
    cases = {"load": (LOAD_SNIPPET, inputs)}
    expected, got = both_succeeded(run_in_tf(cases), cases, "load")
    # TF's loader restores v = 7.0, then the main op re-initialises it to 3.0 and sets loc = 5.0
    found = (float(expected.outputs["v"]), float(expected.outputs["loc"]), int(expected.outputs["main_ops"]))
    assert found == (3.0, 5.0, 1)
    for key, value in expected.outputs.items():
        np.testing.assert_array_equal(got.outputs[key], value)


@pytest.mark.slow  # real TensorFlow answers for the same folders
def test_contains_saved_model_matches_tensorflow(tmp_path):
    _write_tftk_saved_model(tmp_path / "tftk_pb")
    _write_tftk_saved_model(tmp_path / "tftk_pbtxt", as_text=True)
    (tmp_path / "empty").mkdir()
    (tmp_path / "chunked").mkdir()
    (tmp_path / "chunked" / "saved_model.cpb").write_bytes(b"")
    folders = {"tf_written": FIXTURES / "mlp" / "saved_model", "tftk_pb": tmp_path / "tftk_pb",
               "tftk_pbtxt": tmp_path / "tftk_pbtxt", "variables_only": tmp_path / "tftk_pb" / "variables",
               "empty": tmp_path / "empty", "missing": tmp_path / "missing", "chunked": tmp_path / "chunked"}
    cases = {name: (CONTAINS_SNIPPET, {"path": np.array(str(path))}) for name, path in folders.items()}
    oracle = run_in_tf(cases)
    answers = {}
    for name in folders:
        expected, got = both_succeeded(oracle, cases, name)
        assert bool(got.outputs["contains"]) == bool(expected.outputs["contains"]), name
        answers[name] = bool(got.outputs["contains"])
    assert answers == {"tf_written": True, "tftk_pb": True, "tftk_pbtxt": True, "variables_only": False,
                       "empty": False, "missing": False, "chunked": True}


def test_loading_a_chunked_saved_model_says_tftk_cannot_read_it(tmp_path):
    (tmp_path / "saved_model.cpb").write_bytes(b"")
    assert tf.saved_model.contains_saved_model(str(tmp_path))
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(ValueError, match="saved_model.cpb, a chunked SavedModel .* tftk cannot read"):
            tf.saved_model.loader.load(sess, ["serve"], str(tmp_path))
