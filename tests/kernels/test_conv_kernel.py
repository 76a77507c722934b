"""conv kernels against a float64 loop written from the definition of TF's Conv2D."""

import itertools
import threading

import numpy as np
import pytest

from tftk.kernels.conv import conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv_output_size


def reference_conv2d(x, w, strides, pads, dilations):
    """y[b,i,j,o] = sum_{p,q,c} xpad[b, i*sh + p*dh, j*sw + q*dw, c] * w[p,q,c,o], in float64."""
    x = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)))
    kh, kw, _, co = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh = (x.shape[1] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[2] - (kw - 1) * dw - 1) // sw + 1
    y = np.zeros((x.shape[0], oh, ow, co))
    for i, j, p, q in itertools.product(range(oh), range(ow), range(kh), range(kw)):
        y[:, i, j, :] += x[:, i * sh + p * dh, j * sw + q * dw, :] @ w[p, q].astype(np.float64)
    return y


@pytest.mark.parametrize("in_size,k,stride,dilation,padding,expected", [
    (28, 5, 1, 1, "SAME", (28, 2, 2)),
    (28, 2, 2, 1, "SAME", (14, 0, 0)),
    (7, 2, 2, 1, "SAME", (4, 0, 1)),      # odd extra pixel goes at the end
    (10, 3, 2, 1, "SAME", (5, 0, 1)),
    (5, 4, 1, 1, "SAME", (5, 1, 2)),
    (10, 3, 1, 2, "SAME", (10, 2, 2)),    # effective filter 5
    (1, 3, 5, 1, "SAME", (1, 1, 1)),
    (28, 5, 1, 1, "VALID", (24, 0, 0)),
    (7, 3, 2, 1, "VALID", (3, 0, 0)),
    (10, 3, 1, 3, "VALID", (4, 0, 0)),
])
def test_conv_output_size_follows_tf(in_size, k, stride, dilation, padding, expected):
    assert conv_output_size(in_size, k, stride, dilation, padding) == expected


def test_conv_output_size_rejects_bad_padding_and_small_valid_input():
    with pytest.raises(ValueError, match="SAME"):
        conv_output_size(5, 3, 1, 1, "same")
    with pytest.raises(ValueError, match="VALID"):
        conv_output_size(2, 3, 1, 1, "VALID")


CASES = [  # x shape, filter shape, strides, padding, dilations
    ((2, 6, 7, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 2), (3, 2, 2, 3), (2, 2), "SAME", (1, 1)),
    ((1, 8, 9, 2), (2, 3, 2, 2), (3, 2), "VALID", (1, 1)),
    ((2, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),
    ((2, 9, 8, 1), (2, 2, 1, 3), (2, 1), "VALID", (2, 3)),
    ((2, 4, 5, 3), (1, 1, 3, 2), (1, 1), "VALID", (1, 1)),   # 1x1 fast path
    ((3, 5, 5, 1), (5, 5, 1, 2), (1, 1), "SAME", (1, 1)),    # LeNet-like, 1 channel
    ((2, 7, 9, 1), (3, 3, 1, 2), (2, 2), "SAME", (1, 1)),    # 1 channel, strided columns
    # 1 channel into a multiple of 16 channels: `conv_one_channel`'s vector kernels
    ((3, 9, 11, 1), (5, 5, 1, 16), (1, 1), "SAME", (1, 1)),
    ((2, 8, 7, 1), (3, 3, 1, 16), (1, 1), "VALID", (1, 1)),
    ((2, 10, 9, 1), (3, 2, 1, 16), (1, 1), "SAME", (2, 3)),   # dilated
    ((2, 9, 12, 1), (2, 7, 1, 32), (1, 1), "SAME", (1, 1)),   # 7 taps a row: two blocks of 5
    ((1, 5, 13, 1), (4, 6, 1, 16), (2, 1), "VALID", (1, 2)),
    ((2, 7, 9, 1), (3, 3, 1, 12), (1, 1), "SAME", (1, 1)),    # 12 channels: im2col
]


def _setup(case, dtype):
    xs, ws, strides, padding, dil = case
    pads = tuple(conv_output_size(xs[d + 1], ws[d], strides[d], dil[d], padding)[1:] for d in range(2))
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    return x, w, strides, pads, dil


TOL = {np.float32: 1e-4, np.float64: 1e-11}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv2d_matches_definition(case, dtype):
    x, w, strides, pads, dil = _setup(case, dtype)
    y = conv2d(x, w, strides, pads, dil)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, reference_conv2d(x, w, strides, pads, dil), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_conv2d_gradients_are_the_adjoints_of_the_definition(case, dtype):
    """<dy, conv(x, w)> is linear in x and in w, so its gradients are read off the reference by basis vectors."""
    x, w, strides, pads, dil = _setup(case, dtype)
    y_ref = reference_conv2d(x, w, strides, pads, dil)
    dy = np.random.default_rng(7).standard_normal(y_ref.shape).astype(dtype)
    dx_ref = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[idx] = 1.0
        dx_ref[idx] = np.sum(dy * reference_conv2d(e, w, strides, pads, dil))
    dw_ref = np.zeros(w.shape)
    for idx in np.ndindex(w.shape):
        e = np.zeros(w.shape)
        e[idx] = 1.0
        dw_ref[idx] = np.sum(dy * reference_conv2d(x, e, strides, pads, dil))
    dx = conv2d_backprop_input(dy, w, x.shape, strides, pads, dil)
    dw = conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil)
    assert dx.dtype == dtype and dw.dtype == dtype
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(dx, dx_ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(dw, dw_ref, rtol=tol, atol=tol)


def test_one_channel_rows_take_the_vector_kernels_and_repeat_bit_for_bit():
    """The rows above meant for `conv_one_channel` do reach it (else the table would not test it)."""
    from tftk.kernels import conv_one_channel
    taken = [case for case in CASES if conv_one_channel.applies(np.float32, case[0], case[1], case[2])]
    assert len(taken) == 5
    for case in taken:
        x, w, strides, pads, dil = _setup(case, np.float32)
        y = conv_one_channel.conv2d(x, w, strides, pads, dil)
        np.testing.assert_array_equal(conv2d(x, w, strides, pads, dil), y)
        dy = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
        first = conv_one_channel.conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil)
        np.testing.assert_array_equal(conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil), first)


def test_conv2d_reports_channel_mismatch_and_bad_dy():
    x = np.zeros((1, 4, 4, 3))
    with pytest.raises(ValueError, match="3 channels but the filter expects 2"):
        conv2d(x, np.zeros((2, 2, 2, 1)))
    with pytest.raises(ValueError, match="dy has shape"):
        conv2d_backprop_filter(x, np.zeros((1, 4, 4, 1)), (2, 2, 3, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[4], CASES[6], CASES[7]])
def test_conv2d_in_several_tiles_matches_one_tile(case, dtype, monkeypatch):
    """Tiles of 2 images over a batch of 5 (the last tile partial) give the one-tile results."""
    x, w, strides, pads, dil = _setup(case, dtype)
    x = np.concatenate([x, 2 * x, -x])[:5]
    y = conv2d(x, w, strides, pads, dil)
    dy = np.random.default_rng(3).standard_normal(y.shape).astype(dtype)
    dx = conv2d_backprop_input(dy, w, x.shape, strides, pads, dil)
    dw = conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil)
    per_image = y.shape[1] * y.shape[2] * w.shape[0] * w.shape[1] * w.shape[2] * x.itemsize
    monkeypatch.setattr("tftk.kernels.conv.TILE_BYTES", 2 * per_image)
    tol = TOL[dtype] * 10
    np.testing.assert_allclose(conv2d(x, w, strides, pads, dil), y, rtol=tol, atol=tol)
    np.testing.assert_allclose(conv2d_backprop_input(dy, w, x.shape, strides, pads, dil), dx, rtol=tol, atol=tol)
    np.testing.assert_allclose(conv2d_backprop_filter(x, dy, w.shape, strides, pads, dil), dw, rtol=tol, atol=tol)
    np.testing.assert_allclose(y, reference_conv2d(x, w, strides, pads, dil), rtol=TOL[dtype], atol=TOL[dtype])


def test_concurrent_callers_get_their_own_results():
    """Sessions' threads convolving at once (the model server's case: kernels release the GIL and each
    thread has its own scratch buffer) each get their own answer."""
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((8, 10, 10, c)) for c in (4, 4, 1, 1)]
    ws = [rng.standard_normal((3, 3, x.shape[3], 6)) for x in xs]
    pads = ((1, 1), (1, 1))
    expected = [(conv2d(x, w, (1, 1), pads), conv2d_backprop_filter(x, conv2d(x, w, (1, 1), pads), w.shape, (1, 1), pads))
                for x, w in zip(xs, ws)]
    results: dict[int, tuple] = {}

    def session(i: int) -> None:
        for _ in range(5):
            y = conv2d(xs[i], ws[i], (1, 1), pads)
            results[i] = (y, conv2d_backprop_filter(xs[i], y, ws[i].shape, (1, 1), pads))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_array_equal(results[i][0], expected[i][0])
        np.testing.assert_array_equal(results[i][1], expected[i][1])
