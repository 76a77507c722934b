"""dilation2d and erosion2d (values and gradients) against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import op_row, table_tests

RNG = np.random.default_rng(1312)
X = RNG.uniform(-1, 1, (2, 5, 6, 2)).astype(np.float32)
W = RNG.uniform(-1, 1, (3, 2, 2)).astype(np.float32)

OPS = [
    ("dilation2d_same", "tf.nn.dilation2d(x, y, [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')", {"x": X, "y": W}),
    ("dilation2d_valid_strided", "tf.nn.dilation2d(x, y, [1, 2, 1, 1], [1, 1, 2, 1], 'VALID')", {"x": X, "y": W}),
    ("dilation2d_kwargs", "tf.nn.dilation2d(input=x, filters=y, strides=[1, 1, 2, 1], dilations=[1, 2, 1, 1], "
     "padding='SAME')", {"x": X, "y": W}),
    ("erosion2d_same", "tf.nn.erosion2d(x, y, [1, 1, 1, 1], [1, 1, 1, 1], 'SAME')", {"x": X, "y": W}),
    ("erosion2d_valid", "tf.nn.erosion2d(x, y, [1, 1, 2, 1], [1, 1, 1, 1], 'VALID')", {"x": X, "y": W}),
]

ROWS = [op_row(name, build, inputs) for name, build, inputs in OPS]

results, test_tftk_agrees_with_tensorflow = table_tests("morphology", ROWS)
