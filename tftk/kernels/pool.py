"""2-D max and average pooling and their gradients over NHWC arrays, with TF1's CPU semantics.

Layout: `x` is ``[batch, in_h, in_w, channels]``; windows slide over height and width only
(``ksize = (kh, kw)``, ``strides = (sh, sw)``), each channel apart. Padding is explicit,
``pads = ((top, bottom), (left, right))`` (`tftk.kernels.conv.conv_output_size` gives TF's SAME/VALID
numbers), and padded cells never take part: for max pooling they act as -inf (a window that is all
padding yields -inf and no arg-max), for average pooling the mean counts only in-bounds elements,
as TF's SAME average pooling does.

Max-pool ties follow TF1's CPU kernel (maxpooling_op.cc, SpatialMaxPoolWithArgMaxHelper): a window
is scanned row by row, left to right, and a later element replaces the current max only when strictly
greater, so the arg-max, and with it the whole gradient, goes to the FIRST maximal element in
row-major order. The arg-max is the flat index into x including the batch, ``((b*H + h)*W + w)*C + c``,
like TF's MaxPoolWithArgmax(include_batch_in_index=True); overlapping windows add their gradients.

Fast paths, same bits: 2x2 windows without padding (every ConvNet here) read their four taps in
registers (`_max_pool_2x2`); where 2x2 stride-2 windows tile x over a multiple of 16 channels, the
gradient finds each window's arg-max again in x and writes dx window by window as vectors
(`max_pool_2x2_grad`, as TF's MaxPoolGrad recomputes from its input) instead of zeroing dx and
scattering through the arg-max array. LeNet's 64x28x28x16, 1 thread, CPU: MaxPool 0.20 -> 0.13 ms,
the plan's MaxPoolGrad + ReluGrad 0.195 -> 0.143 ms, MaxPoolGrad alone 0.150 -> 0.132 ms.
"""

from __future__ import annotations

import numpy as np
from tftk.kernels.jit import intrinsic, njit, prange

from tftk.kernels.conv import window_output_size

__all__ = ["max_pool", "max_pool_grad", "max_pool_relu_grad", "tiled_2x2", "max_pool_2x2_grad", "avg_pool",
           "avg_pool_grad"]

Pair = tuple[int, int]


def _output_shape(x_shape: tuple[int, ...], ksize: Pair, strides: Pair, pads: tuple[Pair, Pair],
                  who: str) -> tuple[int, int, int, int]:
    """Validate the pooling geometry and return the NHWC output shape."""
    if len(x_shape) != 4:
        raise ValueError(f"{who}: input must be 4-D NHWC, got shape {tuple(x_shape)}")
    if min(ksize) < 1 or min(strides) < 1 or min(min(pads[0]), min(pads[1])) < 0:
        raise ValueError(f"{who}: ksize and strides must be >= 1 and pads >= 0, got ksize={ksize}, "
                         f"strides={strides}, pads={pads}")
    oh = window_output_size(x_shape[1], ksize[0], strides[0], 1, pads[0])
    ow = window_output_size(x_shape[2], ksize[1], strides[1], 1, pads[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"{who}: window {ksize} does not fit the padded input {tuple(x_shape[1:3])} "
                         f"with pads {pads}")
    return x_shape[0], oh, ow, x_shape[3]


@njit(cache=True)
def _max_pool(x, kh, kw, sh, sw, pt, pl, y, arg):  # pragma: no cover - compiled
    """y = window max, arg = flat index of its first occurrence (-inf and -1 for an all-padding window).

    Each output row is seeded with its windows' first in-bounds taps (first valid row, first valid
    column), then the other taps, in row-major order, replace it only where strictly greater: the
    channel loop has no "seen yet" test and no per-tap views (0.47 -> 0.20 ms on 64x28x28x16, 1 thread).
    Serial: a parallel version compiled in 2.2 s against 0.3 s and saved well under a millisecond
    per LeNet step, while the first training step of a fresh install must stay within seconds.
    """
    n, h, wd, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    for b in range(n):
        for i in range(oh):
            best = y[b, i]
            where = arg[b, i]
            top = i * sh - pt
            p0 = max(-top, 0)
            for j in range(ow):
                x0 = max(j * sw - pl, 0)
                if p0 >= kh or top + p0 >= h or x0 >= wd or x0 >= j * sw - pl + kw:
                    for ch in range(c):
                        best[j, ch] = -np.inf
                        where[j, ch] = -1
                    continue
                seed = x[b, top + p0]
                base = ((b * h + top + p0) * wd + x0) * c
                for ch in range(c):
                    best[j, ch] = seed[x0, ch]
                    where[j, ch] = base + ch
            for p in range(p0, min(kh, h - top)):
                row = x[b, top + p]
                for q in range(1 if p == p0 else 0, kw):  # (p0, 0) is the seed where it is in bounds
                    for j in range(ow):
                        xx = j * sw - pl + q
                        if xx < 0 or xx >= wd:
                            continue
                        base = ((b * h + top + p) * wd + xx) * c
                        for ch in range(c):
                            if row[xx, ch] > best[j, ch]:
                                best[j, ch] = row[xx, ch]
                                where[j, ch] = base + ch


@njit(cache=True, inline="always")
def _max_pool_2x2_windows(x, sh, sw, y, arg):  # pragma: no cover - compiled
    """`_max_pool` for 2x2 windows that all lie inside x (no padding): the four taps of a window read in
    registers, row-major, a later one taken only when strictly greater (the same rule, NaNs included).

    LeNet's 64x28x28x16 (1 thread): 0.20 -> 0.11 ms; the general kernel passes over each output row once
    per tap, loading and storing the running max and arg-max every time.
    """
    n, h, wd, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    for b in range(n):
        for i in range(oh):
            top = x[b, i * sh]
            below = x[b, i * sh + 1]
            best = y[b, i]
            where = arg[b, i]
            for j in range(ow):
                t0 = top[j * sw]
                t1 = top[j * sw + 1]
                t2 = below[j * sw]
                t3 = below[j * sw + 1]
                first = ((b * h + i * sh) * wd + j * sw) * c
                second = first + wd * c
                m = best[j]
                k = where[j]
                for ch in range(c):
                    v = t0[ch]
                    a = first + ch
                    if t1[ch] > v:
                        v = t1[ch]
                        a = first + c + ch
                    if t2[ch] > v:
                        v = t2[ch]
                        a = second + ch
                    if t3[ch] > v:
                        v = t3[ch]
                        a = second + c + ch
                    m[ch] = v
                    k[ch] = a


@njit(cache=True)
def _max_pool_2x2(x, sh, sw, y, arg):  # pragma: no cover - compiled
    """`_max_pool_2x2_windows`, with constant strides for the usual 2x2 stride-2 pooling (with run-time strides
    the channel loop ran at the general kernel's speed)."""
    if sh == 2 and sw == 2:
        _max_pool_2x2_windows(x, 2, 2, y, arg)
    else:
        _max_pool_2x2_windows(x, sh, sw, y, arg)


@njit(cache=True)
def _max_pool_grad(dy, arg, dx):  # pragma: no cover - compiled
    """dx.flat[arg] += dy (serial: one scatter over the outputs is well under a millisecond on LeNet)."""
    dyf = dy.reshape(-1)
    argf = arg.reshape(-1)
    dxf = dx.reshape(-1)
    for k in range(dyf.size):
        a = argf[k]
        if a >= 0:
            dxf[a] += dyf[k]


@njit(cache=True)
def _max_pool_relu_grad(dy, arg, relu_y, dx):  # pragma: no cover - compiled
    """dx.flat[arg] += dy where relu_y.flat[arg] > 0: ReluGrad(MaxPoolGrad(dy), relu_y), since MaxPoolGrad's
    result is 0 away from the arg-maxes; each added value is the one ReluGrad would keep, in the same order."""
    dyf = dy.reshape(-1)
    argf = arg.reshape(-1)
    gate = relu_y.reshape(-1)
    dxf = dx.reshape(-1)
    for k in range(dyf.size):
        a = argf[k]
        if a >= 0 and gate[a] > 0:
            dxf[a] += dyf[k]


LANES = 16  # channels per vector in `_window_gradient`


@intrinsic
def _window_gradient(typingctx, dx, x, gate, dy, at, dy_at, row, col, gated):
    """For one 2x2 window of LANES channels at `at` (its other taps at +col, +row, +row+col) in x's layout:
    dx = 0 + dy[dy_at] at the window's first maximum of x (the arg-max rule), where gate > 0 if `gated`,
    and 0 at the other three taps. Vector code (see `tftk.kernels.vector_ir`)."""
    from llvmlite import ir
    from numba import types

    from tftk.kernels.vector_ir import Vectors, contiguous_vectors

    if not contiguous_vectors(dx, x, gate, dy):
        return None
    i = types.intp
    signature = types.void(dx, x, gate, dy, i, i, i, i, types.boolean)

    def codegen(context, builder, sig, args):
        dx_p, x_p, gate_p, dy_p = (context.make_array(t)(context, builder, a).data
                                   for t, a in zip(sig.args[:4], args[:4]))
        at_, dy_at_, row_, col_, gated_ = args[4:]
        vec = Vectors(context, builder, dx_p.type.pointee, LANES)
        offsets = [at_, builder.add(at_, col_), builder.add(at_, row_), builder.add(builder.add(at_, row_), col_)]
        taps = [vec.load(x_p, offset) for offset in offsets]
        best, later = taps[0], []
        for tap in taps[1:]:  # row-major; a later tap wins only when strictly greater (NaN never does)
            greater = builder.fcmp_ordered(">", tap, best)
            best = builder.select(greater, tap, best)
            later.append(greater)
        mask = ir.VectorType(ir.IntType(1), LANES)
        nobody = ir.Constant(mask, [0] * LANES)
        winners, beaten = [], nobody
        for greater in reversed(later):  # tap t wins where it was greater and no later tap was
            winners.append(builder.and_(greater, builder.xor(beaten, ir.Constant(mask, [1] * LANES))))
            beaten = builder.or_(beaten, greater)
        winners.append(builder.xor(beaten, ir.Constant(mask, [1] * LANES)))
        winners.reverse()
        routed = builder.fadd(vec.zero, vec.load(dy_p, dy_at_))  # max_pool_grad's 0 + dy: -0.0 becomes 0.0
        for offset, wins in zip(offsets, winners):
            open_gate = builder.fcmp_ordered(">", vec.load(gate_p, offset), vec.zero)
            keep = builder.select(gated_, builder.and_(wins, open_gate), wins)
            vec.store(builder.select(keep, routed, vec.zero), dx_p, offset)
        return context.get_dummy_value()

    return signature, codegen


@njit(cache=True)
def _tiled_2x2_grad(dy, x, gate, gated, dx):  # pragma: no cover - compiled
    """dx = max_pool_grad (then gated by gate > 0) for 2x2 stride-2 windows tiling x, window by window."""
    n, oh, ow, c = dy.shape
    h, wd = x.shape[1], x.shape[2]
    xf, gf, dyf, dxf = x.reshape(-1), gate.reshape(-1), dy.reshape(-1), dx.reshape(-1)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                at = ((b * h + 2 * i) * wd + 2 * j) * c
                dy_at = ((b * oh + i) * ow + j) * c
                for k0 in range(0, c, LANES):
                    _window_gradient(dxf, xf, gf, dyf, at + k0, dy_at + k0, wd * c, c, gated)


def tiled_2x2(dtype: np.dtype, x_shape: tuple[int, ...], ksize: Pair, strides: Pair, pads: tuple[Pair, Pair]) -> bool:
    """Whether max pooling of x has 2x2 stride-2 windows that tile it exactly, over a multiple of LANES float
    channels: `max_pool_2x2_grad` then applies."""
    return (np.dtype(dtype) in (np.float32, np.float64) and tuple(ksize) == (2, 2) and tuple(strides) == (2, 2)
            and tuple(pads) == ((0, 0), (0, 0)) and x_shape[1] % 2 == 0 and x_shape[2] % 2 == 0
            and x_shape[3] % LANES == 0)


def max_pool_2x2_grad(dy: np.ndarray, x: np.ndarray, relu_y: np.ndarray | None = None) -> np.ndarray:
    """`max_pool_grad` (then ReLU's gradient on relu_y when given: `max_pool_relu_grad`) where the windows
    tile x (see `tiled_2x2`), each window's arg-max found again in x rather than read from the arg-max array.

    Every element of dx is written once, in order, a window's 16 channels a vector, instead of zeroing dx and
    scattering into it. The same bits as the scatter (0 + dy at the first maximum, 0 elsewhere).
    """
    if dy.shape != (x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]) or x.shape[1] % 2 or x.shape[2] % 2 \
            or (relu_y is not None and relu_y.shape != x.shape):
        raise ValueError(f"max_pool_2x2_grad: dy {dy.shape} must be x {x.shape} halved in height and width "
                         f"(both even), and the ReLU output shaped like x")
    x = np.ascontiguousarray(x)
    dx = np.empty(x.shape, dtype=x.dtype)
    gate = x if relu_y is None else np.ascontiguousarray(relu_y, dtype=x.dtype)
    _tiled_2x2_grad(np.ascontiguousarray(dy, dtype=x.dtype), x, gate, relu_y is not None, dx)
    return dx


def max_pool(x: np.ndarray, ksize: Pair, strides: Pair, pads: tuple[Pair, Pair] = ((0, 0), (0, 0))
             ) -> tuple[np.ndarray, np.ndarray]:
    """TF's MaxPool: returns (y, argmax), argmax the int64 flat index into x that `max_pool_grad` needs."""
    shape = _output_shape(x.shape, ksize, strides, pads, "max_pool")
    y = np.empty(shape, dtype=x.dtype)
    arg = np.empty(shape, dtype=np.int64)
    x = np.ascontiguousarray(x)
    if tuple(ksize) == (2, 2) and tuple(pads) == ((0, 0), (0, 0)):
        _max_pool_2x2(x, strides[0], strides[1], y, arg)
    else:
        _max_pool(x, ksize[0], ksize[1], strides[0], strides[1], pads[0][0], pads[1][0], y, arg)
    return y, arg


def max_pool_grad(dy: np.ndarray, argmax: np.ndarray, input_shape: tuple[int, ...]) -> np.ndarray:
    """TF's MaxPoolGrad: each output gradient goes to its window's arg-max (first max in row-major order)."""
    if dy.shape != argmax.shape or dy.shape[0] != input_shape[0]:
        raise ValueError(f"max_pool_grad: dy {dy.shape} must match argmax {argmax.shape} and the batch of "
                         f"input shape {tuple(input_shape)}")
    dx = np.zeros(tuple(input_shape), dtype=dy.dtype)
    _max_pool_grad(np.ascontiguousarray(dy), np.ascontiguousarray(argmax), dx)
    return dx


def max_pool_relu_grad(dy: np.ndarray, argmax: np.ndarray, input_shape: tuple[int, ...],
                       relu_y: np.ndarray) -> np.ndarray:
    """TF's ReluGrad(MaxPoolGrad(dy, argmax, input_shape), relu_y) in one pass: the max-pool gradient kept
    only where the ReLU output relu_y (shaped like the pooled input) is positive.

    A ReLU followed by max pooling (every ConvNet layer here) back-propagates through both; fused, the
    ReLU gradient reads relu_y at the arg-maxes only instead of passing over the whole input-sized array
    (LeNet's 64x28x28x16: ~0.25 ms a step less).
    """
    if dy.shape != argmax.shape or dy.shape[0] != input_shape[0] or relu_y.shape != tuple(input_shape):
        raise ValueError(f"max_pool_relu_grad: dy {dy.shape} must match argmax {argmax.shape}, and the ReLU "
                         f"output {relu_y.shape} the pooled input's shape {tuple(input_shape)}")
    dx = np.zeros(relu_y.shape, dtype=dy.dtype)
    _max_pool_relu_grad(np.ascontiguousarray(dy), np.ascontiguousarray(argmax), np.ascontiguousarray(relu_y), dx)
    return dx


@njit(cache=True)
def _window(i, stride, pad, k, size):  # pragma: no cover - compiled
    """In-bounds [start, stop) of the window of output i along one dimension."""
    start = i * stride - pad
    return max(start, 0), min(start + k, size)


@njit(parallel=True, cache=True)
def _avg_pool(x, kh, kw, sh, sw, pt, pl, y):  # pragma: no cover - compiled
    """y = mean of each window's in-bounds elements."""
    n, h, wd, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    for r in prange(n * oh):
        b = r // oh
        i = r % oh
        y0, y1 = _window(i, sh, pt, kh, h)
        acc = np.empty(c, dtype=np.float64)
        for j in range(ow):
            x0, x1 = _window(j, sw, pl, kw, wd)
            acc[:] = 0.0
            for yy in range(y0, y1):
                for xx in range(x0, x1):
                    for ch in range(c):
                        acc[ch] += x[b, yy, xx, ch]
            count = max((y1 - y0) * (x1 - x0), 1)
            for ch in range(c):
                y[b, i, j, ch] = acc[ch] / count


@njit(parallel=True, cache=True)
def _avg_pool_grad(dy, kh, kw, sh, sw, pt, pl, dx):  # pragma: no cover - compiled
    """dx += dy / count over each window's in-bounds elements, one batch element per thread."""
    n, h, wd, c = dx.shape
    oh, ow = dy.shape[1], dy.shape[2]
    for b in prange(n):
        for i in range(oh):
            y0, y1 = _window(i, sh, pt, kh, h)
            for j in range(ow):
                x0, x1 = _window(j, sw, pl, kw, wd)
                count = max((y1 - y0) * (x1 - x0), 1)
                for yy in range(y0, y1):
                    for xx in range(x0, x1):
                        for ch in range(c):
                            dx[b, yy, xx, ch] += dy[b, i, j, ch] / count


def avg_pool(x: np.ndarray, ksize: Pair, strides: Pair, pads: tuple[Pair, Pair] = ((0, 0), (0, 0))) -> np.ndarray:
    """TF's AvgPool: the mean of each window's in-bounds elements (padding is not counted)."""
    y = np.empty(_output_shape(x.shape, ksize, strides, pads, "avg_pool"), dtype=x.dtype)
    _avg_pool(np.ascontiguousarray(x), ksize[0], ksize[1], strides[0], strides[1], pads[0][0], pads[1][0], y)
    return y


def avg_pool_grad(dy: np.ndarray, input_shape: tuple[int, ...], ksize: Pair, strides: Pair,
                  pads: tuple[Pair, Pair] = ((0, 0), (0, 0))) -> np.ndarray:
    """TF's AvgPoolGrad: each output gradient is shared equally by its window's in-bounds elements."""
    input_shape = tuple(int(d) for d in input_shape)
    expected = _output_shape(input_shape, ksize, strides, pads, "avg_pool_grad")
    if dy.shape != expected:
        raise ValueError(f"avg_pool_grad: dy has shape {dy.shape}, expected {expected}")
    dx = np.zeros(input_shape, dtype=dy.dtype)
    _avg_pool_grad(np.ascontiguousarray(dy), ksize[0], ksize[1], strides[0], strides[1], pads[0][0], pads[1][0], dx)
    return dx
