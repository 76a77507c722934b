"""FFTs, rfft/irfft and tf.signal framing: float64 gradient checks (complex parts from two real inputs)."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(37)


def arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


def parts(z):
    """Real and imaginary parts side by side, so a real loss sees both."""
    return tf.concat([tf.real(z), tf.imag(z)], -1)


GRADIENT_CASES = [
    GradientCase(op, lambda x, y, fn=fn: parts(fn(tf.complex(x, y))), [arr(2, 3, 4), arr(2, 3, 4)])
    for op, fn in [("FFT2D", tf.signal.fft2d), ("IFFT2D", tf.signal.ifft2d), ("FFT3D", tf.signal.fft3d),
                   ("IFFT3D", tf.signal.ifft3d)]
] + [
    GradientCase("RFFT", lambda x: parts(tf.signal.rfft(x)), [arr(2, 8)]),
    GradientCase("RFFT_padded_odd", lambda x: parts(tf.signal.rfft(x, [9])), [arr(2, 7)]),
    GradientCase("RFFT_cropped", lambda x: parts(tf.signal.rfft(x, [5])), [arr(2, 7)]),
    GradientCase("IRFFT", lambda x, y: tf.signal.irfft(tf.complex(x, y)), [arr(2, 5), arr(2, 5)]),
    GradientCase("IRFFT_odd", lambda x, y: tf.signal.irfft(tf.complex(x, y), [7]), [arr(2, 4), arr(2, 4)]),
    GradientCase("Roll", lambda x: tf.roll(x, [1, -2], [0, 1]), [arr(3, 4)]),
    GradientCase("stft", lambda x: parts(tf.signal.stft(x, 6, 3)), [arr(2, 15)]),
    GradientCase("frame_overlap_and_add", lambda x: tf.signal.overlap_and_add(tf.signal.frame(x, 4, 2, axis=0), 3),
                 [arr(9)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


def test_inverse_stft_inverts_stft():
    x = arr(1, 64)
    with tf.Graph().as_default(), tf.Session() as s:
        y = tf.signal.inverse_stft(tf.signal.stft(x, 16, 4), 16, 4,
                                   window_fn=tf.signal.inverse_stft_window_fn(4))
        out = s.run(y)
    np.testing.assert_allclose(out[:, 16:48], x[:, 16:48], atol=1e-10)


def test_frame_needs_a_known_length():
    with pytest.raises(ValueError, match="signal's length known"):
        tf.signal.frame(tf.placeholder(tf.float32, [None]), 4, 2)
