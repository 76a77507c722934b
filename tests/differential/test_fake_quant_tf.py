"""tf.quantization.fake_quant_* (and their top-level spellings) against real TensorFlow: values, the
straight-through gradients to inputs, min and max, and the *_gradient functions."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1308)
X = np.concatenate([RNG.uniform(-8, 8, 20), [0.0, -6.0, 6.0, 0.0235, -0.0235]]).astype(np.float32).reshape(5, 5)
C = np.float32

OPS = [
    ("args_default", "tf.quantization.fake_quant_with_min_max_args(x)", {"x": X}, True),
    ("args_narrow_4bit", "tf.fake_quant_with_min_max_args(x, min=-1.5, max=3.0, num_bits=4, narrow_range=True)", {"x": X / 3}, True),
    ("args_positive_range", "tf.fake_quant_with_min_max_args(x, min=0.3, max=5.0)", {"x": X}, True),
    ("vars", "tf.quantization.fake_quant_with_min_max_vars(x, y, z)", {"x": X, "y": C(-2.5), "z": C(4.2)}, True),
    ("vars_7bit_narrow", "tf.fake_quant_with_min_max_vars(x, y, z, num_bits=7, narrow_range=True)",
     {"x": X, "y": C(-7.0), "z": C(1.0)}, True),
    ("per_channel", "tf.quantization.fake_quant_with_min_max_vars_per_channel(x, y, z)",
     {"x": X, "y": np.array([-1, -2, -3, -6, 0.5], C), "z": np.array([1, 2, 6, 4, 3], C)}, True),
    ("args_gradient", "tf.quantization.fake_quant_with_min_max_args_gradient(y, x, min=-2.0, max=2.0)",
     {"y": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X / 2}, False),
    ("vars_gradient_inputs", "tf.quantization.fake_quant_with_min_max_vars_gradient(w, x, y, z)[0]",
     {"w": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X, "y": C(-3.0), "z": C(2.0)}, False),
    ("vars_gradient_min", "tf.fake_quant_with_min_max_vars_gradient(w, x, y, z)[1]",
     {"w": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X, "y": C(-3.0), "z": C(2.0)}, False),
    ("vars_gradient_max", "tf.fake_quant_with_min_max_vars_gradient(w, x, y, z, num_bits=5)[2]",
     {"w": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X, "y": C(-3.0), "z": C(2.0)}, False),
    ("per_channel_gradient_min", "tf.quantization.fake_quant_with_min_max_vars_per_channel_gradient(w, x, y, z)[1]",
     {"w": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X, "y": np.array([-1, -2, -3, -6, 0.5], C),
      "z": np.array([1, 2, 6, 4, 3], C)}, False),
    ("per_channel_gradient_max", "tf.fake_quant_with_min_max_vars_per_channel_gradient(w, x, y, z)[2]",
     {"w": RNG.uniform(-1, 1, (5, 5)).astype(C), "x": X, "y": np.array([-1, -2, -3, -6, 0.5], C),
      "z": np.array([1, 2, 6, 4, 3], C)}, False),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("float64_rejected", "fetch = {'y': tf.quantization.fake_quant_with_min_max_args(tf.zeros([2], tf.float64))}\n"),
    Row("bad_num_bits", "fetch = {'y': tf.fake_quant_with_min_max_args(tf.zeros([2]), num_bits=1)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("fake_quant", ROWS)
