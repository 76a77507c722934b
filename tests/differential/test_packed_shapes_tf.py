"""Shapes given as Python lists holding tensors (`tf.ones([n, 2])`, `tf.reshape(x, [n, -1])`): TF packs
them into one shape tensor and infers the static shape from the entries it knows; tftk gives the same
values and the same static shapes, against real TensorFlow. Run-time values reach random shapes,
tile multiples, broadcast shapes, paddings, slice sizes, the indices and bounds of `x[a:b]`,
one_hot's depth and eye's size."""

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
    "random_uniform": "tf.shape(tf.random_uniform([n, 3]))",
    "random_normal": "tf.shape(tf.random_normal([2, n], seed=1))",
    "truncated_normal": "tf.shape(tf.truncated_normal([n, n]))",
    "tile": "tf.tile(tf.ones([1, 2]), [n, 1])",
    "slice": "tf.slice(tf.reshape(tf.range(12), [4, 3]), [1, 0], [n, -1])",
    "broadcast_to": "tf.broadcast_to(tf.range(3), [n, 3])",
    "pad": "tf.pad(tf.ones([2, 2]), [[0, n], [n, 0]])",
    "placeholder_default": "tf.placeholder_with_default(tf.zeros([n, 2]), [None, 2])",
    "expand_tile_zeros_like": "tf.zeros_like(tf.ones([n, 4]))",
    "sequence_mask": "tf.sequence_mask([1, 2], n + 1)",
    "stack_shape_reshape": "tf.reshape(tf.range(6), tf.stack([n, 3]))",
    "concat_shape": "tf.zeros(tf.concat([[n], [2]], 0))",
    "strided_end": "tf.range(10)[:n * 3]",
    "strided_negative_start": "tf.range(7)[-n:]",
    "one_hot_depth": "tf.one_hot([0, 1], n + 1)",
    "one_hot_axis_values": "tf.one_hot([[2], [0]], n + 1, on_value=5, off_value=-1, axis=1)",
    "eye": "tf.eye(n)",
    "eye_rectangular_batch": "tf.eye(n, n + 1, batch_shape=[2], dtype=tf.int32)",
}
# TF's static shape of a strided slice with any run-time bound keeps less than tftk's (it loses the
# static axes too, or the rank when a step is a tensor): these rows compare values only.
VALUES_ONLY = {
    "strided_index_and_ellipsis": "tf.reshape(tf.range(24), [2, 3, 4])[n - 1, ..., 1:]",
    "strided_step_newaxis": "tf.reshape(tf.range(24), [2, 3, 4])[:, ::n, None]",
}
ROWS = [Row(name, BODY.format(expr=expr)) for name, expr in EXPRS.items()] + \
    [Row(name, BODY.format(expr=expr).replace(", 'static': tf.constant(str(y.shape))", ""))
     for name, expr in VALUES_ONLY.items()]

results, test_tftk_agrees_with_tensorflow = table_tests("packed_shapes", ROWS)


EXPORTED = """
graph_def = tf.GraphDef()
graph_def.ParseFromString(inputs['graph'].tobytes())
tf.import_graph_def(graph_def, name='')
with tf.Session() as s:
    outputs = {name: s.run(name + ':0') for name in ['sliced', 'tiled', 'padded', 'grad', 'hot']}
"""


def test_run_time_shape_ops_written_out_run_in_tensorflow():
    """tftk's StridedSlice/Tile/Pad/OneHot with run-time operands and their gradients, written as a
    GraphDef, are TF's StridedSlice, StridedSliceGrad, Tile, PadV2 and OneHot: TF runs the file to
    tftk's values."""
    import numpy as np

    import tftk
    from tests.tf_oracle import both_succeeded, require_tf, run_in_tf
    require_tf()
    with tftk.Graph().as_default() as graph:
        n = tftk.placeholder_with_default(2, [], name="n")
        x = tftk.constant(np.arange(24.0).reshape(2, 3, 4))
        sliced = tftk.identity(x[:, :n, ::n], name="sliced")
        tiled = tftk.identity(tftk.tile(x, [n, 1, 1]), name="tiled")
        padded = tftk.identity(tftk.pad(x, [[0, n], [0, 0], [1, n]], constant_values=-1.0), name="padded")
        loss = tftk.reduce_sum(sliced ** 2) + tftk.reduce_sum(tiled * 3.0) + tftk.reduce_sum(padded ** 3)
        tftk.identity(tftk.gradients(loss, x)[0], name="grad")
        tftk.identity(tftk.one_hot([[1, 0]], n + 1, axis=1), name="hot")
        with tftk.Session() as sess:
            expected = sess.run({k: k + ":0" for k in ("sliced", "tiled", "padded", "grad", "hot")})
        blob = np.frombuffer(graph.as_graph_def().SerializeToString(), np.uint8)
    cases = {"exported": (EXPORTED, {"graph": blob})}
    tf_result, _ = both_succeeded(run_in_tf(cases), cases, "exported")
    for key, value in expected.items():
        np.testing.assert_array_equal(tf_result.outputs[key], value, err_msg=key)
