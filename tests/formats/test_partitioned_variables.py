"""Partitioned variables: TF's partitioners and part layout, checkpoints with TF's slice specs
that real TF restores, and TF's partitioned checkpoints read back into any partitioning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tftk.proto.tensorflow import MetaGraphDef

from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

FIXTURE = Path(__file__).parent.parent / "fixtures" / "formats" / "partitioned"
VALUE = np.arange(30 * 4, dtype=np.float32).reshape(30, 4)

# (partitioner expression, shape, dtype): the parts TF makes, their names, shapes and slice specs
LAYOUTS = {
    "fixed_3": ("tf.fixed_size_partitioner(3)", [30, 4], "float32"),
    "fixed_uneven": ("tf.fixed_size_partitioner(4)", [10, 3], "float32"),
    "fixed_axis1": ("tf.fixed_size_partitioner(5, axis=1)", [2, 3], "float32"),
    "min_max": ("tf.min_max_variable_partitioner(max_partitions=4, min_slice_size=256)", [100, 8], "float32"),
    "min_max_one": ("tf.min_max_variable_partitioner(max_partitions=4)", [100, 8], "float32"),
    "min_max_string": ("tf.min_max_variable_partitioner(max_partitions=8, min_slice_size=64)", [20], "string"),
    "axis_size": ("tf.variable_axis_size_partitioner(max_shard_bytes=100)", [50, 3], "float64"),
    "axis_size_capped": ("tf.variable_axis_size_partitioner(100, max_shards=3)", [50, 3], "float64"),
}
SNIPPET = """
partitioner = {partitioner}
outputs = {{"partitions": np.array(partitioner(shape=tf.TensorShape({shape}), dtype=tf.{dtype}))}}
if "{dtype}" != "string":
    v = tf.get_variable("v", {shape}, dtype=tf.{dtype}, partitioner=partitioner, initializer=tf.zeros_initializer())
    parts = list(v)
    outputs.update({{"names": np.array([p.op.name for p in parts]),
                    "shapes": np.array([p.shape.as_list() for p in parts]),
                    "specs": np.array([p._save_slice_info.spec for p in parts]),
                    "whole": np.array(tf.convert_to_tensor(v).shape.as_list())}})
"""
CASES = {name: (SNIPPET.format(partitioner=p, shape=shape, dtype=dtype), {})
         for name, (p, shape, dtype) in LAYOUTS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.slow  # real TensorFlow in a subprocess
@pytest.mark.parametrize("name", sorted(CASES))
def test_partitioner_layout_agrees_with_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))


def _rows(shape, dtype=None, partition_info=None):
    """Each part gets its own rows of VALUE (as the TF fixture's maker does)."""
    start = partition_info.var_offset[0] if partition_info else 0
    return tf.constant(VALUE[start:start + shape[0]])


def _emb(parts):
    if parts is None:
        return tf.get_variable("emb", [30, 4], initializer=tf.zeros_initializer())
    return tf.get_variable("emb", [30, 4], initializer=tf.zeros_initializer(),
                           partitioner=tf.fixed_size_partitioner(parts))


@pytest.mark.parametrize("parts", [3, 2, 5, None])
def test_tensorflow_partitioned_checkpoint_restores_into_any_partitioning(parts):
    with tf.Graph().as_default():
        emb = _emb(parts)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, str(FIXTURE / "model.ckpt"))
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), np.load(FIXTURE / "emb.npy"))


@pytest.mark.parametrize("write_version", [2, 1])
def test_partitioned_round_trip_and_slice_entries(tmp_path, write_version):
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [30, 4], initializer=_rows, partitioner=tf.fixed_size_partitioner(3))
        assert [p.op.name for p in emb] == ["emb/part_0", "emb/part_1", "emb/part_2"]
        saver = tf.train.Saver(write_version=write_version)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = saver.save(sess, str(tmp_path / "model.ckpt"))
            sess.run([p.assign(tf.zeros_like(p)) for p in emb])
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(emb)), VALUE)
    assert tf.train.list_variables(prefix) == [("emb", [30, 4])]
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "emb"), VALUE)
    if write_version == 2:
        meta = MetaGraphDef.FromString(Path(prefix + ".meta").read_bytes())
        specs = next(n for n in meta.graph_def.node if n.name == "save/SaveV2/shape_and_slices")
        assert list(specs.attr["value"].tensor.string_val) == [b"30 4 0,10:0,4", b"30 4 10,10:0,4", b"30 4 20,10:0,4"]


def test_partitioned_variable_reuse_and_bad_requests():
    with tf.Graph().as_default():
        emb = _emb(3)
        with tf.variable_scope("", reuse=True):
            assert _emb(3) is emb
        with pytest.raises(ValueError, match="Partitioned variable with name emb already exists"):
            _emb(3)
        with pytest.raises(ValueError, match="Can only slice a variable along one dimension"):
            tf.get_variable("two_axes", [4, 4], partitioner=lambda shape, dtype: [2, 2])
        with pytest.raises(ValueError, match="needs an initializer callable"):
            tf.get_variable("const_init", [4, 2], initializer=np.ones((4, 2), np.float32),
                            partitioner=tf.fixed_size_partitioner(2))
        with pytest.raises(ValueError, match="must be fully defined"):
            tf.get_variable("unknown", [None, 2], partitioner=tf.fixed_size_partitioner(2))


def test_glorot_scales_each_part_by_the_whole_variable():
    """A part's initializer sees the full shape: the parts of [600, 10] are drawn as one [600, 10]."""
    with tf.Graph().as_default():
        emb = tf.get_variable("w", [600, 10], initializer=tf.glorot_uniform_initializer(seed=3),
                              partitioner=tf.fixed_size_partitioner(2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(tf.convert_to_tensor(emb))
    limit = np.sqrt(6.0 / 610)
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.9 * limit


TF_RESTORE = """
prefix = str(inputs["prefix"])
parts = int(inputs["parts"])
partitioner = tf.fixed_size_partitioner(parts) if parts else None
emb = tf.get_variable("emb", [30, 4], initializer=tf.zeros_initializer(), partitioner=partitioner)
with tf.Session() as sess:
    tf.train.Saver().restore(sess, prefix)
    outputs = {"emb": sess.run(tf.convert_to_tensor(emb)),
               "reader": tf.train.load_checkpoint(prefix).get_tensor("emb")}
"""
TF_IMPORT_META = """
prefix = str(inputs["prefix"])
saver = tf.train.import_meta_graph(prefix + ".meta")
with tf.Session() as sess:
    saver.restore(sess, prefix)
    graph = tf.get_default_graph()
    outputs = {"looked_up": sess.run(graph.get_tensor_by_name("looked_up:0"))}
"""


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_tensorflow_restores_tftk_partitioned_checkpoint(tmp_path):
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [30, 4], initializer=_rows, partitioner=tf.fixed_size_partitioner(3))
        tf.nn.embedding_lookup(emb, tf.constant([0, 11, 29]), name="looked_up")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    cases = {f"parts_{n}": (TF_RESTORE, {"prefix": np.array(prefix), "parts": np.array(n)}) for n in (3, 2, 0)}
    cases["import_meta"] = (TF_IMPORT_META, {"prefix": np.array(prefix)})
    results = run_in_tf(cases)
    for name in ("parts_3", "parts_2", "parts_0"):
        assert results[name].error is None, results[name].message
        np.testing.assert_array_equal(results[name].outputs["emb"], VALUE)
        np.testing.assert_array_equal(results[name].outputs["reader"], VALUE)
    assert results["import_meta"].error is None, results["import_meta"].message
    np.testing.assert_array_equal(results["import_meta"].outputs["looked_up"], VALUE[[0, 11, 29]])
