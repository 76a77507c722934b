"""timestamp, guarantee_const, init_scope, switch_case, grad_pass_through, convert_to_tensor_or_sparse_tensor,
no_regularizer and the variable partitioners against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

SHAPE = "tf.TensorShape([{}])"

OPS = [
    ("guarantee_const", "tf.guarantee_const(x) * 2.0", {"x": np.arange(3.0)}, False),
    ("grad_pass_through", "tf.grad_pass_through(lambda t: tf.round(t) * 3.0)(x)", {"x": np.array([0.4, 1.6, -2.2])}, True),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("timestamp", "t = tf.timestamp()\nfetch = {'after_2020': t > 1.6e9, 'dtype': tf.constant(t.dtype.name)}\n"),
    Row("switch_case_list", "i = tf.placeholder_with_default(tf.constant(1), [])\n"
        "fetch = {k: tf.switch_case(tf.constant(v), [lambda: tf.constant(10), lambda: tf.constant(20), lambda: tf.constant(30)])"
        " for k, v in (('a', 0), ('b', 1), ('c', 2), ('d', 7), ('e', -1))}\n"),
    Row("switch_case_default", "fetch = {k: tf.switch_case(tf.constant(v), {0: lambda: tf.constant(1.0), 1: lambda: tf.constant(4.0)}, "
        "default=lambda: tf.constant(-1.0)) for k, v in (('a', 0), ('b', 1), ('c', 3))}\n"),
    Row("switch_case_gap", "tf.switch_case(tf.constant(0), {0: lambda: tf.constant(1.0), 3: lambda: tf.constant(4.0)})\nfetch = {}\n"),
    Row("switch_case_int64", "fetch = {'y': tf.switch_case(tf.constant(0, tf.int64), [lambda: tf.constant(1)])}\n"),
    Row("init_scope", "c = tf.constant(1.0, name='c')\nwith tf.name_scope('outer'):\n    with tf.control_dependencies([c]):\n"
        "        with tf.init_scope():\n            v = tf.constant(2.0, name='v')\n"
        "fetch = {'deps': tf.constant(len(v.op.control_inputs)), 'name': tf.constant(v.op.name.split('/')[-2:])}\n"),
    Row("convert_to_tensor_or_sparse_tensor", "s = tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensorValue([[0, 1]], [5], [2, 2]))\n"
        "t = tf.convert_to_tensor_or_sparse_tensor([1.0, 2.0], dtype=tf.float64)\n"
        "fetch = {'kind': tf.constant(type(s).__name__), 'v': s.values, 't': t}\n"),
    Row("convert_sparse_dtype_mismatch", "tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensor([[0]], [1], [2]), "
        "dtype=tf.float32)\nfetch = {}\n"),
    Row("no_regularizer", "fetch = {'none': tf.constant(tf.no_regularizer(tf.constant(1.0)) is None)}\n"),
    Row("partitioners", "fetch = {\n"
        "  'fixed': tf.constant(tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]), dtype=tf.float32)),\n"
        "  'fixed_axis1': tf.constant(tf.fixed_size_partitioner(8, axis=1)(shape=tf.TensorShape([10, 4]), dtype=tf.float32)),\n"
        "  'axis_size': tf.constant(tf.variable_axis_size_partitioner(1000)(shape=tf.TensorShape([100, 10]), dtype=tf.float32)),\n"
        "  'axis_size_max': tf.constant(tf.variable_axis_size_partitioner(100, max_shards=3)(shape=tf.TensorShape([100, 10]), "
        "dtype=tf.float64)),\n"
        "  'axis_size_str': tf.constant(tf.variable_axis_size_partitioner(64, axis=1)(shape=tf.TensorShape([2, 9]), "
        "dtype=tf.string)),\n"
        "  'min_max': tf.constant(tf.min_max_variable_partitioner(4, min_slice_size=1000)(shape=tf.TensorShape([100, 10]), "
        "dtype=tf.float32)),\n"
        "  'min_max_small': tf.constant(tf.min_max_variable_partitioner(8)(shape=tf.TensorShape([3, 3]), dtype=tf.int32)),\n"
        "}\n"),
    Row("partitioner_bad_bytes", "tf.variable_axis_size_partitioner(0)\nfetch = {}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("misc_graph", ROWS)
