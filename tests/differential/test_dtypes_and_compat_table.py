"""Against real TensorFlow: every dtype spelling `as_dtype` takes, and the tf.compat helpers."""

import numpy as np
import pytest

from tests.differential.table import SnippetRow, compare, expand, oracle_fixture
from tests.tf_oracle import run_in_tftk

# Spellings TF1 programs pass as dtypes (strings, Python and numpy types, DTypes), and ones TF refuses.
SPELLINGS = ["'float'", "'double'", "'half'", "'float16'", "'float32'", "'float64'", "'int8'", "'int16'",
             "'int32'", "'int64'", "'uint8'", "'uint16'", "'uint32'", "'uint64'", "'bool'", "'string'",
             "'complex64'", "'complex128'", "'qint8'", "'quint8'", "'qint32'", "float", "bool", "object",
             "np.float16", "np.float32", "np.float64", "np.int8", "np.int16", "np.int32", "np.int64",
             "np.uint8", "np.uint16", "np.uint32", "np.uint64", "np.bool_", "np.complex64",
             "np.complex128", "np.str_", "np.bytes_", "np.object_", "np.dtype('float64')",
             "np.dtype('int32')", "np.dtype('<U3')", "tf.float32", "tf.int64", "tf.string",
             "tf.float32.as_numpy_dtype", "tf.double", "tf.half", "'int'", "'long'", "'nonsense'", "3"]

ROWS = [SnippetRow(f"as_dtype_{i}", f"outputs = {{'name': np.array(tf.as_dtype({s}).name)}}\n")
        for i, s in enumerate(SPELLINGS)]
ROWS += [
    SnippetRow("placeholder_float_spelling",
               "p = tf.placeholder('float', [None, 784])\nq = tf.placeholder(float, [2])\n"
               "r = tf.Variable(tf.zeros([2], dtype='double'))\n"
               "outputs = {'dtypes': np.array([p.dtype.name, q.dtype.name, r.dtype.base_dtype.name]), "
               "'shape': np.array([-1 if d is None else d for d in p.shape.as_list()])}\n"),
    SnippetRow("cast_to_string_spelling", "x = tf.cast(tf.constant([1.5, 2.5]), 'double')\n"
               "with tf.Session() as s:\n    outputs = {'x': s.run(x)}\n"),
    SnippetRow("dtype_properties",
               "d = [tf.float32, tf.int64, tf.uint8, tf.bool, tf.complex64, tf.qint8, tf.uint32]\n"
               "outputs = {'floating': np.array([t.is_floating for t in d]), 'integer': np.array([t.is_integer for t in d]),"
               " 'unsigned': np.array([t.is_unsigned for t in d]), 'size': np.array([t.size for t in d]),"
               " 'enum': np.array([t.as_datatype_enum for t in d]), 'eq': np.array([tf.float32 == 'float32', "
               "tf.float32 == np.float32, tf.int32 != tf.int64])}\n"),
    SnippetRow("compat_text",
               "c = tf.compat\noutputs = {'b': np.array(c.as_bytes('h\\u00e9')), 't': np.array(c.as_text(b'h\\xc3\\xa9')),"
               " 's': np.array(c.as_str_any(12)), 'p': np.array(c.path_to_str('x/y')),"
               " 'types': np.array([isinstance(3, c.integral_types), isinstance(2.5, c.real_types),"
               " isinstance(1j, c.complex_types), isinstance(np.int8(1), c.integral_types),"
               " isinstance(b'x', c.bytes_or_text_types)])}\n"),
    SnippetRow("compat_as_bytes_error", "tf.compat.as_bytes(3)\n"),
    SnippetRow("compat_v1_is_the_api",
               "v1 = tf.compat.v1\nx = v1.placeholder(v1.float32, [2])\ny = v1.reduce_sum(x * 2.0)\n"
               "with v1.Session() as s:\n    outputs = {'y': s.run(y, {x: [1.0, 2.0]})}\n"),
    SnippetRow("v2_switches",
               "tf.disable_v2_behavior(); tf.disable_eager_execution(); tf.disable_v2_tensorshape()\n"
               "tf.disable_control_flow_v2(); tf.disable_resource_variables(); tf.disable_tensor_equality()\n"
               "t = tf.placeholder(tf.float32, [3, None])\n"
               "outputs = {'flags': np.array([tf.control_flow_v2_enabled(), tf.resource_variables_enabled(),"
               " tf.executing_eagerly(), type(t.shape[0]).__name__ == 'Dimension']),"
               " 'dims': np.array([tf.dimension_value(t.shape[0]), tf.dimension_value(t.shape[1]) is None,"
               " tf.dimension_at_index(t.shape, 0).value, tf.compat.dimension_value(7)])}\n"),
    SnippetRow("version_names", "outputs = {'types': np.array([type(tf.VERSION).__name__, type(tf.GIT_VERSION).__name__,"
               " type(tf.COMPILER_VERSION).__name__, tf.version.VERSION == tf.VERSION])}\n"),
]

CASES = expand(ROWS)


oracle = oracle_fixture(CASES)

@pytest.mark.parametrize("name", sorted(CASES))
def test_dtype_spelling_and_compat_names_match_tensorflow(oracle, name):
    compare(run_in_tftk(*CASES[name]), oracle[name])


def test_version_is_the_tf1_api_level_tftk_implements():
    import tftk as tf
    assert tf.VERSION == tf.version.VERSION == "1.15.0" and tf.GIT_VERSION.startswith("tftk-")
