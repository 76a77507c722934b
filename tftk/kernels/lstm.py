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
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.activations import sigmoid_scalar, tanh_scalar
from tftk.kernels.jit import njit

__all__ = ["lstm_block_cell", "lstm_block_cell_grad"]


@njit(cache=True, error_model="numpy")
def _forward(icfo, b, cs_prev, wci, wcf, wco, forget_bias, cell_clip, use_peephole,
             i, cs, f, o, ci, co, h):  # pragma: no cover - compiled
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
def _backward(cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad, use_peephole, clip_gradient,
              cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad):  # pragma: no cover - compiled
    rows, n = cs_prev.shape
    clip = i.dtype.type(clip_gradient)
    zero = i.dtype.type(0)
    for r in range(rows):
        d = dicfo[r]
        for k in range(n):
            gi, gf, go, gci, gco = i[r, k], f[r, k], o[r, k], ci[r, k], co[r, k]
            dh = h_grad[r, k]
            do = (go - go * go) * dh * gco
            dcs = (dh * go - dh * go * gco * gco) + cs_grad[r, k]
            if use_peephole:
                dcs += do * wco[k]
            if clip > 0:
                unclipped = gci * gi + gf * cs_prev[r, k]
                if unclipped > clip or unclipped < -clip:
                    dcs = zero
            dci = (dcs * gi - dcs * gi * gci * gci)
            df = (gf - gf * gf) * dcs * cs_prev[r, k]
            di = (gi - gi * gi) * dcs * gci
            d[k] = di
            d[n + k] = dci
            d[2 * n + k] = df
            d[3 * n + k] = do
            cpg = dcs * gf
            if use_peephole:
                cpg += di * wci[k] + df * wcf[k]
                wci_grad[k] += di * cs_prev[r, k]
                wcf_grad[k] += df * cs_prev[r, k]
                wco_grad[k] += do * cs[r, k]
            cs_prev_grad[r, k] = cpg


def _matrix(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias: float = 1.0, cell_clip: float = -1.0,
                    use_peephole: bool = False) -> tuple[np.ndarray, ...]:
    """TF's LSTMBlockCell: returns (i, cs, f, o, ci, co, h), each [batch, units]."""
    dtype = np.result_type(x, h_prev)
    batch, depth = x.shape
    n = cs_prev.shape[1]
    if w.shape != (depth + h_prev.shape[1], 4 * n) or b.shape != (4 * n,) or h_prev.shape[0] != batch:
        raise ValueError(f"lstm_block_cell: x {x.shape}, cs_prev {cs_prev.shape}, h_prev {h_prev.shape} need "
                         f"w [{depth + h_prev.shape[1]}, {4 * n}] and b [{4 * n}], got w {w.shape} and b {b.shape}")
    xh = np.empty((batch, depth + h_prev.shape[1]), dtype)
    xh[:, :depth] = x
    xh[:, depth:] = h_prev
    icfo = xh @ _matrix(w, dtype)
    outs = tuple(np.empty((batch, n), dtype) for _ in range(7))
    _forward(icfo, _matrix(b, dtype), _matrix(cs_prev, dtype), _matrix(wci, dtype), _matrix(wcf, dtype),
             _matrix(wco, dtype), float(forget_bias), float(cell_clip), bool(use_peephole), *outs)
    return outs


def lstm_block_cell_grad(cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad,
                         use_peephole: bool = False, clip_gradient: float = -1.0) -> tuple[np.ndarray, ...]:
    """TF's LSTMBlockCellGrad, element-wise part: returns (cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad).

    `clip_gradient` > 0: the forward clip's bound, differentiated through (zero where it clipped).
    """
    dtype = i.dtype
    batch, n = i.shape
    cs_prev_grad = np.empty((batch, n), dtype)
    dicfo = np.empty((batch, 4 * n), dtype)
    peep = tuple(np.zeros(n, dtype) for _ in range(3))
    _backward(_matrix(cs_prev, dtype), _matrix(wci, dtype), _matrix(wcf, dtype), _matrix(wco, dtype),
              *(_matrix(a, dtype) for a in (i, cs, f, o, ci, co, cs_grad, h_grad)), bool(use_peephole),
              float(clip_gradient), cs_prev_grad, dicfo, *peep)
    return (cs_prev_grad, dicfo) + peep
