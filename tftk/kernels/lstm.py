"""The fused LSTM cell of TF's LSTMBlockCell op: gates from one product, the rest in one pass.

Forward (TF's LSTMBlockCell, gate blocks in the order i, ci, f, o of the product's columns):
``icfo = [x, h_prev] @ w + b``; ``i = sigmoid(icfo_i + wci * cs_prev)``, ``ci = tanh(icfo_ci)``,
``f = sigmoid(icfo_f + forget_bias + wcf * cs_prev)``, ``cs = ci * i + f * cs_prev`` (clipped to
``[-cell_clip, cell_clip]`` when ``cell_clip > 0``), ``co = tanh(cs)``, ``o = sigmoid(icfo_o + wco * cs)``,
``h = co * o``; the peephole terms only with ``use_peephole``.

Backward (LSTMBlockCellGrad): from the gradients of ``cs`` and ``h`` to the gradient of the four gate
blocks ``dicfo`` (the products for x, h_prev, w and b are left to BLAS in the op's gradient), of
``cs_prev`` and of the peephole weights. As in TF's op the clip is not differentiated through, unless
``clip_gradient > 0``: then the gradient stops where the unclipped memory lay outside
``[-clip_gradient, clip_gradient]``, as through the `clip_by_value` of TF's LSTMCell.

``h_prev`` may be narrower or wider than the cell (LSTMCell's projected output feeds back).

The product goes to BLAS; everything after it is one Numba loop over the [batch, units] block, with
the float32 sigmoid/tanh of `tftk.kernels.activations`. Compiled per dtype on first use.

The forward cell is one compiled call (`_cell`): it joins x and h_prev, calls numpy's own OpenBLAS gemm
(`tftk.kernels.blas.cblas_product`, the call numpy's matmul makes: the same bits) and runs the loop,
allocating its outputs itself. Made of numpy calls, the cell let go of Python's lock four times (two
copies, the product, the loop), and a stream running beside it on another thread (`tftk.client.streams`,
the pipelined loops) took the lock at each: most of the waits for it in a 2-layer LSTM's split step
followed such short calls. Where numpy has another BLAS, the cell is made of numpy calls as before.
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.activations import sigmoid_scalar, tanh_scalar
from tftk.kernels.blas import gemm_address, matrix_product, side_by_side
from tftk.kernels.jit import njit, wide_vectors

__all__ = ["lstm_block_cell", "lstm_block_cell_grad"]


@njit(cache=True, error_model="numpy")
def _forward(icfo, b, cs_prev, wci, wcf, wco, forget_bias, cell_clip, use_peephole,
             i, cs, f, o, ci, co, h):  # pragma: no cover - compiled
    wide_vectors()
    rows, n = cs_prev.shape
    fb = icfo.dtype.type(forget_bias)
    clip = icfo.dtype.type(cell_clip)
    for r in range(rows):
        g = icfo[r]
        cp = cs_prev[r]
        for k in range(n):
            pi = g[k] + b[k]
            pf = g[2 * n + k] + b[2 * n + k] + fb
            if use_peephole:
                pi += wci[k] * cp[k]
                pf += wcf[k] * cp[k]
            gi = sigmoid_scalar(pi)
            gci = tanh_scalar(g[n + k] + b[n + k])
            gf = sigmoid_scalar(pf)
            c = gci * gi + gf * cp[k]
            if clip > 0:
                c = min(max(c, -clip), clip)
            po = g[3 * n + k] + b[3 * n + k]
            if use_peephole:
                po += wco[k] * c
            go = sigmoid_scalar(po)
            gco = tanh_scalar(c)
            i[r, k] = gi
            ci[r, k] = gci
            f[r, k] = gf
            o[r, k] = go
            cs[r, k] = c
            co[r, k] = gco
            h[r, k] = gco * go


@njit(cache=True, error_model="numpy")
def _cell(address, x, h_prev, w, b, cs_prev, wci, wcf, wco, forget_bias, cell_clip,
          use_peephole):  # pragma: no cover - compiled
    """The forward cell in one call (module docstring): returns (i, cs, f, o, ci, co, h)."""
    wide_vectors()
    rows, n = cs_prev.shape
    icfo = matrix_product(address, side_by_side(x, h_prev), w)
    i, cs, f, o = np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype), \
        np.empty((rows, n), x.dtype)
    ci, co, h = np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype)
    _forward(icfo, b, cs_prev, wci, wcf, wco, forget_bias, cell_clip, use_peephole, i, cs, f, o, ci, co, h)
    return i, cs, f, o, ci, co, h


@njit(cache=True, error_model="numpy")
def _backward(cs_prev, wci, wcf, wco, i, f, o, ci, co, cs_grad, h_grad, clip, cs_prev_grad,
              dicfo):  # pragma: no cover - compiled
    # Branch-free (zero peepholes when unused, an infinite clip when none) and one row at a time
    # through 1-D views of each gate block, so that LLVM vectorises the inner loop: 3x faster than
    # a loop with those branches indexing the 2-D arrays at offsets k, n + k, ... The peephole
    # weights' gradients (sums over the batch) are left to the caller: more output arrays here
    # would stop the vectorisation. Without `wide_vectors`: this loop is memory-bound, and ran 10% slower
    # with 512-bit vectors (25.5 -> 28.5 us on a [128, 512] gate block).
    rows, n = cs_prev.shape
    zero = i.dtype.type(0)
    for r in range(rows):
        d_i, d_c, d_f, d_o = dicfo[r, :n], dicfo[r, n:2 * n], dicfo[r, 2 * n:3 * n], dicfo[r, 3 * n:]
        cp, i_r, f_r, o_r, ci_r, co_r = cs_prev[r], i[r], f[r], o[r], ci[r], co[r]
        dcs_r, dh_r, cpg_r = cs_grad[r], h_grad[r], cs_prev_grad[r]
        for k in range(n):
            gi, gf, go, gci, gco = i_r[k], f_r[k], o_r[k], ci_r[k], co_r[k]
            dh = dh_r[k]
            do = (go - go * go) * dh * gco
            dcs = (dh * go - dh * go * gco * gco) + dcs_r[k] + do * wco[k]
            unclipped = gci * gi + gf * cp[k]
            dcs = zero if unclipped > clip or unclipped < -clip else dcs
            dci = (dcs * gi - dcs * gi * gci * gci)
            df = (gf - gf * gf) * dcs * cp[k]
            di = (gi - gi * gi) * dcs * gci
            d_i[k] = di
            d_c[k] = dci
            d_f[k] = df
            d_o[k] = do
            cpg_r[k] = dcs * gf + di * wci[k] + df * wcf[k]


def _matrix(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def _peepholes(wci, wcf, wco, n: int, dtype: np.dtype, use_peephole: bool) -> tuple[np.ndarray, ...]:
    """The peephole weights as the kernels take them: zeros when the op does not use them (TF ignores them)."""
    if not use_peephole:
        return (np.zeros(n, dtype),) * 3
    return tuple(_matrix(v, dtype) for v in (wci, wcf, wco))


def _bound(clip: float, dtype: np.dtype):
    """A clip bound for the kernels: +inf when `clip` <= 0 (no clipping)."""
    return dtype.type(clip if clip > 0 else np.inf)


def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias: float = 1.0, cell_clip: float = -1.0,
                    use_peephole: bool = False) -> tuple[np.ndarray, ...]:
    """TF's LSTMBlockCell: returns (i, cs, f, o, ci, co, h), each [batch, units]."""
    dtype = np.result_type(x, h_prev)
    batch, depth = x.shape
    n = cs_prev.shape[1]
    if w.shape != (depth + h_prev.shape[1], 4 * n) or b.shape != (4 * n,) or h_prev.shape[0] != batch:
        raise ValueError(f"lstm_block_cell: x {x.shape}, cs_prev {cs_prev.shape}, h_prev {h_prev.shape} need "
                         f"w [{depth + h_prev.shape[1]}, {4 * n}] and b [{4 * n}], got w {w.shape} and b {b.shape}")
    w, rest = _matrix(w, dtype), tuple(_matrix(a, dtype) for a in (b, cs_prev, wci, wcf, wco))
    options = (float(forget_bias), float(cell_clip), bool(use_peephole))
    address = gemm_address(dtype) if batch and n else None
    if address is not None:
        return _cell(address, np.asarray(x, dtype), np.asarray(h_prev, dtype), w, *rest, *options)
    xh = np.empty((batch, depth + h_prev.shape[1]), dtype)
    xh[:, :depth] = x
    xh[:, depth:] = h_prev
    outs = tuple(np.empty((batch, n), dtype) for _ in range(7))
    _forward(xh @ w, *rest, *options, *outs)
    return outs


def lstm_block_cell_grad(cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad,
                         use_peephole: bool = False, clip_gradient: float = -1.0) -> tuple[np.ndarray, ...]:
    """TF's LSTMBlockCellGrad, element-wise part: returns (cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad).

    `clip_gradient` > 0: the forward clip's bound, differentiated through (zero where it clipped).
    """
    dtype = i.dtype
    batch, n = i.shape
    cs_prev = _matrix(cs_prev, dtype)
    cs_prev_grad, dicfo = np.empty((batch, n), dtype), np.empty((batch, 4 * n), dtype)
    _backward(cs_prev, *_peepholes(wci, wcf, wco, n, dtype, use_peephole),
              *(_matrix(a, dtype) for a in (i, f, o, ci, co, cs_grad, h_grad)), _bound(clip_gradient, dtype),
              cs_prev_grad, dicfo)
    if not use_peephole:
        return (cs_prev_grad, dicfo) + tuple(np.zeros(n, dtype) for _ in range(3))
    wci_grad = np.einsum("rk,rk->k", dicfo[:, :n], cs_prev)
    wcf_grad = np.einsum("rk,rk->k", dicfo[:, 2 * n:3 * n], cs_prev)
    wco_grad = np.einsum("rk,rk->k", dicfo[:, 3 * n:], _matrix(cs, dtype))
    return cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad
