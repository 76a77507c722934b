"""tf.nn convolution and pooling variants and fused_batch_norm against real TensorFlow (values and gradients)."""

import numpy as np
import pytest

from tests.differential.op_tables import compare, op_case
from tests.tf_oracle import run_in_tf, run_in_tftk

RNG = np.random.default_rng(19)


def vec(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


F32 = np.float32
X = vec(2, 6, 5, 3)
ROWS = [
    ("depthwise_conv2d_same", "tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], 'SAME')", {"x": X, "w": vec(3, 3, 3, 2)}),
    ("depthwise_conv2d_strided_valid", "tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], 'VALID')",
     {"x": X, "w": vec(2, 3, 3, 1)}),
    ("depthwise_conv2d_rate", "tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], 'SAME', rate=[2, 2])",
     {"x": X, "w": vec(2, 2, 3, 2)}),
    ("depthwise_conv2d_native", "tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], 'VALID')",
     {"x": X, "w": vec(2, 2, 3, 2)}),
    ("separable_conv2d", "tf.nn.separable_conv2d(x, w, p, [1, 1, 1, 1], 'SAME')",
     {"x": X, "w": vec(3, 3, 3, 2), "p": vec(1, 1, 6, 4)}),
    ("atrous_conv2d", "tf.nn.atrous_conv2d(x, w, 2, 'SAME')", {"x": X, "w": vec(3, 2, 3, 4)}),
    ("atrous_conv2d_valid", "tf.nn.atrous_conv2d(x, w, 2, 'VALID')", {"x": X, "w": vec(2, 2, 3, 2)}),
    ("convolution_1d", "tf.nn.convolution(x, w, 'SAME', strides=[2])", {"x": vec(2, 7, 3), "w": vec(3, 3, 2)}),
    ("convolution_2d_dilated", "tf.nn.convolution(x, w, 'VALID', dilation_rate=[2, 1])", {"x": X, "w": vec(2, 2, 3, 4)}),
    ("convolution_3d", "tf.nn.convolution(x, w, 'SAME', strides=[1, 2, 1])",
     {"x": vec(1, 4, 5, 4, 2), "w": vec(2, 3, 2, 2, 3)}),
    # TF's CPU Conv3D refuses dilations > 1 (tftk's does them: tests/ops/test_nn_conv_ops.py).
    ("conv3d_valid", "tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], 'VALID')", {"x": vec(2, 5, 4, 5, 2), "w": vec(2, 2, 2, 2, 3)}),
    ("conv3d_f32", "tf.nn.conv3d(x, w, [1, 2, 2, 2, 1], 'SAME')",
     {"x": vec(1, 5, 4, 3, 2, dtype=np.float32), "w": vec(3, 2, 2, 2, 2, dtype=np.float32)}),
    ("conv2d_transpose", "tf.nn.conv2d_transpose(x, w, [2, 12, 10, 4], [1, 2, 2, 1], 'SAME')",
     {"x": X, "w": vec(3, 3, 4, 3)}),
    ("pool_max_2d", "tf.nn.pool(x, [2, 3], 'MAX', 'SAME', strides=[2, 2])", {"x": X}),
    ("pool_avg_2d", "tf.nn.pool(x, [3, 3], 'AVG', 'VALID', strides=[1, 2])", {"x": X}),
    ("pool_max_1d", "tf.nn.pool(x, [3], 'MAX', 'VALID', strides=[2])", {"x": vec(2, 7, 3)}),
    ("pool_avg_1d", "tf.nn.pool(x, [2], 'AVG', 'SAME', strides=[2])", {"x": vec(2, 7, 3)}),
    ("fused_batch_norm_training", "tf.concat([tf.reshape(t, [-1]) for t in tf.nn.fused_batch_norm(x, s, o)], 0)",
     {"x": vec(2, 6, 5, 3, dtype=F32), "s": vec(3, dtype=F32), "o": vec(3, dtype=F32)}),
    ("fused_batch_norm_nchw", "tf.nn.fused_batch_norm(x, s, o, data_format='NCHW')[0]",
     {"x": vec(2, 3, 4, 4, dtype=F32), "s": vec(3, dtype=F32), "o": vec(3, dtype=F32)}),
    ("fused_batch_norm_inference",
     "tf.nn.fused_batch_norm(x, s, o, mean=m, variance=v, epsilon=0.01, is_training=False)[0]",
     {"x": vec(2, 6, 5, 3, dtype=F32), "s": vec(3, dtype=F32), "o": vec(3, dtype=F32), "m": vec(3, dtype=F32),
      "v": np.abs(vec(3, dtype=F32)) + 0.5}),
    ("weighted_moments", "tf.concat(tf.nn.weighted_moments(x, [0, 1], w), 0)",
     {"x": vec(3, 4, 2), "w": np.abs(vec(3, 4, 1))}),
]

CASES = {name: op_case(build, inputs, *grad) for name, build, inputs, *grad in ROWS}
CASES["depthwise_filter_channels_mismatch"] = (
    "tf.nn.depthwise_conv2d(tf.ones([1, 4, 4, 3]), tf.ones([2, 2, 2, 1]), [1, 1, 1, 1], 'SAME')\noutputs = {}\n", {})
CASES["fused_batch_norm_float64"] = (
    "tf.nn.fused_batch_norm(tf.ones([1, 2, 2, 3], tf.float64), tf.ones([3], tf.float64), tf.zeros([3], tf.float64))\n"
    "outputs = {}\n", {})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
