"""Winograd convolution F(4x4, r x r) for stride-1, undilated float32 convolutions with 3x3 or 5x5 filters.

Why: the im2col kernels (`tftk.kernels.conv`) spend ~90% of a multi-channel layer in BLAS's sgemm, and
OpenBLAS's sgemm tops out at ~100 GFLOP/s on one Zen 4 core where TF's oneDNN convolutions reach
120-130. Winograd's minimal filtering does the same convolution with fewer multiplications: 4x4
outputs of a 5x5 filter from 8x8 input tiles take 64 products per channel pair instead of 400
(6.25x fewer; 3x3 filters: 36 instead of 144). The products are 64 (36) batched sgemms
``V[xi] @ U[xi]`` of the transformed input tiles and filters; the transforms are cheap sums.

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

import threading
from fractions import Fraction
from functools import lru_cache

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["applies", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter"]

Pair = tuple[int, int]

TILE = 4  # outputs per tile side
FILTERS = (3, 5)  # square filter sizes with a transform here
# Below these the transforms cost more than the products they save (1 thread, against im2col): 8->8
# channels ran 1.2-1.75x slower (3x3 filters on 64x14x14) and even (5x5); 16->16 3x3 on 32x32x32 ran
# 0.8-0.9x, LeNet's 16->32 5x5 ~0.7x, deep-MNIST's 32->64 ~0.55x. With few tiles (4 images of 7x7:
# 16 sgemm rows) the sgemms are too short and the filter transform dominates (2-2.7x slower).
MIN_CHANNELS = 16
MIN_ROWS = 64  # tiles x images
# Images per chunk: one chunk's transformed tiles (and sgemm products) stay within this many bytes, so
# they are still in cache when the output transform reads them. On one thread, deep-MNIST's 32->64
# layer (8 images a chunk at 2 MB) took 5.9/7.2/6.7 ms (forward/input/filter gradient) against
# 8.0/9.3/9.4 with 32 images (8 MB), 6.4/7.3/7.0 with 4 images (1 MB) and 8.8/10.4/10.3 one by one.
CHUNK_BYTES = 1 << 21
_POINTS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(2), Fraction(-2), Fraction(1, 2), Fraction(-1, 2))


_local = threading.local()


def _buffer(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The calling thread's float32 scratch array `name` (contents undefined), grown as needed.

    Fresh 5-15 MB arrays each call cost more in page faults than the transforms themselves (a deep-MNIST
    forward took 14.9 ms with new arrays, ~7 ms with these).
    """
    held = getattr(_local, "buffers", None)
    if held is None:
        held = _local.buffers = {}
    size = int(np.prod(shape))
    if name not in held or held[name].size < size:
        held[name] = np.empty(size, dtype=np.float32)
    return held[name][:size].reshape(shape)


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


WINDOW = 8  # the most terms a transform sums (F(4, 5)'s input tiles are 8x8)


@njit(cache=True, inline="always")
def _combine(dst, row, src, first, stride, taps, coef, count, run):  # pragma: no cover - compiled
    """dst[row, :run] = sum_{x < count} coef[x] * src[first + taps[x]*stride, :run] (count <= WINDOW; coef is 0
    from `count` on, where the row read is the first again), in one pass and one store.

    One expression instead of a pass of dst += coef * s per term (each a load and a store of dst):
    LeNet's 16->32 input transform went from 0.86 to 0.62 ms, and the layer's three kernels ran
    10-19% faster (deep-MNIST's 32->64 too). Branches for 4 and 6 terms (most rows of B^T and G have
    4 or 6 nonzeros): the filter gradient's dy transform 1.03 -> 0.72 ms. Inlined, with 2-D arrays
    indexed [row, loop counter], so LLVM vectorizes the loop and a run costs a few integer operations
    to start: with a view sliced per source row (eight views a call) starting a run cost more than
    its 256 floats of sums: LeNet's 16->32 input transform took 0.64 ms, 0.47 ms here (bits unchanged).
    """
    c0, c1, c2, c3, c4, c5, c6, c7 = coef[0], coef[1], coef[2], coef[3], coef[4], coef[5], coef[6], coef[7]
    r0 = first + taps[0] * stride
    r1 = first + taps[1] * stride if count > 1 else r0
    r2 = first + taps[2] * stride if count > 2 else r0
    r3 = first + taps[3] * stride if count > 3 else r0
    r4 = first + taps[4] * stride if count > 4 else r0
    r5 = first + taps[5] * stride if count > 5 else r0
    r6 = first + taps[6] * stride if count > 6 else r0
    r7 = first + taps[7] * stride if count > 7 else r0
    if count <= 4:
        for k in range(run):
            dst[row, k] = c0 * src[r0, k] + c1 * src[r1, k] + c2 * src[r2, k] + c3 * src[r3, k]
    elif count <= 6:
        for k in range(run):
            dst[row, k] = (c0 * src[r0, k] + c1 * src[r1, k] + c2 * src[r2, k] + c3 * src[r3, k]
                           + c4 * src[r4, k] + c5 * src[r5, k])
    else:
        for k in range(run):
            dst[row, k] = (c0 * src[r0, k] + c1 * src[r1, k] + c2 * src[r2, k] + c3 * src[r3, k]
                           + c4 * src[r4, k] + c5 * src[r5, k] + c6 * src[r6, k] + c7 * src[r7, k])


@njit(cache=True)
def _tile_transform(src, coefs, taps, counts, step, ny, nx, run, out, tmp):  # pragma: no cover - compiled
    """out[(a*n + b)*ny*nx + ty*nx + tx, :] = (P d P^T)[a, b] for every window d of src, each element a run of
    `run` floats.

    src is [rows, cols * run] (HWNC flattened: a pixel is `run` floats); window (ty, tx) starts at pixel
    (ty*step, tx*step). P's row a is given by its nonzero terms (`_terms`): counts[a] coefficients
    coefs[a] at window positions taps[a], in order, so the sums run as a plain product's would, zeros
    skipped. Two passes: down the columns on whole rows of pixels (each window row one run), into
    tmp [n, cols * run], then along each window's row.
    """
    n = coefs.shape[0]
    width = src.shape[1]
    tiles = ny * nx
    pixels = tmp.reshape(n * (width // run), run)
    per_row = width // run
    for ty in range(ny):
        for a in range(n):
            _combine(tmp, a, src, ty * step, 1, taps[a], coefs[a], counts[a], width)
        for tx in range(nx):
            for a in range(n):
                for b in range(n):
                    _combine(out, (a * n + b) * tiles + ty * nx + tx, pixels, a * per_row + tx * step, 1, taps[b],
                             coefs[b], counts[b], run)


def _terms(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coefs, taps, counts) of transform matrix p [n, window]: each row's nonzero entries, their columns,
    and how many, padded to WINDOW with coefficient 0 at column 0."""
    n = p.shape[0]
    coefs = np.zeros((n, WINDOW), dtype=np.float32)
    taps = np.zeros((n, WINDOW), dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    for a in range(n):
        columns = np.flatnonzero(p[a])
        counts[a] = len(columns)
        taps[a, :len(columns)] = columns
        coefs[a, :len(columns)] = p[a, columns]
    return coefs, taps, counts


@lru_cache(maxsize=None)
def _transform_terms(m: int, r: int, which: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_terms` of transforms(m, r)[which] (0: A^T, 1: G, 2: B^T), computed once."""
    return _terms(transforms(m, r)[which])


@njit(cache=True)
def _output_transform(prod, coefs, taps, counts, alpha, ny, nx, images, b0, y, rows, out):  # pragma: no cover
    """y[b0 + image, tile's pixels, :] = A^T M A of every (tile, image), M its products, cropped at y's edge.

    prod is [alpha^2 * tiles, images * channels] (point (a, b) of a tile in row (a*alpha + b)*tiles + tile);
    A^T is given by its `_terms`; rows [TILE * alpha, images * channels] and out [TILE^2, same] are one
    tile's scratch, so they stay in cache between the row pass, the column pass and the copy into y.
    Against two sgemms over the whole chunk and a transposing copy: LeNet's 16->32 forward 0.93 -> 0.88
    ms, deep-MNIST's 32->64 1.36 -> 1.19 ms (1 thread), same bits.
    """
    m = coefs.shape[0]
    oh, ow, co = y.shape[1], y.shape[2], y.shape[3]
    per_tile = images * co
    tiles = ny * nx
    for tile in range(tiles):
        ty = tile // nx
        tx = tile - ty * nx
        for i in range(m):
            for b in range(alpha):
                _combine(rows, i * alpha + b, prod, b * tiles + tile, alpha * tiles, taps[i], coefs[i], counts[i],
                         per_tile)
        for i in range(m):
            for j in range(m):
                _combine(out, i * m + j, rows, i * alpha, 1, taps[j], coefs[j], counts[j], per_tile)
        for i in range(min(m, oh - ty * m)):
            for j in range(min(m, ow - tx * m)):
                for image in range(images):
                    for k in range(co):
                        y[b0 + image, ty * m + i, tx * m + j, k] = out[i * m + j, image * co + k]


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

    def __init__(self, x_shape: tuple[int, ...], r: int, pads: tuple[Pair, Pair], channels: int):
        self.n, self.h, self.w, self.c = (int(d) for d in x_shape)
        (self.top, bottom), (self.left, right) = pads
        self.r = r
        self.oh = self.h + self.top + bottom - r + 1
        self.ow = self.w + self.left + right - r + 1
        self.ny, self.nx = -(-self.oh // TILE), -(-self.ow // TILE)
        self.hp, self.wp = self.ny * TILE + r - 1, self.nx * TILE + r - 1
        self.alpha = TILE + r - 1
        per_image = self.alpha ** 2 * self.ny * self.nx * max(self.c, channels) * 4
        self.chunk = max(1, min(self.n, CHUNK_BYTES // per_image))

    def chunks(self):
        for b0 in range(0, self.n, self.chunk):
            yield b0, min(b0 + self.chunk, self.n)

    def padded_hwnc(self, x: np.ndarray, b0: int, b1: int) -> np.ndarray:
        """Images b0..b1-1 of x, zero-padded to [hp, wp] and laid out [hp, wp * images * channels]."""
        xp = _buffer("input", (self.hp, self.wp, b1 - b0, self.c))
        _pad_to_hwnc(x, b0, self.top, self.left, xp)
        return xp.reshape(self.hp, -1)

    def input_tiles(self, src: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray], run: int,
                    name: str) -> np.ndarray:
        """[alpha^2 * ny*nx, run] transformed windows of src (at stride TILE; the transform's `_terms`)."""
        coefs, taps, counts = terms
        n = coefs.shape[0]
        out = _buffer(name, (n * n * self.ny * self.nx, run))
        tmp = _buffer("lines", (n, src.shape[1]))
        _tile_transform(src, coefs, taps, counts, TILE, self.ny, self.nx, run, out, tmp)
        return out


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
    t = _Tiling(x.shape, r, pads, co)
    x = np.ascontiguousarray(x)
    u = _filter_tiles(w, transforms(TILE, r)[1])
    y = np.empty((t.n, t.oh, t.ow, co), dtype=np.float32)
    for b0, b1 in t.chunks():
        images = b1 - b0
        v = t.input_tiles(t.padded_hwnc(x, b0, b1), _transform_terms(TILE, r, 2), images * t.c, "tiles")
        prod = _buffer("products", (t.alpha ** 2, t.ny * t.nx * images * co))  # [(a, b), (tile, image, o)]
        np.matmul(v.reshape(t.alpha ** 2, -1, t.c), u, out=prod.reshape(t.alpha ** 2, -1, co))
        rows = _buffer("rows", (TILE * t.alpha, images * co))
        out = _buffer("output", (TILE * TILE, images * co))
        _output_transform(prod.reshape(-1, images * co), *_transform_terms(TILE, r, 0), t.alpha, t.ny, t.nx, images,
                          b0, y, rows, out)
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
    t = _Tiling(x.shape, r, pads, co)
    x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
    at = transforms(r, TILE)[0]  # r outputs (filter taps) from a 4-tap "filter" (a dy tile)
    n = t.alpha
    total = np.zeros((n * n, t.c, co), dtype=np.float32)
    part = np.empty_like(total)
    for b0, b1 in t.chunks():
        images = b1 - b0
        v = t.input_tiles(t.padded_hwnc(x, b0, b1), _transform_terms(r, TILE, 2), images * t.c, "tiles")
        dyp = _buffer("gradient", (t.ny * TILE, t.nx * TILE, images, co))
        _pad_to_hwnc(dy, b0, 0, 0, dyp)
        d = t.input_tiles(dyp.reshape(t.ny * TILE, -1), _transform_terms(r, TILE, 1), images * co,
                          "gradient tiles")
        total += np.matmul(v.reshape(n * n, -1, t.c).transpose(0, 2, 1), d.reshape(n * n, -1, co), out=part)
    rows = (at @ total.astype(np.float64).reshape(n, -1)).reshape(r, n, t.c * co)  # [p, b, (c, o)]
    return np.matmul(at, rows).reshape(filter_shape).astype(np.float32)  # [p, q, (c, o)]
