"""tf.io.serialize_tensor / parse_tensor against real TF: the same bytes, the same round trip, the same errors."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf, run_in_tftk

VALUES = {
    "float32_scalar": "np.float32(1.5)",
    "int32_matrix": "np.arange(6, dtype=np.int32).reshape(2, 3)",
    "int64_vector": "np.array([-1, 2**40], np.int64)",
    "uint8": "np.array([[0, 255]], np.uint8)",
    "float16": "np.array([1.5, -0.25], np.float16)",
    "float64_empty": "np.zeros((0, 2), np.float64)",
    "complex64": "np.array([1 + 2j, -3j], np.complex64)",
    "bool": "np.array([True, False, True])",
    "strings": "np.array([b'ab', b'', b'\\xff\\x00'])",
}

ROUND_TRIP = """
x = tf.constant({value})
serialized = tf.io.serialize_tensor(x)
back = tf.io.parse_tensor(serialized, x.dtype)
with tf.Session() as sess:
    raw, value = sess.run([serialized, back])
outputs = {{"bytes": np.frombuffer(raw, np.uint8), "value": value.astype("S") if value.dtype == object else value,
           "static_rank": np.array(-1 if back.shape.ndims is None else back.shape.ndims)}}
"""

ERRORS = {
    "type_mismatch": "tf.io.parse_tensor(tf.io.serialize_tensor(np.float32(1.0)), tf.float64)",
    "not_a_proto": "tf.io.parse_tensor(tf.constant(b'garbage\\xff'), tf.float32)",
    "not_a_scalar": "tf.io.parse_tensor(tf.constant([b'', b'']), tf.float32)",
}

ERROR_SNIPPET = """
with tf.Session() as sess:
    outputs = {{"value": sess.run({expression})}}
"""


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_serialize_and_parse_match_tensorflow():
    cases = {name: (ROUND_TRIP.format(value=value), {}) for name, value in VALUES.items()}
    oracle = run_in_tf(cases)
    for name in VALUES:
        expected, got = both_succeeded(oracle, cases, name)
        assert got.outputs["bytes"].tobytes() == expected.outputs["bytes"].tobytes(), name
        assert got.outputs["value"].dtype == expected.outputs["value"].dtype, name
        np.testing.assert_array_equal(got.outputs["value"], expected.outputs["value"], err_msg=name)
        assert int(got.outputs["static_rank"]) == int(expected.outputs["static_rank"]) == -1, name


# (a SparseTensor, another of the same rank and dtype to deserialize beside it)
SPARSE = {
    "float_matrix": ("tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [1.0, 2.0, 3.0], [3, 4])",
                     "tf.SparseTensor([[0, 5]], [9.0], [1, 6])"),
    "int_rank3": ("tf.SparseTensor([[0, 1, 1], [1, 0, 2]], tf.constant([7, -8], tf.int64), [2, 2, 3])",
                  "tf.SparseTensor([[0, 0, 0]], tf.constant([1], tf.int64), [1, 1, 1])"),
    "string_empty_row": ("tf.SparseTensor([[0, 0], [2, 1]], [b'a', b'bc'], [3, 2])",
                         "tf.SparseTensor([[1, 3]], [b'z'], [2, 4])"),
    "no_entries": ("tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0], tf.float64), [2, 5])",
                   "tf.SparseTensor([[0, 0]], tf.constant([2.5], tf.float64), [1, 1])"),
}

SPARSE_SNIPPET = """
sp, other = {sparse}, {other}
one, many = tf.io.serialize_sparse(sp), tf.io.serialize_many_sparse(sp)
stacked = tf.io.deserialize_many_sparse(tf.stack([one, tf.io.serialize_sparse(other)]), sp.values.dtype)
split = tf.io.deserialize_many_sparse(many, sp.values.dtype)
with tf.Session() as sess:
    one_v, many_v, stacked_v, split_v = sess.run([one, many, stacked, split])
as_bytes = lambda rows: np.array([np.frombuffer(r, np.uint8).tobytes().hex() for r in np.asarray(rows).reshape(-1)])
fix = lambda v: v.astype("S") if v.dtype == object else v
outputs = {{"one": as_bytes(one_v), "many": as_bytes(many_v), "many_shape": np.array(many_v.shape),
           "stacked_indices": stacked_v.indices, "stacked_values": fix(stacked_v.values),
           "stacked_shape": stacked_v.dense_shape, "split_indices": split_v.indices,
           "split_values": fix(split_v.values), "split_shape": split_v.dense_shape}}
"""

SPARSE_ERRORS = {
    "many_rank1": "tf.io.serialize_many_sparse(tf.SparseTensor([[1]], [1.0], [3]))",
    "deserialize_wrong_dtype": "tf.io.deserialize_many_sparse(tf.io.serialize_many_sparse("
                               "tf.SparseTensor([[0, 0]], [1.0], [1, 1])), tf.int32)",
    "deserialize_garbage": "tf.io.deserialize_many_sparse(tf.constant([[b'x', b'', b'']]), tf.float32)",
}


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_sparse_serialization_matches_tensorflow():
    cases = {name: (SPARSE_SNIPPET.format(sparse=sparse, other=other), {}) for name, (sparse, other) in SPARSE.items()}
    oracle = run_in_tf(cases)
    for name in SPARSE:
        expected, got = both_succeeded(oracle, cases, name)
        assert sorted(got.outputs) == sorted(expected.outputs)
        for key, value in expected.outputs.items():
            assert got.outputs[key].dtype == value.dtype, (name, key)
            np.testing.assert_array_equal(got.outputs[key], value, err_msg=f"{name}: {key}")


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_errors_match_tensorflow():
    errors = {**ERRORS, **SPARSE_ERRORS}
    cases = {name: (ERROR_SNIPPET.format(expression=expression), {}) for name, expression in errors.items()}
    oracle = run_in_tf(cases)
    for name in errors:
        got = run_in_tftk(*cases[name])
        assert oracle[name].error == got.error == "InvalidArgumentError", (name, oracle[name].message, got.message)
    assert "Type mismatch between parsed tensor" in run_in_tftk(*cases["type_mismatch"]).message
    assert "Could not parse `serialized` as TensorProto" in run_in_tftk(*cases["not_a_proto"]).message


@pytest.mark.parametrize("shape", [[2], [1, 2], [None, 4]])
def test_deserialize_rejects_a_matrix_without_3_columns_when_built(shape):
    """TF's shape function raises ValueError while building; so does tftk."""
    import tftk as tf
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="3 columns"):
            tf.io.deserialize_many_sparse(tf.placeholder(tf.string, shape), tf.float32)
