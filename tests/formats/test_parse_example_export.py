"""A SavedModel whose graph parses serialized tf.Examples (the estimators' parsing serving input):
tftk writes TF's ParseExample node, and both tftk and real TensorFlow load it and parse alike —
with several sparse features too, whose outputs TF orders differently from tftk."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import run_in_tf

SPECS = {
    "dense only": {"x": tf.FixedLenFeature([2], tf.float32), "k": tf.FixedLenFeature([], tf.int64, default_value=7)},
    "one sparse": {"x": tf.FixedLenFeature([2], tf.float32), "tags": tf.VarLenFeature(tf.string)},
    "two sparse": {"x": tf.FixedLenFeature([2], tf.float32), "tags": tf.VarLenFeature(tf.string),
                   "ids": tf.VarLenFeature(tf.int64), "w": tf.FixedLenFeature([1], tf.float32, default_value=[0.5])},
}


def _examples() -> list[bytes]:
    rows = [{"x": [1.0, 2.0], "k": [3], "tags": [b"a", b"b"], "ids": [4], "w": [2.0]},
            {"x": [5.0, 6.0], "tags": [b"c"], "ids": [1, 2, 3]}]
    out = []
    for row in rows:
        feature = {}
        for key, values in row.items():
            if isinstance(values[0], float):
                feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
            elif isinstance(values[0], bytes):
                feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
            else:
                feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        out.append(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return out


def _flat(parsed: dict) -> dict:
    """Output name -> tensor: a SparseTensor's three parts as key/indices, key/values, key/shape."""
    flat = {}
    for key, value in parsed.items():
        if isinstance(value, tf.SparseTensor):
            flat.update({f"{key}__indices": value.indices, f"{key}__values": value.values,
                         f"{key}__shape": value.dense_shape})
        else:
            flat[key] = value
    return flat


def _export(path, spec) -> dict:
    """A SavedModel of parse_example(spec) in `path`; returns tftk's parse of the examples."""
    with tf.Graph().as_default(), tf.Session() as session:
        serialized = tf.placeholder(tf.string, [None], name="examples")
        outputs = _flat(tf.parse_example(serialized, spec))
        tf.saved_model.simple_save(session, str(path), {"examples": serialized}, outputs)
        return session.run(outputs, {serialized: _examples()})


@pytest.mark.parametrize("name", sorted(SPECS))
def test_tftk_loads_its_parse_example_export(tmp_path, name):
    expected = _export(tmp_path / "m", SPECS[name])
    with tf.Session(graph=tf.Graph()) as session:
        signature = tf.saved_model.loader.load(session, ["serve"], str(tmp_path / "m")).signature_def["serving_default"]
        got = session.run({k: v.name for k, v in signature.outputs.items()},
                          {signature.inputs["examples"].name: _examples()})
    assert sorted(got) == sorted(expected)
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


@pytest.mark.slow
def test_tensorflow_loads_the_parse_example_export(tmp_path):
    expected = {name: _export(tmp_path / str(i), SPECS[name]) for i, name in enumerate(sorted(SPECS))}
    source = '''
with tf.Session() as session:
    signature = tf.saved_model.loader.load(session, ["serve"], str(inputs["dir"])).signature_def["serving_default"]
    parsed = session.run({k: v.name for k, v in signature.outputs.items()},
                         {signature.inputs["examples"].name: list(inputs["examples"])})
    outputs = {k: v.astype(bytes) if v.dtype == object else v for k, v in parsed.items()}
'''
    cases = {f"m{i}": (source, {"dir": np.array(str(tmp_path / str(i))), "examples": np.array(_examples())})
             for i in range(len(SPECS))}
    results = run_in_tf(cases)
    for i, name in enumerate(sorted(SPECS)):
        result = results[f"m{i}"]
        assert result.error is None, (name, result.message)
        assert sorted(result.outputs) == sorted(expected[name])
        for key, want in expected[name].items():
            got = result.outputs[key]
            if want.dtype == object:
                want = want.astype(bytes)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: {key}")
