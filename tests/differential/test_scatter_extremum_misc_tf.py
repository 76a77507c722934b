"""tensor_scatter_nd_max/min (values and gradients, ties included), broadcast_dynamic_shape, to_complex64/128
and sparse_matmul against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1309)
T = RNG.uniform(-1, 1, (4, 3))
IDX = np.array([[0, 1], [2, 2], [0, 1], [3, 0]])
UPD = np.array([0.5, -0.2, T[0, 1], 2.0])  # a tie with the tensor at [0, 1]

OPS = [
    ("tensor_scatter_nd_max", "tf.tensor_scatter_nd_max(x, i, y)", {"x": T, "i": IDX, "y": UPD}, True),
    ("tensor_scatter_nd_min", "tf.tensor_scatter_nd_min(x, i, y)", {"x": T, "i": IDX, "y": UPD}, True),
    ("tensor_scatter_nd_max_rows", "tf.tensor_scatter_nd_max(x, i, y)",
     {"x": T, "i": np.array([[1], [3]]), "y": RNG.uniform(-1, 1, (2, 3))}, True),
    ("to_complex64", "tf.to_complex64(x)", {"x": T.astype(np.float32)}, False),
    ("to_complex128", "tf.to_complex128(x)", {"x": T}, False),
    ("sparse_matmul", "tf.sparse_matmul(x, y, transpose_b=True, a_is_sparse=True)",
     {"x": T.astype(np.float32), "y": RNG.uniform(-1, 1, (2, 3)).astype(np.float32)}, True),
    ("sparse_matmul_float64", "tf.sparse_matmul(x, x)", {"x": T[:3]}, False),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("broadcast_dynamic_shape", "fetch = {'a': tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]), "
        "'b': tf.broadcast_dynamic_shape(tf.shape(tf.zeros([5, 1])), tf.constant([1, 7]))}\n"),
    Row("broadcast_dynamic_shape_bad", "fetch = {'a': tf.broadcast_dynamic_shape([2, 3], [4, 3])}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("scatter_extremum_misc", ROWS)
