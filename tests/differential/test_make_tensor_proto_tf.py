"""tf.make_tensor_proto against real TensorFlow: for Python values, numpy arrays, dtypes and shapes
the proto read back (tf.make_ndarray) has TF's dtype, shape and values; bad arguments raise TF's
error class."""

import pytest

from tests.tf_oracle import assert_same_outputs, require_tf, run_in_tf, run_in_tftk

SNIPPET = """
proto = tf.make_tensor_proto({call})
value = tf.make_ndarray(proto)
outputs = {{'value': value if value.dtype != object else value.astype(bytes), 'dtype': np.array(proto.dtype),
           'shape': np.array([d.size for d in proto.tensor_shape.dim], np.int64)}}
"""

CALLS = {
    "float_list": "[[1.5, 2.0], [3.0, -4.25]]",
    "int_list": "[1, 2, 3]",
    "large_int": "[2**40, 1]",
    "bool_scalar": "True",
    "strings": "[b'ab', b'c']",
    "numpy_float64": "np.arange(6, dtype=np.float64).reshape(2, 3)",
    "numpy_cast": "np.arange(4, dtype=np.float64), dtype=tf.float16",
    "dtype_int64": "[1, 2], dtype=tf.int64",
    "shape_reshapes": "np.arange(6, dtype=np.float32), shape=[3, 2]",
    "shape_pads_last_value": "[1.0, 2.0], shape=[2, 3]",
    "scalar_fills_shape": "7, shape=[2, 2]",
    "broadcast_one": "[5], shape=[3], allow_broadcast=True",
    "verify_shape_ok": "np.zeros((2, 2), np.int32), shape=[2, 2], verify_shape=True",
    "too_many": "[1, 2, 3], shape=[2]",
    "verify_shape_wrong": "[1, 2, 3, 4], shape=[2, 2], verify_shape=True",
    "broadcast_wrong": "[1, 2], shape=[3], allow_broadcast=True",
    "both_flags": "[1], shape=[1], verify_shape=True, allow_broadcast=True",
    "none": "None",
    "incompatible": "['a', 'b'], dtype=tf.float32",
    "float_for_int": "[1, 2.5], dtype=tf.int32",
    "int_for_float": "[1, 2], dtype=tf.float64",
    "bytes_for_string": "[[b'x'], ['y']], dtype=tf.string",
}
CASES = {name: SNIPPET.format(call=call) for name, call in CALLS.items()}


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    return run_in_tf({name: (source, {}) for name, source in CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_make_tensor_proto_equals_tensorflow(tf_results, name):
    expected, got = tf_results[name], run_in_tftk(CASES[name], {})
    assert got.error == expected.error, (got.message, expected.message)
    if expected.error is None:
        assert_same_outputs(expected, got)
