"""Winograd convolution (tftk.kernels.winograd): its transforms, the geometries it takes, and its results
against the float64 im2col kernels (themselves checked against the definition in test_conv_kernel.py)."""

import threading

import numpy as np
import pytest

from tftk.kernels import winograd
from tftk.kernels.conv import conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv_output_size


@pytest.mark.parametrize("m,r", [(4, 3), (4, 5), (3, 4), (5, 4), (2, 3), (2, 5)])
def test_transforms_compute_the_correlation(m, r):
    """A^T [(G g) . (B^T d)] is y_i = sum_k d[i+k] g[k] for every input, to float64 rounding."""
    at, g, bt = winograd.transforms(m, r)
    assert at.shape == (m, m + r - 1) and g.shape == (m + r - 1, r) and bt.shape == (m + r - 1, m + r - 1)
    rng = np.random.default_rng(m * 10 + r)
    for _ in range(5):
        d, f = rng.standard_normal(m + r - 1), rng.standard_normal(r)
        expected = np.array([d[i:i + r] @ f for i in range(m)])
        np.testing.assert_allclose(at @ ((g @ f) * (bt @ d)), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m,r,which", [(4, 5, 2), (4, 3, 2), (5, 4, 2), (3, 4, 2), (5, 4, 1), (3, 4, 1)])
def test_tile_transform_computes_p_d_pt_of_every_window(m, r, which):
    """The tile kernel (slots in registers, pairs as E +- O, empty slots of 6-point transforms, 4-wide
    windows of G) against P d P^T in float64, for each transform the convolutions use (B^T, G of F(r, 4))."""
    p = winograd.transforms(m, r)[which]
    n, window = p.shape
    ny, nx, run = 2, 3, 20
    rng = np.random.default_rng(m * 100 + r * 10 + which)
    src = rng.standard_normal(((ny - 1) * 4 + window, ((nx - 1) * 4 + window) * run)).astype(np.float32)
    out = np.full((n * n, ny * nx + 1, run), np.nan, dtype=np.float32)
    tmp = np.empty((n + 1, src.shape[1] + run), dtype=np.float32)
    slots, points = winograd._row_slots(m, r, which)
    winograd._tile_transforms(src, slots, points, window, 4, ny, nx, run, out.reshape(-1, run), tmp)
    pixels = src.astype(np.float64).reshape(src.shape[0], -1, run)
    for ty in range(ny):
        for tx in range(nx):
            d = pixels[ty * 4:ty * 4 + window, tx * 4:tx * 4 + window]  # [window, window, run]
            want = np.einsum("ai,bj,ijk->abk", p, p, d).reshape(n * n, run)
            np.testing.assert_allclose(out[:, ty * nx + tx], want, rtol=0, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("dtype,x_shape,w_shape,strides,dilations,expected", [
    (np.float32, (50, 14, 14, 32), (5, 5, 32, 64), (1, 1), (1, 1), True),   # deep-MNIST's second layer
    (np.float32, (64, 14, 14, 16), (5, 5, 16, 32), (1, 1), (1, 1), True),   # LeNet's second layer
    (np.float32, (4, 14, 13, 16), (3, 3, 16, 16), (1, 1), (1, 1), True),    # 4 x 4 x 4 = 64 tiles
    (np.float32, (3, 14, 13, 16), (3, 3, 16, 16), (1, 1), (1, 1), False),   # 48 tiles: too few sgemm rows
    (np.float64, (4, 14, 13, 16), (3, 3, 16, 16), (1, 1), (1, 1), False),   # float64 keeps im2col
    (np.float32, (4, 14, 13, 16), (3, 3, 16, 16), (2, 2), (1, 1), False),   # strided
    (np.float32, (4, 14, 13, 16), (3, 3, 16, 16), (1, 1), (2, 2), False),   # dilated
    (np.float32, (4, 14, 13, 16), (3, 5, 16, 16), (1, 1), (1, 1), False),   # not square
    (np.float32, (4, 14, 13, 16), (7, 7, 16, 16), (1, 1), (1, 1), False),   # no transform for 7x7
    (np.float32, (64, 28, 28, 1), (5, 5, 1, 32), (1, 1), (1, 1), False),    # 1 channel: taps by rows
    (np.float32, (64, 14, 14, 8), (3, 3, 8, 8), (1, 1), (1, 1), True),
    (np.float32, (64, 14, 14, 4), (3, 3, 4, 8), (1, 1), (1, 1), False),     # too few channels
    (np.float32, (64, 14, 14, 8), (5, 5, 8, 2), (1, 1), (1, 1), False),
])
def test_applies_to_stride1_float32_square_filters_with_channels(dtype, x_shape, w_shape, strides, dilations,
                                                                 expected):
    assert winograd.applies(np.dtype(dtype), x_shape, w_shape, strides, dilations) is expected


CASES = [  # x shape, filter shape, padding (TF's name, or explicit pads)
    ((4, 14, 14, 32), (5, 5, 32, 16), "SAME"),        # deep-MNIST-like
    ((4, 13, 15, 16), (3, 3, 16, 17), "SAME"),        # odd sizes, not a multiple of the tile
    ((4, 15, 13, 16), (5, 5, 16, 18), "VALID"),
    ((4, 16, 14, 17), (3, 3, 17, 16), "VALID"),
    ((1, 3, 2, 8), (3, 3, 8, 8), "SAME"),             # smaller than one tile
    ((2, 7, 6, 8), (5, 5, 8, 9), ((1, 3), (4, 0))),   # uneven explicit pads
    ((1, 5, 5, 8), (3, 3, 8, 8), ((4, 0), (0, 3))),   # a pad of the filter's width: input gradient by im2col
]


def _setup(case):
    xs, ws, padding = case
    if isinstance(padding, str):
        pads = tuple(conv_output_size(xs[d + 1], ws[d], 1, 1, padding)[1:] for d in range(2))
    else:
        pads = padding
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    y_shape = conv2d(x.astype(np.float64), w.astype(np.float64), (1, 1), pads).shape
    dy = rng.standard_normal(y_shape).astype(np.float32)
    return x, w, dy, pads


def _close(got, want):
    """Within 2e-5 of the largest reference value (float32 Winograd: ~1e-6-1e-5 here)."""
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * np.abs(want).max())


@pytest.mark.parametrize("case", CASES)
def test_forward_and_gradients_match_float64_im2col(case):
    x, w, dy, pads = _setup(case)
    x64, w64, dy64 = x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64)
    one = (1, 1)
    _close(winograd.conv2d(x, w, pads), conv2d(x64, w64, one, pads))
    _close(winograd.conv2d_backprop_filter(x, dy, w.shape, pads), conv2d_backprop_filter(x64, dy64, w.shape, one, pads))
    if winograd.backprop_input_applies(w.shape, pads):  # else im2col: the next test
        _close(winograd.conv2d_backprop_input(dy, w, x.shape, pads),
               conv2d_backprop_input(dy64, w64, x.shape, one, pads))


def test_input_gradient_with_a_pad_of_the_filters_width_takes_im2col():
    x, w, dy, pads = _setup(CASES[-1])
    assert not winograd.backprop_input_applies(w.shape, pads)
    dx = conv2d_backprop_input(dy, w, x.shape, (1, 1), pads)
    _close(dx, conv2d_backprop_input(dy.astype(np.float64), w.astype(np.float64), x.shape, (1, 1), pads))


@pytest.mark.parametrize("case", CASES[:4])
def test_conv_kernels_dispatch_to_winograd(case):
    """The public kernels return exactly what the Winograd kernels compute for these geometries."""
    x, w, dy, pads = _setup(case)
    np.testing.assert_array_equal(conv2d(x, w, (1, 1), pads), winograd.conv2d(x, w, pads))
    np.testing.assert_array_equal(conv2d_backprop_input(dy, w, x.shape, (1, 1), pads),
                                  winograd.conv2d_backprop_input(dy, w, x.shape, pads))
    np.testing.assert_array_equal(conv2d_backprop_filter(x, dy, w.shape, (1, 1), pads),
                                  winograd.conv2d_backprop_filter(x, dy, w.shape, pads))
    as_lists = [list(pad) for pad in pads]  # pads given as lists: the same results (tilings are cached by geometry)
    np.testing.assert_array_equal(winograd.conv2d(x, w, as_lists), winograd.conv2d(x, w, pads))
    np.testing.assert_array_equal(winograd.conv2d_backprop_filter(x, dy, w.shape, as_lists),
                                  winograd.conv2d_backprop_filter(x, dy, w.shape, pads))


@pytest.mark.parametrize("case", [CASES[0], CASES[2]])
def test_chunks_of_images_give_the_whole_batch_result(case, monkeypatch):
    """A batch split into chunks of one image gives the one-chunk results (filter gradient: up to rounding)."""
    x, w, dy, pads = _setup(case)
    x, dy = np.concatenate([x, -x, 2 * x])[:5], np.concatenate([dy, dy, -dy])[:5]
    whole = (winograd.conv2d(x, w, pads), winograd.conv2d_backprop_input(dy, w, x.shape, pads),
             winograd.conv2d_backprop_filter(x, dy, w.shape, pads))
    monkeypatch.setattr(winograd, "CHUNK_BYTES", 1)
    chunked = (winograd.conv2d(x, w, pads), winograd.conv2d_backprop_input(dy, w, x.shape, pads),
               winograd.conv2d_backprop_filter(x, dy, w.shape, pads))
    np.testing.assert_array_equal(chunked[0], whole[0])
    np.testing.assert_array_equal(chunked[1], whole[1])
    np.testing.assert_allclose(chunked[2], whole[2], rtol=1e-5, atol=1e-5 * np.abs(whole[2]).max())


def test_results_are_bit_identical_run_after_run_and_across_threads():
    x, w, dy, pads = _setup(CASES[0])
    first = (conv2d(x, w, (1, 1), pads), conv2d_backprop_filter(x, dy, w.shape, (1, 1), pads))
    results = {}

    def run(i):
        results[i] = (conv2d(x * (i + 1), w, (1, 1), pads), conv2d_backprop_filter(x, dy, w.shape, (1, 1), pads))
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_array_equal(results[i][1], first[1])
        np.testing.assert_array_equal(results[i][0], conv2d(x * (i + 1), w, (1, 1), pads))
    np.testing.assert_array_equal(conv2d(x, w, (1, 1), pads), first[0])


def test_input_gradient_rejects_a_dy_from_another_input_shape():
    x, w, dy, pads = _setup(CASES[1])
    with pytest.raises(ValueError, match="does not come from an input of shape"):
        winograd.conv2d_backprop_input(dy, w, (2, 8, 7, 8), pads)
