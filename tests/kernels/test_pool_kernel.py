"""Pooling kernels against float64 loops written from TF's definitions, including the max-pool tie rule."""

import itertools

import numpy as np
import pytest

from tftk.kernels.conv import conv_output_size
from tftk.kernels.elementwise import relu_grad
from tftk.kernels.pool import avg_pool, avg_pool_grad, max_pool, max_pool_grad, max_pool_relu_grad


def _windows(x_shape, ksize, strides, pads):
    """Yield (i, j, list of in-bounds (y, x)) in row-major scan order for every output position."""
    oh = (x_shape[1] + sum(pads[0]) - ksize[0]) // strides[0] + 1
    ow = (x_shape[2] + sum(pads[1]) - ksize[1]) // strides[1] + 1
    for i, j in itertools.product(range(oh), range(ow)):
        cells = [(y, x) for y in range(i * strides[0] - pads[0][0], i * strides[0] - pads[0][0] + ksize[0])
                 for x in range(j * strides[1] - pads[1][0], j * strides[1] - pads[1][0] + ksize[1])
                 if 0 <= y < x_shape[1] and 0 <= x < x_shape[2]]
        yield i, j, oh, ow, cells


def reference_max_pool(x, ksize, strides, pads):
    """Max and gradient routing: first maximal cell in row-major order wins (TF1 CPU MaxPoolGrad)."""
    outs = list(_windows(x.shape, ksize, strides, pads))
    y = np.zeros((x.shape[0], outs[0][2], outs[0][3], x.shape[3]))
    winner = {}
    for (i, j, _, _, cells), b, c in itertools.product(outs, range(x.shape[0]), range(x.shape[3])):
        vals = [float(x[b, yy, xx, c]) for yy, xx in cells]
        k = vals.index(max(vals))
        y[b, i, j, c] = vals[k]
        winner[b, i, j, c] = (b, *cells[k], c)
    return y, winner


def reference_avg_pool(x, ksize, strides, pads):
    outs = list(_windows(x.shape, ksize, strides, pads))
    y = np.zeros((x.shape[0], outs[0][2], outs[0][3], x.shape[3]))
    for i, j, _, _, cells in outs:
        y[:, i, j, :] = np.mean([x[:, yy, xx, :].astype(np.float64) for yy, xx in cells], axis=0)
    return y


def _pads(x_shape, ksize, strides, padding):
    return tuple(conv_output_size(x_shape[d + 1], ksize[d], strides[d], 1, padding)[1:] for d in range(2))


CASES = [  # x shape, ksize, strides, padding
    ((2, 4, 4, 3), (2, 2), (2, 2), "VALID"),
    ((2, 5, 7, 2), (2, 2), (2, 2), "SAME"),
    ((1, 6, 6, 2), (3, 3), (2, 2), "SAME"),   # overlapping windows
    ((2, 5, 4, 1), (3, 2), (1, 2), "SAME"),
    ((1, 7, 7, 3), (3, 3), (3, 3), "VALID"),
    # 2x2 windows without padding: the four-tap kernel
    ((1, 6, 8, 16), (2, 2), (2, 2), "SAME"),   # LeNet's pooling, batch 1
    ((2, 5, 5, 2), (2, 2), (1, 1), "VALID"),   # overlapping windows
    ((2, 5, 7, 3), (2, 2), (2, 3), "VALID"),   # odd sizes: the last row and columns in no window
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_max_pool_and_grad_match_definition(case, dtype):
    xs, ksize, strides, padding = case
    pads = _pads(xs, ksize, strides, padding)
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=xs).astype(dtype)          # small integers: plenty of ties
    y, arg = max_pool(x, ksize, strides, pads)
    y_ref, winner = reference_max_pool(x, ksize, strides, pads)
    assert y.dtype == dtype and arg.dtype == np.int64
    np.testing.assert_array_equal(y, y_ref)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx_ref = np.zeros(xs)
    for out_idx, in_idx in winner.items():
        dx_ref[in_idx] += dy[out_idx]
    dx = max_pool_grad(dy, arg, xs)
    assert dx.dtype == dtype
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strides", [(2, 2), (1, 1), (1, 2)])
def test_four_tap_max_pool_gives_the_general_kernels_bits(dtype, strides):
    """NaNs (never replaced, never replacing), infinities and ties: the 2x2 kernel agrees bit for bit."""
    from tftk.kernels import pool
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, size=(3, 8, 10, 5)).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    x[rng.random(x.shape) < 0.05] = np.inf
    x[rng.random(x.shape) < 0.05] = -np.inf
    y, arg = max_pool(x, (2, 2), strides)
    y_general, arg_general = np.empty_like(y), np.empty_like(arg)
    pool._max_pool(x, 2, 2, strides[0], strides[1], 0, 0, y_general, arg_general)
    np.testing.assert_array_equal(y, y_general)
    np.testing.assert_array_equal(arg, arg_general)


def test_max_pool_tie_goes_to_first_element_in_row_major_order():
    """TF1's CPU MaxPoolGrad: a later element replaces the max only when strictly greater."""
    x = np.array([[0., 5.], [5., 5.]]).reshape(1, 2, 2, 1)
    y, arg = max_pool(x, (2, 2), (2, 2))
    assert y.ravel().tolist() == [5.0] and arg.ravel().tolist() == [1]
    dx = max_pool_grad(np.ones((1, 1, 1, 1)), arg, x.shape)
    assert dx.ravel().tolist() == [0.0, 1.0, 0.0, 0.0]


def test_max_pool_padding_never_wins_over_negative_values():
    x = -np.arange(1.0, 10.0).reshape(1, 3, 3, 1)
    y, arg = max_pool(x, (2, 2), (2, 2), ((0, 1), (0, 1)))   # SAME for 3 -> 2
    assert y.ravel().tolist() == [-1.0, -3.0, -7.0, -9.0]
    assert arg.ravel().tolist() == [0, 2, 6, 8]


def test_max_pool_grad_accumulates_overlapping_windows():
    x = np.array([1., 9., 2.]).reshape(1, 1, 3, 1)
    y, arg = max_pool(x, (1, 2), (1, 1))
    dx = max_pool_grad(np.array([1., 10.]).reshape(1, 1, 2, 1), arg, x.shape)
    assert dx.ravel().tolist() == [0.0, 11.0, 0.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_max_pool_relu_grad_is_relu_grad_of_max_pool_grad_bit_for_bit(case, dtype):
    """The plan-time fusion of MaxPoolGrad into ReluGrad: same bits, ties, overlaps, zeros and NaNs included."""
    xs, ksize, strides, padding = case
    pads = _pads(xs, ksize, strides, padding)
    rng = np.random.default_rng(7)
    relu_y = np.maximum(rng.integers(-2, 3, size=xs), 0).astype(dtype)   # ReLU outputs: many zeros, ties
    _, arg = max_pool(relu_y, ksize, strides, pads)
    dy = rng.standard_normal(arg.shape).astype(dtype)
    dy.flat[::5] = np.nan
    expected = relu_grad(max_pool_grad(dy, arg, xs), relu_y)
    got = max_pool_relu_grad(dy, arg, xs, relu_y)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dy_shape,arg_shape,input_shape,relu_shape", [
    ((1, 1, 1, 1), (1, 1, 2, 1), (1, 2, 2, 1), (1, 2, 2, 1)),   # dy and argmax differ
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 2, 2, 1), (1, 1, 2, 1)),   # ReLU output smaller than the pooled input
    ((2, 1, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1), (1, 2, 2, 1)),   # batch differs
])
def test_max_pool_relu_grad_refuses_mismatched_shapes(dy_shape, arg_shape, input_shape, relu_shape):
    with pytest.raises(ValueError, match="max_pool_relu_grad: dy"):
        max_pool_relu_grad(np.zeros(dy_shape), np.zeros(arg_shape, np.int64), input_shape, np.zeros(relu_shape))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_avg_pool_and_grad_match_definition(case, dtype):
    xs, ksize, strides, padding = case
    pads = _pads(xs, ksize, strides, padding)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(xs).astype(dtype)
    y = avg_pool(x, ksize, strides, pads)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, reference_avg_pool(x, ksize, strides, pads), rtol=tol, atol=tol)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx_ref = np.zeros(xs)   # avg pool is linear: its gradient is read off the reference by basis vectors
    for idx in np.ndindex(xs):
        e = np.zeros(xs)
        e[idx] = 1.0
        dx_ref[idx] = np.sum(dy * reference_avg_pool(e, ksize, strides, pads))
    np.testing.assert_allclose(avg_pool_grad(dy, xs, ksize, strides, pads), dx_ref, rtol=tol, atol=tol)


def test_avg_pool_same_counts_only_in_bounds_elements():
    x = np.arange(1.0, 10.0).reshape(1, 3, 3, 1)
    y = avg_pool(x, (2, 2), (2, 2), ((0, 1), (0, 1)))
    assert y.ravel().tolist() == [3.0, 4.5, 7.5, 9.0]


def test_pool_rejects_a_window_that_does_not_fit():
    with pytest.raises(ValueError, match="does not fit"):
        max_pool(np.zeros((1, 2, 2, 1)), (3, 3), (1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 6, 8, 16), (1, 2, 2, 32), (3, 4, 6, 48)])
def test_tiled_2x2_gradient_gives_the_scatters_bits(dtype, shape):
    """Windows that tile x: the gradient found again in x equals the arg-max scatter bit for bit, with and
    without the ReLU gate, ties, NaNs, infinities and signed zeros in x and dy included."""
    from tftk.kernels.pool import max_pool_2x2_grad, tiled_2x2
    assert tiled_2x2(dtype, shape, (2, 2), (2, 2), ((0, 0), (0, 0)))
    rng = np.random.default_rng(shape[3])
    x = rng.integers(-2, 3, size=shape).astype(dtype)
    x[rng.random(shape) < 0.1] = np.nan
    x[rng.random(shape) < 0.05] = np.inf
    x[rng.random(shape) < 0.05] = -0.0
    relu_y = np.maximum(x, 0)  # its own NaNs: a gate that is closed there
    y, arg = max_pool(x, (2, 2), (2, 2))
    dy = rng.standard_normal(y.shape).astype(dtype)
    dy[rng.random(dy.shape) < 0.1] = -0.0
    dy[rng.random(dy.shape) < 0.05] = np.nan
    for got, expected in [(max_pool_2x2_grad(dy, x), max_pool_grad(dy, arg, shape)),
                          (max_pool_2x2_grad(dy, x, relu_y), max_pool_relu_grad(dy, arg, shape, relu_y))]:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


def test_tiled_2x2_applies_only_to_exact_2x2_stride_2_tilings_of_16k_channels():
    from tftk.kernels.pool import tiled_2x2
    assert not tiled_2x2(np.float32, (1, 6, 8, 16), (2, 2), (1, 1), ((0, 0), (0, 0)))
    assert not tiled_2x2(np.float32, (1, 7, 8, 16), (2, 2), (2, 2), ((0, 0), (0, 0)))    # VALID: a row left over
    assert not tiled_2x2(np.float32, (1, 6, 8, 16), (2, 2), (2, 2), ((0, 1), (0, 0)))
    assert not tiled_2x2(np.float32, (1, 6, 8, 12), (2, 2), (2, 2), ((0, 0), (0, 0)))
    assert not tiled_2x2(np.float32, (1, 6, 8, 16), (3, 3), (2, 2), ((0, 0), (0, 0)))
