"""Convolution/pooling variants and fused_batch_norm: float64 gradient checks, values and errors."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(23)


def arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


GRADIENT_CASES = [
    GradientCase("depthwise_conv2d", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 1, 1], "SAME"),
                 [arr(1, 4, 3, 2), arr(2, 2, 2, 2)]),
    GradientCase("separable_conv2d", lambda x, w, p: tf.nn.separable_conv2d(x, w, p, [1, 1, 1, 1], "VALID"),
                 [arr(1, 3, 3, 2), arr(2, 2, 2, 1), arr(1, 1, 2, 2)]),
    GradientCase("atrous_conv2d", lambda x, w: tf.nn.atrous_conv2d(x, w, 2, "SAME"), [arr(1, 4, 4, 1), arr(2, 2, 1, 2)]),
    GradientCase("Conv3D", lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME"),
                 [arr(1, 3, 4, 3, 2), arr(2, 2, 2, 2, 2)]),
    GradientCase("Conv3D_dilated_valid", lambda x, w: tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], "VALID",
                                                                   dilations=[1, 2, 1, 1, 1]),
                 [arr(1, 4, 3, 3, 1), arr(2, 2, 2, 1, 2)]),
    GradientCase("pool_1d", lambda x: tf.nn.pool(x, [2], "AVG", "SAME", strides=[2]), [arr(2, 5, 2)]),
    GradientCase("weighted_moments", lambda x: tf.concat(tf.nn.weighted_moments(x, [0], tf.constant(
        [[1.0], [2.0], [0.5]], tf.float64)), 0), [arr(3, 2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


def _dilate(w: np.ndarray, rate: tuple) -> np.ndarray:
    """The dense filter a dilated one stands for: zeros between the taps."""
    shape = [(k - 1) * r + 1 for k, r in zip(w.shape[:3], rate)] + list(w.shape[3:])
    out = np.zeros(shape, w.dtype)
    out[::rate[0], ::rate[1], ::rate[2]] = w
    return out


def test_conv3d_dilation_equals_conv3d_with_the_dilated_filter():
    x, w = arr(1, 6, 5, 5, 2), arr(2, 2, 3, 2, 3)
    with tf.Graph().as_default(), tf.Session() as s:
        dilated = s.run(tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], "SAME", dilations=[1, 2, 1, 2, 1]))
        dense = s.run(tf.nn.conv3d(x, _dilate(w, (2, 1, 2)), [1, 1, 1, 1, 1], "SAME"))
    np.testing.assert_allclose(dilated, dense, rtol=1e-12)


def test_depthwise_output_channel_order_is_channel_major():
    x = np.zeros((1, 1, 1, 2))
    x[..., 1] = 1.0
    w = np.arange(4, dtype=np.float64).reshape(1, 1, 2, 2)
    with tf.Graph().as_default(), tf.Session() as s:
        out = s.run(tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID"))
    np.testing.assert_array_equal(out.reshape(-1), [0.0, 0.0, 2.0, 3.0])


def test_fused_batch_norm_returns_the_unbiased_variance_in_training():
    x = arr(2, 2, 2, 1).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        _, mean, var = s.run(tf.nn.fused_batch_norm(x, [1.0], [0.0]))
    np.testing.assert_allclose(mean, [x.mean()], rtol=1e-5)
    np.testing.assert_allclose(var, [x.var(ddof=1)], rtol=1e-5)


@pytest.mark.parametrize("build, error, message", [
    (lambda: tf.nn.conv3d(tf.ones([1, 2, 2, 2, 3]), tf.ones([1, 1, 1, 2, 1]), [1, 1, 1, 1, 1], "SAME"),
     ValueError, "input has 3 channels but the filter expects 2"),
    (lambda: tf.nn.pool(tf.ones([1, 4, 4, 1]), [2, 2], "MIN", "SAME"), ValueError, "'MAX' or 'AVG'"),
    (lambda: tf.nn.convolution(tf.ones([2, 3]), tf.ones([1, 3, 1]), "SAME"), ValueError, "rank 3, 4 or 5"),
    (lambda: tf.nn.fused_batch_norm(tf.ones([1, 2, 2, 1]), [1.0], [0.0], mean=[0.0], variance=[1.0]),
     ValueError, "must be None when is_training=True"),
    (lambda: tf.nn.atrous_conv2d(tf.ones([1, 4, 4, 1]), tf.ones([2, 2, 1, 1]), 0, "SAME"), ValueError,
     "rate must be >= 1"),
])
def test_bad_arguments_are_refused(build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()
