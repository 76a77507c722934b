"""Shapes given as Python lists holding tensors (`tf.ones([n, 2])`, `tf.reshape(x, [n, -1])`): TF packs
them into one shape tensor and infers the static shape from the entries it knows; tftk gives the same
values and the same static shapes, against real TensorFlow."""

from tests.differential.op_tables import Row, table_tests

BODY = """
n = tf.placeholder_with_default(2, [])
y = {expr}
fetch = {{'y': y, 'static': tf.constant(str(y.shape))}}
"""
EXPRS = {
    "ones": "tf.ones([n, 2])",
    "zeros_tuple_int64": "tf.zeros((3, n), tf.int64)",
    "reshape_inferred": "tf.reshape(tf.range(6), [n, -1])",
    "reshape_known_last": "tf.reshape(tf.range(6.0), [-1, n, 3])",
    "fill_packed": "tf.fill([n, 1, 2], 7)",
    "ones_nested_product": "tf.ones([n * 2, n])",
}
ROWS = [Row(name, BODY.format(expr=expr)) for name, expr in EXPRS.items()]

results, test_tftk_agrees_with_tensorflow = table_tests("packed_shapes", ROWS)
