"""SavedModels written by TF 2's object-based `tf.saved_model.save` load in tftk: the signatures give the
outputs TF's own TF1 loader gives (fixtures by tests/fixtures/formats/make_tf2_saved_model_fixtures.py),
the variables come back from the object-based checkpoint keys the traced restore function names, and
the Saver that `import_meta_graph` returns writes checkpoints under those keys that load again."""

import shutil
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.formats.function_saver import function_saver
from tftk.formats.saved_model.loader import read_saved_model

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
MODELS = ["tf2_module", "tf2_keras2"]


def _values(model):
    values = np.load(FIXTURES / model / "values.npz")
    feeds = {k[3:]: values[k] for k in values.files if k.startswith("in_")}
    return feeds, {k[4:]: values[k] for k in values.files if k.startswith("out_")}


def _run_signature(sess, meta, feeds, prefix=""):
    signature = meta.signature_def["serving_default"]
    fetches = {key: prefix + info.name for key, info in signature.outputs.items()}
    return sess.run(fetches, {prefix + signature.inputs[key].name: value for key, value in feeds.items()})


def _assert_outputs(got, expected):
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        assert got[key].dtype == value.dtype, key
        np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-7, err_msg=key)


@pytest.mark.parametrize("model", MODELS)
def test_signature_gives_tensorflows_outputs(model):
    feeds, expected = _values(model)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(FIXTURES / model))
        _assert_outputs(_run_signature(sess, meta, feeds), expected)


def test_restore_function_names_the_object_based_keys():
    meta = read_saved_model(FIXTURES / "tf2_module").meta_graphs[0]
    saver = function_saver(meta.graph_def, meta.saver_def)
    assert sorted(saver.keys) == sorted(f"{path}/.ATTRIBUTES/VARIABLE_VALUE" for path in
                                        ["hidden/kernel", "hidden/bias", "out/kernel", "out/bias", "offset"])
    assert {meta.saver_def.restore_op_name, "saver_filename"} <= saver.replaced


def test_a_tf1_saver_graph_has_no_function_saver():
    meta = read_saved_model(FIXTURES / "resource_gd" / "saved_model").meta_graphs[0]
    assert function_saver(meta.graph_def, meta.saver_def) is None


@pytest.mark.parametrize("scope", ["", "imported"])
def test_saver_round_trip_under_the_same_keys(tmp_path, scope):
    feeds, expected = _values("tf2_module")
    meta = read_saved_model(FIXTURES / "tf2_module").meta_graphs[0]
    variables = str(FIXTURES / "tf2_module" / "variables" / "variables")
    prefix = f"{scope}/" if scope else ""
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        saver = tf.train.import_meta_graph(meta, import_scope=scope or None)
        saver.restore(sess, variables)
        sess.run(graph.get_collection("saved_model_main_op"))  # the lookup table's initializer
        _assert_outputs(_run_signature(sess, meta, feeds, prefix), expected)
        written = saver.save(sess, str(tmp_path / "again"))
    keys = function_saver(meta.graph_def, meta.saver_def).keys
    assert sorted(name for name, _ in tf.train.list_variables(written)) == sorted(keys)
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        tf.train.import_meta_graph(meta, import_scope=scope or None).restore(sess, written)
        sess.run(graph.get_collection("saved_model_main_op"))
        _assert_outputs(_run_signature(sess, meta, feeds, prefix), expected)


def test_tf1_lookup_table_ops_from_a_meta_graph():
    values = np.load(FIXTURES / "tf1_table" / "values.npz")
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        tf.train.import_meta_graph(str(FIXTURES / "tf1_table" / "graph.meta"))
        ids, size = graph.get_tensor_by_name("ids:0"), graph.get_tensor_by_name("size:0")
        with pytest.raises(tf.errors.FailedPreconditionError, match="Table not initialized"):
            sess.run(size)
        sess.run(tf.tables_initializer())
        got_ids, got_size = sess.run([ids, size], {"words:0": values["words"]})
    np.testing.assert_array_equal(got_ids, values["ids"])
    assert got_size == values["size"] == 3


def test_tf1_saved_model_reads_its_vocabulary_from_assets(tmp_path):
    """TF's simple_save copied the vocabulary file into assets/ (the original is gone): the init op is
    fed the asset's new path, and the feature columns give TF's output."""
    values = np.load(FIXTURES / "tf1_vocab" / "values.npz")
    moved = tmp_path / "elsewhere"
    shutil.copytree(FIXTURES / "tf1_vocab", moved)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(moved))
        got = _run_signature(sess, meta, {"color": values["color"], "shape": values["shape"]})
    np.testing.assert_allclose(got["output"], values["output"], rtol=1e-6)


def test_tftk_saved_model_carries_its_text_file_assets(tmp_path):
    vocabulary = tmp_path / "colors.txt"
    vocabulary.write_text("red\ngreen\nblue\n")
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        words = tf.placeholder(tf.string, [None], name="words")
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(vocabulary), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        tf.saved_model.simple_save(sess, str(tmp_path / "model"), {"words": words},
                                   {"ids": table.lookup(words)}, legacy_init_op=tf.tables_initializer())
    vocabulary.unlink()
    assert (tmp_path / "model" / "assets" / "colors.txt").read_text() == "red\ngreen\nblue\n"
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "model"))
        assert [a.filename for a in meta.asset_file_def] == ["colors.txt"]
        got = _run_signature(sess, meta, {"words": np.array([b"blue", b"pink", b"red"])})
    np.testing.assert_array_equal(got["ids"], [2, -1, 0])
