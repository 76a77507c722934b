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


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_parse_errors_match_tensorflow():
    cases = {name: (ERROR_SNIPPET.format(expression=expression), {}) for name, expression in ERRORS.items()}
    oracle = run_in_tf(cases)
    for name in ERRORS:
        got = run_in_tftk(*cases[name])
        assert oracle[name].error == got.error == "InvalidArgumentError", (name, oracle[name], got.message)
    assert "Type mismatch between parsed tensor" in run_in_tftk(*cases["type_mismatch"]).message
    assert "Could not parse `serialized` as TensorProto" in run_in_tftk(*cases["not_a_proto"]).message
