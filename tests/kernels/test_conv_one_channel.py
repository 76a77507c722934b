"""The 1-channel convolution kernels (explicit vector code) against the float64 definition of TF's ops."""

import numpy as np
import pytest

from tftk.kernels import conv_one_channel
from tftk.kernels.conv import conv_output_size

from test_conv_kernel import reference_conv2d

CASES = [  # x shape, filter shape, strides, padding, dilations
    ((3, 28, 28, 1), (5, 5, 1, 16), (1, 1), "SAME", (1, 1)),    # LeNet's first layer (smaller batch)
    ((2, 12, 12, 1), (5, 5, 1, 32), (1, 1), "SAME", (1, 1)),    # deep-MNIST's: two channel blocks
    ((1, 9, 11, 1), (5, 5, 1, 16), (1, 1), "VALID", (1, 1)),    # batch 1, width 7: one block of 4 + 3 single
    ((2, 7, 6, 1), (3, 2, 1, 16), (2, 2), "SAME", (1, 1)),      # strides, a 2-tap row (3 zero taps)
    ((2, 9, 13, 1), (2, 7, 1, 16), (1, 3), "SAME", (1, 1)),     # 7 taps a row: two blocks of 5; column stride
    ((2, 10, 9, 1), (3, 3, 1, 16), (1, 1), "SAME", (2, 3)),     # dilated
    ((1, 5, 13, 1), (4, 6, 1, 32), (1, 1), "VALID", (1, 2)),
    ((2, 3, 3, 1), (1, 1, 1, 16), (1, 1), "VALID", (1, 1)),     # 1x1 filter, outputs narrower than a block
    ((1, 6, 5, 1), (3, 3, 1, 16), (3, 2), "VALID", (1, 1)),
]


def _setup(case, dtype, seed=0):
    xs, ws, strides, padding, dil = case
    pads = tuple(conv_output_size(xs[d + 1], ws[d], strides[d], dil[d], padding)[1:] for d in range(2))
    rng = np.random.default_rng(seed + sum(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[3]).astype(dtype)
    return x, w, b, strides, pads, dil


TOL = {np.float32: 2e-5, np.float64: 1e-12}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("with_bias,relu", [(False, False), (True, False), (True, True)])
def test_forward_with_bias_and_relu_matches_definition(case, dtype, with_bias, relu):
    x, w, b, strides, pads, dil = _setup(case, dtype)
    assert conv_one_channel.applies(dtype, x.shape, w.shape, strides)
    y = conv_one_channel.conv2d(x, w, strides, pads, dil, b if with_bias else None, relu)
    expected = reference_conv2d(x, w, strides, pads, dil) + (b if with_bias else 0)
    if relu:
        expected = np.maximum(expected, 0)
    assert y.dtype == dtype and y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_filter_gradient_is_the_adjoint_of_the_definition(case, dtype):
    """<dy, conv(x, w)> is linear in w: its gradient is read off the reference by basis filters."""
    x, w, _, strides, pads, dil = _setup(case, dtype)
    y = reference_conv2d(x, w, strides, pads, dil)
    dy = np.random.default_rng(7).standard_normal(y.shape).astype(dtype)
    expected = np.zeros(w.shape)
    for idx in np.ndindex(w.shape[:2]):
        e = np.zeros(w.shape)
        e[idx] = 1.0  # the tap's weight for every output channel: channel k's sum lands in column k
        expected[idx] = np.einsum("bijk,bijk->k", dy, reference_conv2d(x, e, strides, pads, dil))
    dw = conv_one_channel.conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil)
    assert dw.dtype == dtype and dw.shape == w.shape
    np.testing.assert_allclose(dw, expected, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_non_contiguous_inputs_give_the_contiguous_results(dtype):
    x, w, b, strides, pads, dil = _setup(CASES[3], dtype)
    y = conv_one_channel.conv2d(x, w, strides, pads, dil, b, True)
    dy = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
    dw = conv_one_channel.conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil)
    xs = np.repeat(x, 2, axis=2)[:, :, ::2]  # every other column: a strided view
    ws = np.asfortranarray(w)
    bs = np.repeat(b, 2)[::2]
    dys = np.asfortranarray(dy)
    assert not xs.flags.c_contiguous and not dys.flags.c_contiguous and not bs.flags.c_contiguous
    np.testing.assert_array_equal(conv_one_channel.conv2d(xs, ws, strides, pads, dil, bs, True), y)
    np.testing.assert_array_equal(conv_one_channel.conv2d_backprop_filter(xs, dys, w.shape, strides, pads, dil), dw)


def test_applies_to_float_one_channel_inputs_into_blocks_of_16_channels():
    """(`tests/kernels/test_conv_kernel.py` checks that conv2d and its filter gradient take this path.)"""
    assert conv_one_channel.applies(np.float32, (3, 28, 28, 1), (5, 5, 1, 32), (2, 2))
    assert conv_one_channel.applies(np.float64, (3, 28, 28, 1), (5, 5, 1, 16), (1, 1))
    assert not conv_one_channel.applies(np.float32, (3, 28, 28, 1), (5, 5, 1, 12), (1, 1))
    assert not conv_one_channel.applies(np.float32, (3, 28, 28, 2), (5, 5, 2, 16), (1, 1))
    assert not conv_one_channel.applies(np.float16, (3, 28, 28, 1), (5, 5, 1, 16), (1, 1))


def test_nan_and_inf_outside_the_window_do_not_leak_into_the_zero_taps():
    """Blocks of 5 taps read past a 2-wide filter with zero weights: those reads must be padding, not x."""
    x, w, _, strides, pads, dil = _setup(((1, 6, 9, 1), (2, 2, 1, 16), (1, 1), "VALID", (1, 1)), np.float32)
    x[0, :, -1, 0] = np.inf  # the last column: read only by the last output column's second tap
    y = conv_one_channel.conv2d(x, w, strides, pads, dil)
    assert np.isfinite(y[:, :, :-1]).all()
