"""2-D convolution kernels and their gradients, as TF lays them out: im2col gathers in Numba, products in BLAS.

Layout: `x` is NHWC ``[batch, in_h, in_w, in_channels]``; the filter `w` is HWIO
``[filter_h, filter_w, in_channels, out_channels]``; `y` is ``[batch, out_h, out_w, out_channels]``.
Padding is explicit, ``pads = ((top, bottom), (left, right))``, and means zeros outside the input;
`conv_output_size` turns TF's "SAME"/"VALID" into those numbers (SAME puts the odd extra pixel at the
end, as TF does). Output pixel ``(i, j)`` reads input row ``i*sh - top + p*dh`` for filter row ``p``.

Every kernel goes through a "patch matrix" of the input, row ``(b, i, j)`` holding the ``[kh, kw, c]``
taps output ``(i, j)`` reads: forward is ``cols @ w``, the filter gradient ``cols.T @ dy`` and the input
gradient ``dy @ w.T`` added back onto the padded input (`_patch_rows`, both directions). The matrix is
built a tile of a few images at a time (`TILE_BYTES`), so each tile is gathered and multiplied while
it is still in cache: on the LeNet shapes (1 thread) the 5x5x16->32 forward went from 7.2 to 4.1 ms.
A 1-channel input is gathered taps by rows instead (`_tap_rows`: runs of a whole output row rather
than of kw taps), which took the 5x5x1->16 forward from 1.7 to 0.87 ms, its filter gradient from
2.0 to 0.89 ms and its input gradient from 1.9 to 1.2 ms.

The kernels are serial and release the GIL (concurrent sessions run them side by side); BLAS owns
the cores. Handing the tiles to a pool of our own threads, each multiplying with single-threaded
BLAS, scaled one conv call alone (deep-MNIST's 32->64 forward: 11.6 -> 6.1 ms on 2 threads) and held
up better than BLAS's barriers on a loaded machine, but lost inside a training step: the 2-thread
deep-MNIST step took 52 ms against 36 ms with BLAS's threads (same quiet window), no faster than on
1 thread. The likely cause: after each 2-thread MatMul OpenBLAS's worker spins on the second core
for a while, leaving a helper of ours half a core. A Numba `prange` next to OpenBLAS's threads
oversubscribed the cores the same way (~8 ms per call on 2 cores).

A 1-channel input into a multiple of 16 channels (the first layer of LeNet and deep-MNIST) goes to
`tftk.kernels.conv_one_channel`, forward and filter gradient (explicit vector code: LeNet's forward
0.95 -> 0.48 ms, its filter gradient 0.99 -> 0.41 ms).
Stride-1 float32 convolutions with 3x3 or 5x5 filters and >= 16 channels go to `tftk.kernels.winograd`
instead: in CPU time these kernels already run the multi-channel layers at ~87 GFLOP/s, close to
OpenBLAS's sgemm ceiling (~100 on one Zen 4 core), while TF's oneDNN reaches 120-130; only fewer
multiplications beat that (deep-MNIST's 32->64 layer, 1 thread: ~12 ms -> 6-7 ms per kernel).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from tftk.kernels import conv_one_channel, winograd
from tftk.kernels.jit import njit

__all__ = ["conv_output_size", "window_output_size", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"]

Pair = tuple[int, int]


def conv_output_size(in_size: int, k: int, stride: int, dilation: int, padding: str) -> tuple[int, int, int]:
    """TF's output size and padding for one spatial dimension: returns (out, pad_before, pad_after).

    SAME: ``out = ceil(in / stride)`` and the total padding ``max((out-1)*stride + eff_k - in, 0)`` is split
    with the extra pixel at the end; VALID: ``out = ceil((in - eff_k + 1) / stride)``, no padding;
    ``eff_k = (k-1)*dilation + 1``.
    """
    if stride < 1 or dilation < 1 or k < 1:
        raise ValueError(f"conv_output_size: k, stride and dilation must be >= 1, got k={k}, "
                         f"stride={stride}, dilation={dilation}")
    eff_k = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-in_size // stride)
        total = max((out - 1) * stride + eff_k - in_size, 0)
        return out, total // 2, total - total // 2
    if padding == "VALID":
        if in_size < eff_k:
            raise ValueError(f"conv_output_size: VALID padding needs input size {in_size} >= "
                             f"effective filter size {eff_k}")
        return -(-(in_size - eff_k + 1) // stride), 0, 0
    raise ValueError(f'conv_output_size: padding must be "SAME" or "VALID", got {padding!r}')


def window_output_size(in_size: int, k: int, stride: int, dilation: int, pad: Pair) -> int:
    """Output length of one spatial dimension of a sliding window (conv or pool) with explicit padding."""
    return (in_size + pad[0] + pad[1] - (k - 1) * dilation - 1) // stride + 1


@njit(cache=True, inline="always")
def _move(dst, src, run, to_cols):  # pragma: no cover - compiled
    """dst[:run] = src[:run] (im2col) or src[:run] += dst[:run] (col2im); dst is the patch-matrix side.

    Indexing views by the loop counter lets LLVM vectorize: slice assignment goes through Numba's
    generic overlap-checking copy (4x slower here), and flat `a[base + k]` indexing keeps a
    negative-index check in the loop (10x slower).
    """
    if to_cols:
        for k in range(run):
            dst[k] = src[k]
    else:
        for k in range(run):
            src[k] += dst[k]


@njit(cache=True)
def _patch_rows(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols, to_cols):  # pragma: no cover - compiled
    """Copy between images b0..b1-1 of the zero-padded input and their rows of the patch matrix.

    to_cols: cols[((b-b0)*oh + i)*ow + j, (p*kw + q)*c + ch] = xpad[b, i*sh + p*dh, j*sw + q*dw, ch]
    (im2col); otherwise xpad[...] += cols[...] (col2im, the adjoint). With dw == 1 a filter row's
    kw*c taps are adjacent in xpad: one straight run per (output pixel, filter row).
    """
    n, hp, wp, c = xpad.shape
    xf = xpad.reshape(-1)
    cf = cols.reshape(-1)
    run = kw * c if dw == 1 else c
    runs = 1 if dw == 1 else kw
    width = kh * kw * c
    for b in range(b0, b1):
        for i in range(oh):
            for j in range(ow):
                row = (((b - b0) * oh + i) * ow + j) * width
                for p in range(kh):
                    line = ((b * hp + i * sh + p * dh) * wp + j * sw) * c
                    for q in range(runs):
                        src = line + q * dw * c
                        dst = row + (p * kw + q) * c
                        _move(cf[dst:dst + run], xf[src:src + run], run, to_cols)


@njit(cache=True, inline="always")
def _tap_rows(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols_t, to_cols):  # pragma: no cover - compiled
    """`_patch_rows` for a 1-channel input (xpad 3-D), with the patch matrix transposed, taps by rows:

    cols_t[p*kw + q, ((b-b0)*oh + i)*ow + j] = xpad[b, i*sh + p*dh, j*sw + q*dw]. With one channel
    the row layout moves runs of only kw taps; this one moves runs of ow pixels (3x faster on 28x28
    images), and BLAS reads it through a transposed view at the same speed. Inlined into one entry
    point per direction with `to_cols` a constant: with a run-time flag the gather ran 2.3x slower
    (`_patch_rows` keeps its flag: ~10% there, and one compilation less for a fresh install).
    """
    for p in range(kh):
        for q in range(kw):
            taps = cols_t[p * kw + q]
            for b in range(b0, b1):
                for i in range(oh):
                    line = xpad[b, i * sh + p * dh]
                    start = ((b - b0) * oh + i) * ow
                    if sw == 1:
                        _move(taps[start:start + ow], line[q * dw:q * dw + ow], ow, to_cols)
                    else:
                        for j in range(ow):
                            col = j * sw + q * dw
                            _move(taps[start + j:start + j + 1], line[col:col + 1], 1, to_cols)


@njit(cache=True)
def _tap_im2col(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols_t):  # pragma: no cover - compiled
    """`_tap_rows` towards the patch matrix."""
    _tap_rows(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols_t, True)


@njit(cache=True)
def _tap_col2im(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols_t):  # pragma: no cover - compiled
    """`_tap_rows` back onto the input (the adjoint)."""
    _tap_rows(xpad, b0, b1, kh, kw, sh, sw, dh, dw, oh, ow, cols_t, False)


# A tile's patch matrix stays within this many bytes, and a tile holds at least one image.
# On 1 thread, tiles of 0.5, 1, 2 and 4 MB ran the LeNet 16->32 and deep-MNIST 32->64 passes within
# noise of each other (12.7-14.1 ms for deep-MNIST's, CPU time at load 11): whole 20-30 MB patch
# matrices ran ~35% slower (7.2 vs 4.1 ms on LeNet's forward).
TILE_BYTES = 1 << 22


_local = threading.local()


def _scratch(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The calling thread's reusable patch-matrix buffer (contents undefined): warm pages, not fresh ones."""
    dtype = np.dtype(dtype)
    need = math.prod(shape) * dtype.itemsize
    held = getattr(_local, "scratch", None)
    if held is None or held.size < need:
        held = _local.scratch = np.empty(max(need, 1), dtype=np.uint8)
    return held[:need].view(dtype).reshape(shape)


class _Geometry:
    """One convolution's sizes and the tiles of images its patch matrix is built in."""

    def __init__(self, x_shape: tuple[int, ...], filter_shape: tuple[int, ...], strides: Pair,
                 pads: tuple[Pair, Pair], dilations: Pair, itemsize: int):
        self.n, self.h, self.w, self.c = (int(d) for d in x_shape)
        self.kh, self.kw, _, self.co = (int(d) for d in filter_shape)
        self.oh, self.ow = _check(x_shape, filter_shape, strides, pads, dilations)
        self.pads = pads
        self.args = (self.kh, self.kw, strides[0], strides[1], dilations[0], dilations[1], self.oh, self.ow)
        self.plain = self.kh == self.kw == 1 and strides == (1, 1) and pads == ((0, 0), (0, 0))
        self.per_image = self.oh * self.ow
        self.depth = self.kh * self.kw * self.c
        by_size = TILE_BYTES // (self.per_image * self.depth * itemsize)
        self.step = max(1, min(self.n, by_size))
        self.count = -(-self.n // self.step)

    def tile(self, index: int) -> tuple[int, int, int, int]:
        """(first image, end image, first row, end row) of tile `index`."""
        b0 = index * self.step
        b1 = min(b0 + self.step, self.n)
        return b0, b1, b0 * self.per_image, b1 * self.per_image

    def buffer(self, dtype: np.dtype, rows: int) -> np.ndarray:
        """The calling thread's scratch for `rows` patch rows (stored taps by rows for a 1-channel input)."""
        return _scratch((self.depth, rows) if self.c == 1 else (rows, self.depth), dtype)

    def matrix(self, cols: np.ndarray) -> np.ndarray:
        """The [rows, taps] patch matrix held in a `buffer`."""
        return cols.T if self.c == 1 else cols

    def move(self, xpad: np.ndarray, b0: int, b1: int, cols: np.ndarray, to_cols: bool) -> None:
        """Gather images b0..b1-1 of xpad into the `buffer` cols (im2col), or add cols back (col2im)."""
        if self.c == 1:
            (_tap_im2col if to_cols else _tap_col2im)(xpad.reshape(xpad.shape[:3]), b0, b1, *self.args, cols)
        else:
            _patch_rows(xpad, b0, b1, *self.args, cols, to_cols)

    def padded(self, x: np.ndarray | None, dtype: np.dtype) -> np.ndarray:
        """x zero-padded by the convolution's pads (all zeros when x is None).

        A padded copy is cheap (0.05-0.09 ms on the LeNet and deep-MNIST layers) and keeps bounds tests
        out of the gathers: gathering from x with the padding implicit ran 2.2x slower.
        """
        (top, bottom), (left, right) = self.pads
        xpad = np.zeros((self.n, self.h + top + bottom, self.w + left + right, self.c), dtype=dtype)
        if x is not None:
            xpad[:, top:top + self.h, left:left + self.w] = x
        return xpad

    def interior(self, xpad: np.ndarray) -> np.ndarray:
        (top, _), (left, _) = self.pads
        return xpad[:, top:top + self.h, left:left + self.w]


def _check(x_shape: tuple[int, ...], filter_shape: tuple[int, ...], strides: Pair, pads: tuple[Pair, Pair],
           dilations: Pair) -> tuple[int, int]:
    """Validate the geometry; return (out_h, out_w)."""
    if len(x_shape) != 4 or len(filter_shape) != 4:
        raise ValueError(f"conv2d: input must be 4-D NHWC and filter 4-D HWIO, got shapes {tuple(x_shape)} "
                         f"and {tuple(filter_shape)}")
    if x_shape[3] != filter_shape[2]:
        raise ValueError(f"conv2d: input has {x_shape[3]} channels but the filter expects {filter_shape[2]} "
                         f"(filter shape {tuple(filter_shape)})")
    if min(strides) < 1 or min(dilations) < 1 or min(min(pads[0]), min(pads[1])) < 0:
        raise ValueError(f"conv2d: strides and dilations must be >= 1 and pads >= 0, got strides={strides}, "
                         f"dilations={dilations}, pads={pads}")
    oh = window_output_size(x_shape[1], filter_shape[0], strides[0], dilations[0], pads[0])
    ow = window_output_size(x_shape[2], filter_shape[1], strides[1], dilations[1], pads[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"conv2d: the filter {tuple(filter_shape[:2])} (dilations {dilations}) does not fit "
                         f"the padded input {tuple(x_shape[1:3])} with pads {pads}")
    return oh, ow


def conv2d(x: np.ndarray, w: np.ndarray, strides: Pair = (1, 1), pads: tuple[Pair, Pair] = ((0, 0), (0, 0)),
           dilations: Pair = (1, 1)) -> np.ndarray:
    """TF's Conv2D (cross-correlation, no filter flip): NHWC x, HWIO w -> NHWC y."""
    g = _Geometry(x.shape, w.shape, strides, pads, dilations, x.itemsize)
    if winograd.applies(x.dtype, x.shape, w.shape, strides, dilations):
        return winograd.conv2d(x, np.asarray(w, dtype=x.dtype), pads)
    if conv_one_channel.applies(x.dtype, x.shape, w.shape, strides):
        return conv_one_channel.conv2d(x, w, strides, pads, dilations)
    wm = np.ascontiguousarray(w, dtype=x.dtype).reshape(g.depth, g.co)
    if g.plain:
        return (np.ascontiguousarray(x).reshape(-1, g.c) @ wm).reshape(g.n, g.oh, g.ow, g.co)
    xpad = g.padded(x, x.dtype)
    y = np.empty((g.n * g.per_image, g.co), dtype=x.dtype)
    for index in range(g.count):
        b0, b1, r0, r1 = g.tile(index)
        cols = g.buffer(x.dtype, r1 - r0)
        g.move(xpad, b0, b1, cols, True)
        np.matmul(g.matrix(cols), wm, out=y[r0:r1])
    return y.reshape(g.n, g.oh, g.ow, g.co)


def conv2d_backprop_input(dy: np.ndarray, w: np.ndarray, input_shape: tuple[int, ...], strides: Pair = (1, 1),
                          pads: tuple[Pair, Pair] = ((0, 0), (0, 0)), dilations: Pair = (1, 1)) -> np.ndarray:
    """TF's Conv2DBackpropInput: the gradient of conv2d with respect to x, shaped `input_shape`."""
    input_shape = tuple(int(d) for d in input_shape)
    g = _Geometry(input_shape, w.shape, strides, pads, dilations, dy.itemsize)
    if dy.shape != (g.n, g.oh, g.ow, g.co):
        raise ValueError(f"conv2d_backprop_input: dy has shape {dy.shape}, expected {(g.n, g.oh, g.ow, g.co)}")
    if winograd.applies(dy.dtype, input_shape, w.shape, strides, dilations) \
            and winograd.backprop_input_applies(w.shape, pads):
        return winograd.conv2d_backprop_input(dy, np.asarray(w, dtype=dy.dtype), input_shape, pads)
    dym = np.ascontiguousarray(dy).reshape(-1, g.co)
    wt = np.ascontiguousarray(w, dtype=dy.dtype).reshape(g.depth, g.co).T
    if g.plain:
        return (dym @ wt).reshape(input_shape)
    dxpad = g.padded(None, dy.dtype)
    for index in range(g.count):
        b0, b1, r0, r1 = g.tile(index)
        dcols = g.buffer(dy.dtype, r1 - r0)
        np.matmul(dym[r0:r1], wt, out=g.matrix(dcols))
        g.move(dxpad, b0, b1, dcols, False)
    return g.interior(dxpad).copy()


def conv2d_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape: tuple[int, ...], strides: Pair = (1, 1),
                           pads: tuple[Pair, Pair] = ((0, 0), (0, 0)), dilations: Pair = (1, 1)) -> np.ndarray:
    """TF's Conv2DBackpropFilter: the gradient of conv2d with respect to w, shaped `filter_shape`."""
    filter_shape = tuple(int(d) for d in filter_shape)
    g = _Geometry(x.shape, filter_shape, strides, pads, dilations, x.itemsize)
    if dy.shape != (g.n, g.oh, g.ow, g.co):
        raise ValueError(f"conv2d_backprop_filter: dy has shape {dy.shape}, expected {(g.n, g.oh, g.ow, g.co)}")
    if winograd.applies(x.dtype, x.shape, filter_shape, strides, dilations):
        return winograd.conv2d_backprop_filter(x, np.asarray(dy, dtype=x.dtype), filter_shape, pads)
    if conv_one_channel.applies(x.dtype, x.shape, filter_shape, strides):
        return conv_one_channel.conv2d_backprop_filter(x, dy, filter_shape, strides, pads, dilations)
    dym = np.ascontiguousarray(dy, dtype=x.dtype).reshape(-1, g.co)
    if g.plain:
        return (np.ascontiguousarray(x).reshape(-1, g.c).T @ dym).reshape(filter_shape)
    xpad = g.padded(x, x.dtype)
    dw = np.zeros((g.depth, g.co), dtype=x.dtype)
    part = np.empty_like(dw)
    for index in range(g.count):
        b0, b1, r0, r1 = g.tile(index)
        cols = g.buffer(x.dtype, r1 - r0)
        g.move(xpad, b0, b1, cols, True)
        dw += np.matmul(g.matrix(cols).T, dym[r0:r1], out=part)
    return dw.reshape(filter_shape)
