"""Winograd convolution F(4x4, r x r) for stride-1, undilated float32 convolutions with 3x3 or 5x5 filters.

Why: the im2col kernels (`tftk.kernels.conv`) spend ~90% of a multi-channel layer in BLAS's sgemm, and
OpenBLAS's sgemm tops out at ~100 GFLOP/s on one Zen 4 core where TF's oneDNN convolutions reach
120-130. Winograd's minimal filtering does the same convolution with fewer multiplications: 4x4
outputs of a 5x5 filter from 8x8 input tiles take 64 products per channel pair instead of 400
(6.25x fewer; 3x3 filters: 36 instead of 144). The products are 64 (36) batched sgemms
``V[xi] @ U[xi]`` of the transformed input tiles and filters; the transforms are sums, run with a
window's rows and every output point in registers (`_rows_transform`, `_columns_transform`). A chunk of
16 images of LeNet's 16->32 forward (1 thread): input transform ~75 us, sgemms ~165 us (~100 GFLOP/s),
output transform ~100 us.

BLAS: numpy's OpenBLAS runs its SkylakeX kernels on Zen 4. `OPENBLAS_CORETYPE=Zen` (its Haswell
kernels) made the dense layers' products 5-20% faster, but these sgemms with 16-64 deep products ~45%
slower (LeNet's forward chunk 162 -> 237 us). Whole training steps (bench_training, 1 thread, CPU ms):
cnn64 11.2 -> 12.6 (+12%), deep-MNIST 40.7 -> 41.2 (+1%), the LSTM 24.3 -> 22.2 (-9%). The setting is
per process and read only when numpy loads, so tftk leaves OpenBLAS's choice alone.

Layout: the transforms run over an "HWNC" copy of the input (height, width, then images and
channels together), so every inner loop is one contiguous run of ``images * channels`` floats (256
on the deep-MNIST layer's chunks of 8 images) instead of a run of ``channels`` per tile: an NHWC
version, whose loops ran 32 floats, took 3.7 ms for the deep-MNIST layer's input transform against
1.4 ms here. Rows of the sgemms are (tile, image).

The three kernels of TF's Conv2D:
- forward: ``y = A^T [ (G g G^T) . (B^T d B) ] A`` per tile (F(4, r), Lavin & Gray 2016);
- input gradient: the forward of dy padded by ``k-1-pad`` with the filter rotated 180 degrees and its
  channels swapped (a stride-1 convolution's adjoint is again a stride-1 convolution);
- filter gradient: F(r, 4) - each 4x4 tile of dy is a "filter" sliding over its 8x8 input window,
  giving that tile's r x r contribution - summed over tiles in the transformed domain (one batched
  sgemm ``V[xi]^T @ D[xi]``) before one output transform.

Accuracy: the transforms use the points 0, +-1, +-2, +-1/2, inf (exact in binary); on the deep-MNIST
layer the float32 error is ~6e-6 of the largest output against 6e-7 for im2col - within float32
tests' 1e-4 and far below training noise. float64 keeps the exact im2col kernels. The order of
every sum is fixed, so results are bit-identical run after run.
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from functools import lru_cache

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["applies", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"]

Pair = tuple[int, int]

TILE = 4  # outputs per tile side
FILTERS = (3, 5)  # square filter sizes with a transform here
# Below these the transforms cost more than the products they save (1 thread, against im2col; forward,
# input and filter gradient): 8 channels took 0.45-0.75x im2col's time (64x14x14, 3x3 8->8: 0.34/0.34/
# 0.32 against 0.48/0.45/0.52 ms; 5x5 8->16: 0.64/0.89/0.59 against 1.41/1.49/1.57), LeNet's 16->32
# ~0.35x; with 2-3 channels on one side the input gradient lost (5x5 2->16: 0.98 against 0.58 ms). With
# few tiles (4 images of 7x7: 16 sgemm rows) the sgemms are too short (0.08 against 0.06 ms).
MIN_CHANNELS = 8
MIN_ROWS = 64  # tiles x images
# Images per chunk: one chunk's transformed tiles (and sgemm products) stay within this many bytes, so
# they are still in cache when the output transform reads them. On one thread, deep-MNIST's 32->64
# layer (8 images a chunk at 2 MB) took 5.9/7.2/6.7 ms (forward/input/filter gradient) against
# 8.0/9.3/9.4 with 32 images (8 MB), 6.4/7.3/7.0 with 4 images (1 MB) and 8.8/10.4/10.3 one by one.
# With the register transforms 2 MB still measures best or tied (LeNet 16->32: 1.43-1.56 ms a kernel at
# 16 images, 1.61-1.74 at 8, 1.38-1.79 at 32; deep-MNIST 3.36-3.54 at 8 images, 3.67-3.80 at 4).
CHUNK_BYTES = 1 << 21
CACHE_LINE = 16  # floats in 64 bytes: scratch buffers start on a line; scratch rows are padded by one
_POINTS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2), Fraction(-1, 2))


_local = threading.local()
MAX_VIEWS = 256  # scratch views kept per thread


def _buffer(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The calling thread's float32 scratch array `name` (contents undefined), grown as needed.

    Fresh 5-15 MB arrays each call cost more in page faults than the transforms themselves (a deep-MNIST
    forward took 14.9 ms with new arrays, ~7 ms with these). Aligned to a cache line (malloc's large
    blocks start 16 bytes past one), so the transforms' 64-byte vectors do not straddle two lines.
    A view once made is kept for its shape: a call asks for ~6 views a chunk, and the Python that
    sized and sliced them each time held the GIL that a second thread's kernel calls wait for.
    """
    views = getattr(_local, "views", None)
    if views is None:
        views = _local.views = {}
        _local.buffers = {}
    view = views.get((name, shape))
    if view is not None:
        return view
    held = _local.buffers
    size = math.prod(shape)
    if name not in held or held[name].size < size:
        raw = np.empty(size + CACHE_LINE, dtype=np.float32)
        first = (-raw.ctypes.data % (CACHE_LINE * 4)) // 4
        held[name] = raw[first:first + size]
        for key in [key for key in views if key[0] == name]:  # views of the smaller array
            del views[key]
    if len(views) >= MAX_VIEWS:  # calls of many shapes (a varying batch): start over
        views.clear()
    view = views[(name, shape)] = held[name][:size].reshape(shape)
    return view


@lru_cache(maxsize=None)
def transforms(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A^T [m, n], G [n, r], B^T [n, n]) of F(m, r), n = m + r - 1, in float64.

    Cook-Toom construction on the points above plus infinity: A^T is the Vandermonde matrix of the points
    (last column the point at infinity), G the filter's values at the points divided by the Lagrange
    denominators, and B^T the matrix that makes ``A^T [(G g) . (B^T d)]`` the correlation of d with g,
    solved exactly in rationals from that identity.
    """
    n = m + r - 1
    points = _POINTS[:n - 1]
    at = [[Fraction(0)] * n for _ in range(m)]
    g = [[Fraction(0)] * r for _ in range(n)]
    for j, a in enumerate(points):
        denominator = Fraction(1)
        for other in points:
            if other != a:
                denominator *= a - other
        for i in range(m):
            at[i][j] = a ** i
        for k in range(r):
            g[j][k] = a ** k / denominator
    at[m - 1][n - 1] = Fraction(1)
    g[n - 1][r - 1] = Fraction(1)
    # sum_j at[i][j] g[j][k] bt[j][l] = [l == i + k] for every (i, k): one linear system per column l
    rows = [[at[i][j] * g[j][k] for j in range(n)] for i in range(m) for k in range(r)]
    bt = [[Fraction(0)] * n for _ in range(n)]
    for col in range(n):
        rhs = [Fraction(int(col == i + k)) for i in range(m) for k in range(r)]
        solution = _solve(rows, rhs, n)
        for j in range(n):
            bt[j][col] = solution[j]
    return tuple(np.array([[float(v) for v in row] for row in mat]) for mat in (at, g, bt))


def _solve(rows: list[list[Fraction]], rhs: list[Fraction], n: int) -> list[Fraction]:
    """The solution of a consistent (possibly overdetermined) rational system, by Gauss-Jordan elimination."""
    aug = [row[:] + [b] for row, b in zip(rows, rhs)]
    pivots = []
    r = 0
    for c in range(n):
        pivot = next((i for i in range(r, len(aug)) if aug[i][c] != 0), None)
        if pivot is None:
            continue
        aug[r], aug[pivot] = aug[pivot], aug[r]
        aug[r] = [v / aug[r][c] for v in aug[r]]
        for i in range(len(aug)):
            if i != r and aug[i][c] != 0:
                f = aug[i][c]
                aug[i] = [v - f * p for v, p in zip(aug[i], aug[r])]
        pivots.append(c)
        r += 1
    if any(row[n] != 0 for row in aug[r:]) or len(pivots) != n:
        raise ArithmeticError("Winograd transform: the system for B^T has no unique solution")
    return [aug[i][n] for i in range(n)]


def applies(dtype: np.dtype, x_shape: tuple[int, ...], filter_shape: tuple[int, ...], strides: Pair,
            dilations: Pair) -> bool:
    """Whether a convolution of this geometry runs here: float32, stride 1, no dilation, a 3x3 or 5x5 filter,
    >= MIN_CHANNELS channels in and out, and >= MIN_ROWS tiles over the batch."""
    n, h, w = x_shape[:3]
    kh, kw, c, co = filter_shape
    tiles = -(-h // TILE) * -(-w // TILE) * n
    return (np.dtype(dtype) == np.float32 and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and kh == kw and kh in FILTERS and min(c, co) >= MIN_CHANNELS and tiles >= MIN_ROWS)


SLOTS = 8  # the points a transform handles at once: 0, three pairs +-p, infinity (F(4, 5)'s 8x8 tiles)
PAIRS = 3


def _slot_points(n: int) -> np.ndarray:
    """Which of the n points (`transforms`' order: 0, +-1, +-2, ..., infinity) sits in each of the SLOTS slots:
    slot 0 the point 0, slots 1-6 the pairs (+p, -p) in order, slot 7 infinity; -1 where n < SLOTS leaves a
    pair slot empty."""
    if n not in (SLOTS - 2, SLOTS):
        raise ValueError(f"Winograd transform: {n} points do not fill the slots (0, two or three pairs +-p, "
                         "infinity)")
    slots = np.full(SLOTS, -1, dtype=np.int64)
    slots[:n - 1] = np.arange(n - 1)
    slots[SLOTS - 1] = n - 1
    return slots


@lru_cache(maxsize=None)
def _row_slots(m: int, r: int, which: int) -> tuple[np.ndarray, np.ndarray]:
    """transforms(m, r)[which] (1: G, 2: B^T: a row per point, a column per window position) as slot rows
    [SLOTS, SLOTS] (empty slots and window positions past the matrix's columns 0), and the slots' points.

    Checks the symmetry `_rows_transform` relies on: the row of -p is the row of +p with odd columns negated
    (p(-x) = p(x) with its odd powers' signs flipped, the Lagrange denominators being equal).
    """
    mat = transforms(m, r)[which]
    n, window = mat.shape
    points = _slot_points(n)
    if window not in (4, n):
        raise ValueError(f"Winograd transform F({m}, {r}): no compiled loop for {window} window positions")
    rows = np.zeros((SLOTS, SLOTS))
    for slot, point in enumerate(points):
        if point >= 0:
            rows[slot, :window] = mat[point]
    signs = (-1.0) ** np.arange(SLOTS)
    for pair in range(PAIRS):
        if not np.array_equal(rows[2 * pair + 2], rows[2 * pair + 1] * signs):
            raise ArithmeticError(f"Winograd transform F({m}, {r}): rows {2 * pair + 1}, {2 * pair + 2} are not "
                                  "a +-p pair")
    return rows.astype(np.float32), points


@lru_cache(maxsize=None)
def _column_slots(r: int) -> tuple[np.ndarray, np.ndarray]:
    """A^T of F(TILE, r) (a column per point) as [TILE, SLOTS] columns in slot order (empty slots 0), and the
    slots' points (-1 for an empty slot), checking the symmetry `_columns_transform` relies on."""
    at = transforms(TILE, r)[0]
    points = _slot_points(at.shape[1])
    cols = np.zeros((TILE, SLOTS))
    for slot, point in enumerate(points):
        if point >= 0:
            cols[:, slot] = at[:, point]
    signs = (-1.0) ** np.arange(TILE)
    for pair in range(PAIRS):
        if not np.array_equal(cols[:, 2 * pair + 2], cols[:, 2 * pair + 1] * signs):
            raise ArithmeticError(f"Winograd transform F({TILE}, {r}): columns {2 * pair + 1}, {2 * pair + 2} of A^T "
                                  "are not a +-p pair")
    return cols.astype(np.float32), points


@njit(cache=True)
def _every_other(window, c0, c1, c2, c3, d0, d1, d2, d3):  # pragma: no cover - compiled
    """c0*d0 + c1*d1 + c2*d2 + c3*d3 over every other window position, the terms past `window` left out.

    Not inlined by Numba: LLVM inlines it and folds the constant `window` all the same, while Numba's own
    inlining of its ten calls in each of the eight copies of `_rows_transform` took 14 s of compilation
    against 6 s (CPU; the previous kernels compiled in 3 s)."""
    total = c0 * d0 + c1 * d1
    if window > 4:
        total = total + c2 * d2
    if window > 6:
        total = total + c3 * d3
    return total


@njit(cache=True, inline="always")
def _rows_transform(dst, dfirst, dstride, points, scratch, src, sfirst, p, window, pairs, run):  # pragma: no cover
    """dst[dfirst + points[s]*dstride, :run] = sum_{j < window} p[s, j] * src[sfirst + j, :run] for the slots s of
    the point 0, `pairs` pairs and infinity.

    All slots in one pass over the window's rows, held in registers: each source float is loaded once
    instead of once per output that uses it (LeNet's 16->32 input transform of 16 images: 120 -> 70-80 us,
    with the buffers' alignment and padding). The pairs share their sums: out(+-p) = E +- O, with E and O
    the terms of +p's row at the even and the odd window positions (the point 0's and infinity's rows are
    summed as E + O too). The coefficients are read at run time, zeros included; `window` (4, 6 or 8) and
    `pairs` (2 or 3) are constants at each call site (`_tile_transforms`), so the branches on them leave the
    loop.
    """
    s1, s2, s3 = sfirst + 1, sfirst + 2, sfirst + 3
    s4, s5 = sfirst + min(4, window - 1), sfirst + min(5, window - 1)
    s6, s7 = sfirst + min(6, window - 1), sfirst + min(7, window - 1)
    r0, r7 = dfirst + points[0] * dstride, dfirst + points[SLOTS - 1] * dstride
    r1, r2 = dfirst + points[1] * dstride, dfirst + points[2] * dstride
    r3, r4 = dfirst + points[3] * dstride, dfirst + points[4] * dstride
    r5 = dfirst + points[5] * dstride if pairs > 2 else scratch
    r6 = dfirst + points[6] * dstride if pairs > 2 else scratch
    a0, a1, a2, a3, a4, a5, a6, a7 = p[0, 0], p[0, 1], p[0, 2], p[0, 3], p[0, 4], p[0, 5], p[0, 6], p[0, 7]
    b0, b1, b2, b3, b4, b5, b6, b7 = p[1, 0], p[1, 1], p[1, 2], p[1, 3], p[1, 4], p[1, 5], p[1, 6], p[1, 7]
    c0, c1, c2, c3, c4, c5, c6, c7 = p[3, 0], p[3, 1], p[3, 2], p[3, 3], p[3, 4], p[3, 5], p[3, 6], p[3, 7]
    e0, e1, e2, e3, e4, e5, e6, e7 = p[5, 0], p[5, 1], p[5, 2], p[5, 3], p[5, 4], p[5, 5], p[5, 6], p[5, 7]
    z0, z1, z2, z3, z4, z5, z6, z7 = p[7, 0], p[7, 1], p[7, 2], p[7, 3], p[7, 4], p[7, 5], p[7, 6], p[7, 7]
    for k in range(run):
        d0, d1, d2, d3 = src[sfirst, k], src[s1, k], src[s2, k], src[s3, k]
        d4, d5, d6, d7 = src[s4, k], src[s5, k], src[s6, k], src[s7, k]
        even = _every_other(window, a0, a2, a4, a6, d0, d2, d4, d6)
        dst[r0, k] = even + _every_other(window, a1, a3, a5, a7, d1, d3, d5, d7)
        even = _every_other(window, b0, b2, b4, b6, d0, d2, d4, d6)
        odd = _every_other(window, b1, b3, b5, b7, d1, d3, d5, d7)
        dst[r1, k] = even + odd
        dst[r2, k] = even - odd
        even = _every_other(window, c0, c2, c4, c6, d0, d2, d4, d6)
        odd = _every_other(window, c1, c3, c5, c7, d1, d3, d5, d7)
        dst[r3, k] = even + odd
        dst[r4, k] = even - odd
        if pairs > 2:
            even = _every_other(window, e0, e2, e4, e6, d0, d2, d4, d6)
            odd = _every_other(window, e1, e3, e5, e7, d1, d3, d5, d7)
            dst[r5, k] = even + odd
            dst[r6, k] = even - odd
        even = _every_other(window, z0, z2, z4, z6, d0, d2, d4, d6)
        dst[r7, k] = even + _every_other(window, z1, z3, z5, z7, d1, d3, d5, d7)


@njit(cache=True, inline="always")
def _columns_transform(dst, dfirst, dstride, src, sfirst, sstride, points, at, pairs, run):  # pragma: no cover
    """dst[dfirst + i*dstride, :run] = sum_s at[i, s] * src[sfirst + points[s]*sstride, :run] for i < TILE, over
    the slots of the point 0, `pairs` pairs (a constant at the call site) and infinity.

    The slots' rows are loaded once into registers, and each pair is summed and differenced once: A^T's
    column of -p is its column of +p times (-1)^i, so output i takes at[i, +p] (M(+p) +- M(-p)), the sum
    for even i, the difference for odd.
    """
    p0, p7 = sfirst + points[0] * sstride, sfirst + points[SLOTS - 1] * sstride
    p1, p2 = sfirst + points[1] * sstride, sfirst + points[2] * sstride
    p3, p4 = sfirst + points[3] * sstride, sfirst + points[4] * sstride
    p5 = sfirst + points[5] * sstride if pairs > 2 else p0
    p6 = sfirst + points[6] * sstride if pairs > 2 else p0
    r0, r1, r2, r3 = dfirst, dfirst + dstride, dfirst + 2 * dstride, dfirst + 3 * dstride
    a0, a1, a3, a5, a7 = at[0, 0], at[0, 1], at[0, 3], at[0, 5], at[0, 7]
    b0, b1, b3, b5, b7 = at[1, 0], at[1, 1], at[1, 3], at[1, 5], at[1, 7]
    c0, c1, c3, c5, c7 = at[2, 0], at[2, 1], at[2, 3], at[2, 5], at[2, 7]
    e0, e1, e3, e5, e7 = at[3, 0], at[3, 1], at[3, 3], at[3, 5], at[3, 7]
    for k in range(run):
        m0, m7 = src[p0, k], src[p7, k]
        x1, y1, x2, y2 = src[p1, k], src[p2, k], src[p3, k], src[p4, k]
        sum1, sum2, dif1, dif2 = x1 + y1, x2 + y2, x1 - y1, x2 - y2
        out0 = a0 * m0 + a1 * sum1 + a3 * sum2
        out1 = b0 * m0 + b1 * dif1 + b3 * dif2
        out2 = c0 * m0 + c1 * sum1 + c3 * sum2
        out3 = e0 * m0 + e1 * dif1 + e3 * dif2
        if pairs > 2:
            x3, y3 = src[p5, k], src[p6, k]
            sum3, dif3 = x3 + y3, x3 - y3
            out0, out1, out2, out3 = out0 + a5 * sum3, out1 + b5 * dif3, out2 + c5 * sum3, out3 + e5 * dif3
        dst[r0, k] = out0 + a7 * m7
        dst[r1, k] = out1 + b7 * m7
        dst[r2, k] = out2 + c7 * m7
        dst[r3, k] = out3 + e7 * m7


@njit(cache=True, inline="always")
def _tile_transform(src, p, points, window, pairs, step, ny, nx, run, out, tmp):  # pragma: no cover - compiled
    """out[(a*n + b)*(ny*nx + 1) + ty*nx + tx, :] = (P d P^T)[a, b] for every window d of src, each element a run
    of `run` floats; the row after each point's tiles is padding (`_Tiling.input_tiles`), the first of them
    the scratch of empty slots.

    src is [rows, cols * run] (HWNC flattened: a pixel is `run` floats); window (ty, tx) starts at pixel
    (ty*step, tx*step). P is given in slot rows (`_row_slots`) with the slots' points. Two passes: down
    the columns on whole rows of pixels (each window row one run) into tmp [n + 1, (cols + 1) * run], then
    along each window's row.
    """
    n = points[SLOTS - 1] + 1
    width = src.shape[1]
    stride = out.shape[0] // (n * n)
    pixels = tmp.reshape(-1, run)
    per_row = tmp.shape[1] // run
    for ty in range(ny):
        _rows_transform(tmp, 0, 1, points, n, src, ty * step, p, window, pairs, width)
        for tx in range(nx):
            for a in range(n):
                _rows_transform(out, a * n * stride + ty * nx + tx, stride, points, stride - 1, pixels,
                                a * per_row + tx * step, p, window, pairs, run)


@njit(cache=True)
def _tile_transforms(src, p, points, window, step, ny, nx, run, out, tmp):  # pragma: no cover - compiled
    """`_tile_transform` with the window (8, 6 or 4 positions) and the pairs (3 or 2) as constants: one
    compiled loop per transform shape, without the terms a smaller shape lacks."""
    pairs = (points[SLOTS - 1] - 1) // 2
    if window == 8:
        _tile_transform(src, p, points, 8, 3, step, ny, nx, run, out, tmp)
    elif window == 6:
        _tile_transform(src, p, points, 6, 2, step, ny, nx, run, out, tmp)
    elif pairs == 3:
        _tile_transform(src, p, points, 4, 3, step, ny, nx, run, out, tmp)
    else:
        _tile_transform(src, p, points, 4, 2, step, ny, nx, run, out, tmp)


@njit(cache=True, inline="always")
def _output_transform(prod, at, points, pairs, ny, nx, images, b0, y, rows, out):  # pragma: no cover
    """y[b0 + image, tile's pixels, :] = A^T M A of every (tile, image), M its products, cropped at y's edge.

    prod is [alpha^2 * tiles, images * channels] (point (a, b) of a tile in row (a*alpha + b)*tiles + tile);
    A^T is given in slot columns (`_column_slots`); rows [TILE * alpha, >= images * channels] and out
    [TILE^2, same] are one tile's scratch, so they stay in cache between the column pass, the row pass and
    the copy into y (against two sgemms over the whole chunk and a transposing copy: LeNet's 16->32
    forward 0.93 -> 0.88 ms, deep-MNIST's 32->64 1.36 -> 1.19 ms on 1 thread).
    """
    m = at.shape[0]
    alpha = points[SLOTS - 1] + 1
    oh, ow, co = y.shape[1], y.shape[2], y.shape[3]
    per_tile = images * co
    tiles = ny * nx
    for tile in range(tiles):
        ty = tile // nx
        tx = tile - ty * nx
        for b in range(alpha):
            _columns_transform(rows, b, alpha, prod, b * tiles + tile, alpha * tiles, points, at, pairs, per_tile)
        for i in range(m):
            _columns_transform(out, i * m, 1, rows, i * alpha, 1, points, at, pairs, per_tile)
        for i in range(min(m, oh - ty * m)):
            for j in range(min(m, ow - tx * m)):
                for image in range(images):
                    for k in range(co):
                        y[b0 + image, ty * m + i, tx * m + j, k] = out[i * m + j, image * co + k]


@njit(cache=True)
def _output_transforms(prod, at, points, ny, nx, images, b0, y, rows, out):  # pragma: no cover - compiled
    """`_output_transform` with the pairs (3 for 5x5 filters, 2 for 3x3) as a constant."""
    if points[SLOTS - 1] == SLOTS - 1:
        _output_transform(prod, at, points, 3, ny, nx, images, b0, y, rows, out)
    else:
        _output_transform(prod, at, points, 2, ny, nx, images, b0, y, rows, out)


@njit(cache=True)
def _pad_to_hwnc(x, b0, top, left, out):  # pragma: no cover - compiled
    """out[y, x', image, :] = x[b0 + image, y - top, x' - left, :], zero outside x: NHWC images b0.. padded
    and laid out HWNC in one pass, each element written once (twice as fast as numpy's zero fill and
    transposing copy: 0.11 -> 0.05 ms for LeNet's 64x14x14x16)."""
    hp, wp, images, c = out.shape
    h, w = x.shape[1], x.shape[2]
    for yy in range(hp):
        iy = yy - top
        for xx in range(wp):
            ix = xx - left
            inside = iy >= 0 and iy < h and ix >= 0 and ix < w
            for image in range(images):
                dst = out[yy, xx, image]
                if inside:
                    src = x[b0 + image, iy, ix]
                    for k in range(c):
                        dst[k] = src[k]
                else:
                    for k in range(c):
                        dst[k] = 0.0


class _Tiling:
    """One convolution's tiles: outputs [oh, ow] in ny x nx tiles of TILE, the padded input that covers them."""

    def __init__(self, x_shape: tuple[int, ...], r: int, pads: tuple[Pair, Pair], channels: int, chunk_bytes: int):
        self.n, self.h, self.w, self.c = (int(d) for d in x_shape)
        (self.top, bottom), (self.left, right) = pads
        self.r = r
        self.oh = self.h + self.top + bottom - r + 1
        self.ow = self.w + self.left + right - r + 1
        self.ny, self.nx = -(-self.oh // TILE), -(-self.ow // TILE)
        self.hp, self.wp = self.ny * TILE + r - 1, self.nx * TILE + r - 1
        self.alpha = TILE + r - 1
        per_image = self.alpha ** 2 * self.ny * self.nx * max(self.c, channels) * 4
        chunk = max(1, min(self.n, chunk_bytes // per_image))
        self.chunks = tuple((b0, min(b0 + chunk, self.n)) for b0 in range(0, self.n, chunk))

    def padded_hwnc(self, x: np.ndarray, b0: int, b1: int) -> np.ndarray:
        """Images b0..b1-1 of x, zero-padded to [hp, wp] and laid out [hp, wp * images * channels]."""
        xp = _buffer("input", (self.hp, self.wp, b1 - b0, self.c))
        _pad_to_hwnc(x, b0, self.top, self.left, xp)
        return xp.reshape(self.hp, -1)

    def input_tiles(self, src: np.ndarray, m: int, r: int, which: int, run: int, name: str) -> np.ndarray:
        """[alpha^2, ny*nx, run] windows of src (at stride TILE) transformed by transforms(m, r)[which].

        Each point's tiles are followed by a row of padding (the first also the scratch of empty slots), and
        the transform's scratch rows by a pixel's: rows a multiple of 4 KB apart share the L1 cache's sets,
        and the 8 + 8 rows a transform reads and writes at once evict each other. Without the padding,
        LeNet's input transform of 16 images took 74-86 us against 68-72, the filter gradient's transform
        of dy 124 us against 70.
        """
        p, points = _row_slots(m, r, which)
        n, window = transforms(m, r)[which].shape
        tiles = self.ny * self.nx
        out = _buffer(name, (n * n, tiles + 1, run))
        tmp = _buffer("lines", (n + 1, src.shape[1] + run))
        _tile_transforms(src, p, points, window, TILE, self.ny, self.nx, run, out.reshape(-1, run), tmp)
        return out[:, :tiles]


def _tiling(x_shape: tuple[int, ...], r: int, pads: tuple[Pair, Pair], channels: int) -> _Tiling:
    """The `_Tiling` of a geometry, made once (a training step convolves the same shapes every time);
    keyed by hashable copies of the sizes, and by `CHUNK_BYTES` as it is now."""
    return _made_tiling(tuple(x_shape), r, (tuple(pads[0]), tuple(pads[1])), channels, CHUNK_BYTES)


_made_tiling = lru_cache(maxsize=256)(_Tiling)


def _filter_tiles(w: np.ndarray, g: np.ndarray) -> np.ndarray:
    """U[a*n + b, c, o] = (G w[:, :, c, o] G^T)[a, b], computed in float64 and rounded once.

    Two plain products over the filter's rows then columns, all channel pairs at once (LeNet's 16->32
    filter: 27 us against 56-200 us for two np.tensordot calls, which transpose their operands).
    """
    r, _, c, co = w.shape
    n = g.shape[0]
    rows = (g @ w.astype(np.float64).reshape(r, -1)).reshape(n, r, c * co)  # [a, q, (c, o)]
    return np.matmul(g, rows).reshape(n * n, c, co).astype(np.float32)  # [a, b, (c, o)]


def conv2d(x: np.ndarray, w: np.ndarray, pads: tuple[Pair, Pair]) -> np.ndarray:
    """Stride-1 Conv2D of float32 NHWC x with an r x r HWIO filter (see `applies`), by F(4x4, r x r)."""
    r, co = w.shape[0], w.shape[3]
    t = _tiling(x.shape, r, pads, co)
    x = np.ascontiguousarray(x)
    u = _filter_tiles(w, transforms(TILE, r)[1])
    y = np.empty((t.n, t.oh, t.ow, co), dtype=np.float32)
    for b0, b1 in t.chunks:
        images = b1 - b0
        v = t.input_tiles(t.padded_hwnc(x, b0, b1), TILE, r, 2, images * t.c, "tiles")
        prod = _buffer("products", (t.alpha ** 2, t.ny * t.nx * images * co))  # [(a, b), (tile, image, o)]
        np.matmul(v.reshape(t.alpha ** 2, -1, t.c), u, out=prod.reshape(t.alpha ** 2, -1, co))
        rows = _buffer("rows", (TILE * t.alpha, images * co + CACHE_LINE))
        out = _buffer("output", (TILE * TILE, images * co + CACHE_LINE))
        _output_transforms(prod.reshape(-1, images * co), *_column_slots(r), t.ny, t.nx, images, b0, y, rows, out)
    return y


def backprop_input_applies(filter_shape: tuple[int, ...], pads: tuple[Pair, Pair]) -> bool:
    """The input gradient runs as a forward convolution when no pad reaches a filter's width."""
    k = filter_shape[0]
    return max(max(pads[0]), max(pads[1])) <= k - 1


def conv2d_backprop_input(dy: np.ndarray, w: np.ndarray, input_shape: tuple[int, ...],
                          pads: tuple[Pair, Pair]) -> np.ndarray:
    """Conv2DBackpropInput as the forward convolution of dy with w rotated 180 degrees, channels swapped."""
    k = w.shape[0]
    (top, bottom), (left, right) = pads
    flipped = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
    dx = conv2d(dy, flipped, ((k - 1 - top, k - 1 - bottom), (k - 1 - left, k - 1 - right)))
    if dx.shape != tuple(input_shape):
        raise ValueError(f"conv2d_backprop_input: dy {dy.shape} does not come from an input of shape "
                         f"{tuple(input_shape)} with pads {pads}")
    return dx


def conv2d_backprop_filter(x: np.ndarray, dy: np.ndarray, filter_shape: tuple[int, ...],
                           pads: tuple[Pair, Pair]) -> np.ndarray:
    """Conv2DBackpropFilter by F(r x r, 4x4): each dy tile's contribution, summed over tiles before the output
    transform."""
    r, co = filter_shape[0], filter_shape[3]
    t = _tiling(x.shape, r, pads, co)
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    at = transforms(r, TILE)[0]  # r outputs (filter taps) from a 4-tap "filter" (a dy tile)
    n = t.alpha
    total = np.zeros((n * n, t.c, co), dtype=np.float32)
    part = np.empty_like(total)
    for b0, b1 in t.chunks:
        images = b1 - b0
        v = t.input_tiles(t.padded_hwnc(x, b0, b1), r, TILE, 2, images * t.c, "tiles")
        dyp = _buffer("gradient", (t.ny * TILE, t.nx * TILE, images, co))
        _pad_to_hwnc(dy, b0, 0, 0, dyp)
        d = t.input_tiles(dyp.reshape(t.ny * TILE, -1), r, TILE, 1, images * co, "gradient tiles")
        total += np.matmul(v.reshape(n * n, -1, t.c).transpose(0, 2, 1), d.reshape(n * n, -1, co), out=part)
    rows = (at @ total.astype(np.float64).reshape(n, -1)).reshape(r, n, t.c * co)  # [p, b, (c, o)]
    return np.matmul(at, rows).reshape(filter_shape).astype(np.float32)  # [p, q, (c, o)]
