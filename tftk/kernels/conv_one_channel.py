"""The filter gradient of a stride-1 convolution of a 1-channel input, as dot products over image planes.

Why: im2col + BLAS spends most of this kernel in one sgemm of shape [taps, pixels] @ [pixels, out
channels] with only 25 taps and 16 out channels (LeNet's first layer), where OpenBLAS runs at a third
of the core's peak. Here every tap's gradient is a dot product, over all pixels, of an output-gradient
plane and a shifted input plane: a block of 4 output channels x 5 taps keeps its 20 sums in vector
registers (a reduction LLVM vectorizes when allowed to reassociate it), reading 9 planes per 20
multiply-adds and no gathered patch matrix at all.

Layout: each padded image is one flat plane with rows of `wp` pixels (the padded width), so the
input that output pixel ``m = i*wp + j`` reads through tap (p, q) is ``m + p*dh*wp + q*dw``: one
shifted view per tap, contiguous along ``m``. The output gradient is laid out the same way, channel
planes of ``oh * wp`` with zeros in the ``wp - ow`` columns past the output's width, so those
columns add nothing. Taps go in blocks of 5 along the filter row (zero-padded input past the last
row covers a block reaching beyond the filter, whose sums are dropped).

Summation order: reassociated, so results differ from a plain loop's in the last bits (~5e-7
relative on LeNet's layer, float32), but the order is fixed by the compiled code: bit-identical run
to run. On LeNet's 64x28x28x1 -> 16 layer (1 thread, CPU time, load ~7): 1.15 ms with im2col, 0.88 ms
here (about a third of it the output-gradient transpose).
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["applies", "conv2d_backprop_filter"]

Pair = tuple[int, int]

CHANNELS = 4  # output channels per block
TAPS = 5  # filter taps (along a filter row) per block
# With 32 output channels (deep-MNIST's first layer) BLAS's product is no longer starved and the
# transposed gradient planes cost twice as much: 1.41 ms here against 1.18 with im2col.
MAX_CHANNELS = 16


def applies(dtype: np.dtype, x_shape: tuple[int, ...], filter_shape: tuple[int, ...], strides: Pair) -> bool:
    """float32 or float64, a 1-channel input, stride 1 (any dilation), and a multiple of CHANNELS output
    channels up to MAX_CHANNELS."""
    return (np.dtype(dtype) in (np.float32, np.float64) and x_shape[3] == 1 and tuple(strides) == (1, 1)
            and filter_shape[3] % CHANNELS == 0 and filter_shape[3] <= MAX_CHANNELS)


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _block_sums(d0, d1, d2, d3, x0, x1, x2, x3, x4, span, zero, sums):  # pragma: no cover - compiled
    """sums[c, t] += sum_{m < span} d_c[m] * x_t[m] for 4 output-gradient planes and 5 shifted input planes
    (zero: 0 of the arrays' dtype, so the 20 sums keep it)."""
    a00 = a01 = a02 = a03 = a04 = zero
    a10 = a11 = a12 = a13 = a14 = zero
    a20 = a21 = a22 = a23 = a24 = zero
    a30 = a31 = a32 = a33 = a34 = zero
    for m in range(span):
        v0, v1, v2, v3, v4 = x0[m], x1[m], x2[m], x3[m], x4[m]
        e = d0[m]
        a00 += e * v0; a01 += e * v1; a02 += e * v2; a03 += e * v3; a04 += e * v4  # noqa: E702
        e = d1[m]
        a10 += e * v0; a11 += e * v1; a12 += e * v2; a13 += e * v3; a14 += e * v4  # noqa: E702
        e = d2[m]
        a20 += e * v0; a21 += e * v1; a22 += e * v2; a23 += e * v3; a24 += e * v4  # noqa: E702
        e = d3[m]
        a30 += e * v0; a31 += e * v1; a32 += e * v2; a33 += e * v3; a34 += e * v4  # noqa: E702
    sums[0, 0] += a00; sums[0, 1] += a01; sums[0, 2] += a02; sums[0, 3] += a03; sums[0, 4] += a04  # noqa: E702
    sums[1, 0] += a10; sums[1, 1] += a11; sums[1, 2] += a12; sums[1, 3] += a13; sums[1, 4] += a14  # noqa: E702
    sums[2, 0] += a20; sums[2, 1] += a21; sums[2, 2] += a22; sums[2, 3] += a23; sums[2, 4] += a24  # noqa: E702
    sums[3, 0] += a30; sums[3, 1] += a31; sums[3, 2] += a32; sums[3, 3] += a33; sums[3, 4] += a34  # noqa: E702


@njit(cache=True)
def _gradient_planes(dy, wp, planes):  # pragma: no cover - compiled
    """planes[b, k, i*wp + j] = dy[b, i, j, k] for j < ow, 0 for ow <= j < wp."""
    n, oh, ow, co = dy.shape
    for b in range(n):
        for i in range(oh):
            for j in range(wp):
                m = i * wp + j
                if j < ow:
                    src = dy[b, i, j]
                    for k in range(co):
                        planes[b, k, m] = src[k]
                else:
                    for k in range(co):
                        planes[b, k, m] = 0


@njit(cache=True)
def _filter_sums(xflat, planes, kh, kw, dh, dw, wp, dw_out):  # pragma: no cover - compiled
    """dw_out[p, q, k] = sum_b sum_m planes[b, k, m] * xflat[b, p*dh*wp + q*dw + m], block by block."""
    n, co, span = planes.shape
    sums = np.zeros((CHANNELS, TAPS), dtype=dw_out.dtype)
    zero = sums[0, 0]
    for k0 in range(0, co, CHANNELS):
        for p in range(kh):
            for q0 in range(0, kw, TAPS):
                sums[:, :] = 0
                for b in range(n):
                    x = xflat[b]
                    d = planes[b]
                    first = p * dh * wp + q0 * dw
                    _block_sums(d[k0], d[k0 + 1], d[k0 + 2], d[k0 + 3], x[first:], x[first + dw:],
                                x[first + 2 * dw:], x[first + 3 * dw:], x[first + 4 * dw:], span, zero, sums)
                for c in range(CHANNELS):
                    for t in range(min(TAPS, kw - q0)):
                        dw_out[p, q0 + t, k0 + c] = sums[c, t]


def conv2d_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape: tuple[int, ...],
                           pads: tuple[Pair, Pair], dilations: Pair) -> np.ndarray:
    """Conv2DBackpropFilter of a stride-1 convolution of 1-channel NHWC x (see `applies`): [kh, kw, 1, co]."""
    kh, kw, _, co = (int(d) for d in filter_shape)
    n, h, w, _ = x.shape
    _, oh, ow, _ = dy.shape
    (top, bottom), (left, right) = pads
    dh, dw = dilations
    hp, wp = h + top + bottom, w + left + right
    blocks = -(-kw // TAPS)
    tail = (blocks * TAPS - kw) * dw + wp  # the last block's taps past the filter, and one spare row
    xflat = np.zeros((n, hp * wp + tail), dtype=x.dtype)
    xflat[:, :hp * wp].reshape(n, hp, wp)[:, top:top + h, left:left + w] = x[..., 0]
    planes = np.empty((n, co, oh * wp), dtype=x.dtype)
    _gradient_planes(np.ascontiguousarray(dy, dtype=x.dtype), wp, planes)
    out = np.empty((kh, kw, co), dtype=x.dtype)
    _filter_sums(xflat, planes, kh, kw, dh, dw, wp, out)
    return out.reshape(kh, kw, 1, co)
