"""The fused GRU cell of TF's GRUBlockCell op: two products to BLAS, the gate arithmetic in Numba loops.

Forward (TF's GRUBlockCell; GRUCell's math): ``[r_bar, u_bar] = [x, h_prev] @ w_ru + b_ru``,
``r = sigmoid(r_bar)``, ``u = sigmoid(u_bar)``, ``c = tanh([x, r * h_prev] @ w_c + b_c)``,
``h = u * h_prev + (1 - u) * c``.

Backward (GRUBlockCellGrad): from the gradient of ``h`` to those of ``x``, ``h_prev``, the candidate's
pre-activation ``c_bar`` and the gates' ``[r_bar, u_bar]``; the weight and bias gradients are
products of these with the op's inputs, left to BLAS in the op's gradient as in TF.

The float32 sigmoid/tanh are those of `tftk.kernels.activations`. Compiled per dtype on first use.

Each op is one compiled call (`_cell`, `_cell_grad`), as the LSTM cell's forward is (`tftk.kernels.lstm`):
the copies, both products (numpy's own OpenBLAS gemm, `tftk.kernels.blas.cblas_product`: the call numpy's
matmul makes, the same bits) and the loops, the outputs allocated inside. Made of numpy calls, each op
let go of Python's lock six times (the forward's two copies, two products and two loops; the gradient's two
loops, two products and two adds), and a stream running beside it on another thread
(`tftk.client.streams`) could take it at each. Where numpy has another BLAS, the ops are made of numpy
calls.
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.activations import sigmoid_scalar, tanh_scalar
from tftk.kernels.blas import NO_TRANS, TRANS, cblas_product, gemm_address, matrix_product, side_by_side
from tftk.kernels.jit import njit, wide_vectors

__all__ = ["gru_block_cell", "gru_block_cell_grad"]


# Each kernel goes one row at a time through 1-D views of its arrays (and of each gate block): LLVM
# vectorises those inner loops, not the same loops indexing 2-D arrays at offsets k, n + k, ...
# `one` is 1 in the arrays' dtype: an integer literal would widen float32 arithmetic to float64.


@njit(cache=True, error_model="numpy")
def _gates(ru_bar, b_ru, h_prev, depth, r, u, xhr):  # pragma: no cover - compiled
    """r, u from the gate product; the h part of `xhr` becomes r * h_prev."""
    wide_vectors()
    rows, n = h_prev.shape
    b_r, b_u = b_ru[:n], b_ru[n:]
    for row in range(rows):
        g_r, g_u, hp, r_row, u_row, hr = (ru_bar[row, :n], ru_bar[row, n:], h_prev[row], r[row], u[row],
                                          xhr[row, depth:])
        for k in range(n):
            gr = sigmoid_scalar(g_r[k] + b_r[k])
            r_row[k] = gr
            u_row[k] = sigmoid_scalar(g_u[k] + b_u[k])
            hr[k] = gr * hp[k]


@njit(cache=True, error_model="numpy")
def _blend(c_bar, b_c, h_prev, u, c, h):  # pragma: no cover - compiled
    wide_vectors()
    rows, n = h_prev.shape
    one = h_prev.dtype.type(1)
    for row in range(rows):
        cb, hp, u_row, c_row, h_row = c_bar[row], h_prev[row], u[row], c[row], h[row]
        for k in range(n):
            gc = tanh_scalar(cb[k] + b_c[k])
            gu = u_row[k]
            c_row[k] = gc
            h_row[k] = gu * hp[k] + (one - gu) * gc


@njit(cache=True, error_model="numpy")
def _candidate_grad(h_prev, u, c, d_h, d_c_bar, d_u_bar):  # pragma: no cover - compiled
    wide_vectors()
    rows, n = h_prev.shape
    one = h_prev.dtype.type(1)
    for row in range(rows):
        hp, u_row, c_row, dh_row, dc_row, du_row = h_prev[row], u[row], c[row], d_h[row], d_c_bar[row], d_u_bar[row, n:]
        for k in range(n):
            gu, gc, dh = u_row[k], c_row[k], dh_row[k]
            dc_row[k] = dh * (one - gu) * (one - gc * gc)
            du_row[k] = dh * (hp[k] - gc) * gu * (one - gu)


@njit(cache=True, error_model="numpy")
def _reset_grad(h_prev, r, u, d_h, d_xhr, depth, d_ru_bar, d_h_prev):  # pragma: no cover - compiled
    """d r_bar into `d_ru_bar`'s first half; the direct terms of d h_prev."""
    wide_vectors()
    rows, n = h_prev.shape
    one = h_prev.dtype.type(1)
    for row in range(rows):
        hp, r_row, u_row, dh_row, dhr_row, dr_row, dhp_row = (h_prev[row], r[row], u[row], d_h[row],
                                                              d_xhr[row, depth:], d_ru_bar[row, :n], d_h_prev[row])
        for k in range(n):
            gr = r_row[k]
            d_hr = dhr_row[k]
            dr_row[k] = d_hr * hp[k] * gr * (one - gr)
            dhp_row[k] = d_hr * gr + dh_row[k] * u_row[k]


@njit(cache=True, error_model="numpy")
def _cell(address, x, h_prev, w_ru, w_c, b_ru, b_c):  # pragma: no cover - compiled
    """GRUBlockCell in one call (module docstring): returns (r, u, c, h)."""
    wide_vectors()
    rows, depth = x.shape
    n = h_prev.shape[1]
    xh = side_by_side(x, h_prev)
    ru_bar = matrix_product(address, xh, w_ru)
    r, u, c, h = np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype), np.empty((rows, n), x.dtype), \
        np.empty((rows, n), x.dtype)
    _gates(ru_bar, b_ru, h_prev, depth, r, u, xh)  # xh is [x, r * h_prev] from here on
    c_bar = matrix_product(address, xh, w_c)
    _blend(c_bar, b_c, h_prev, u, c, h)
    return r, u, c, h


@njit(cache=True, error_model="numpy")
def _columns_product(address, a, w, transposed, first, columns):  # pragma: no cover - compiled
    """a @ W[:, first:] for W = w.T (w [width, inner], as the op takes its weights) or W = w (`transposed`:
    w [inner, width], the weight's transpose): `columns` columns, BLAS reading w in place by its strides."""
    rows, inner = a.shape
    out = np.empty((rows, columns), a.dtype)
    if transposed:  # w [inner, width], C-contiguous: its columns from `first` on
        cblas_product(address, NO_TRANS, NO_TRANS, rows, columns, inner, a.ctypes.data, inner,
                      w.ctypes.data + first * w.itemsize, w.shape[1], out, columns)
    else:  # w [width, inner]: its rows from `first` on, transposed
        cblas_product(address, NO_TRANS, TRANS, rows, columns, inner, a.ctypes.data, inner,
                      w.ctypes.data + first * inner * w.itemsize, inner, out, columns)
    return out


@njit(cache=True, error_model="numpy")
def _cell_grad(address, h_prev, w_ru, w_c, r, u, c, d_h, depth, first, transposed):  # pragma: no cover - compiled
    """GRUBlockCellGrad in one call (module docstring): returns (d_x, d_h_prev, d_c_bar, d_ru_bar); d_x has
    no columns when `first` is `depth` (not wanted)."""
    wide_vectors()
    rows, n = h_prev.shape
    columns = depth + n - first
    d_c_bar, d_ru_bar, d_h_prev = np.empty((rows, n), h_prev.dtype), np.empty((rows, 2 * n), h_prev.dtype), \
        np.empty((rows, n), h_prev.dtype)
    _candidate_grad(h_prev, u, c, d_h, d_c_bar, d_ru_bar)
    d_xhr = _columns_product(address, d_c_bar, w_c, transposed, first, columns)
    _reset_grad(h_prev, r, u, d_h, d_xhr, depth - first, d_ru_bar, d_h_prev)
    d_xh = _columns_product(address, d_ru_bar, w_ru, transposed, first, columns)
    own = depth - first  # the columns of x in the products
    d_x = np.empty((rows, own), h_prev.dtype)
    for row in range(rows):
        hp, xh_row, xhr_row, x_row = d_h_prev[row], d_xh[row], d_xhr[row], d_x[row]
        for k in range(n):
            hp[k] += xh_row[own + k]
        for k in range(own):
            x_row[k] = xhr_row[k] + xh_row[k]
    return d_x, d_h_prev, d_c_bar, d_ru_bar


def _matrix(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def _check(x, h_prev, w_ru, w_c, b_ru, b_c) -> None:
    batch, depth = x.shape
    n = h_prev.shape[1]
    if (h_prev.shape[0] != batch or w_ru.shape != (depth + n, 2 * n) or w_c.shape != (depth + n, n)
            or b_ru.shape != (2 * n,) or b_c.shape != (n,)):
        raise ValueError(f"gru_block_cell: x {x.shape} and h_prev {h_prev.shape} need w_ru [{depth + n}, {2 * n}], "
                         f"w_c [{depth + n}, {n}], b_ru [{2 * n}] and b_c [{n}]; got w_ru {w_ru.shape}, "
                         f"w_c {w_c.shape}, b_ru {b_ru.shape}, b_c {b_c.shape}")


def gru_block_cell(x, h_prev, w_ru, w_c, b_ru, b_c) -> tuple[np.ndarray, ...]:
    """TF's GRUBlockCell: returns (r, u, c, h), each [batch, units]."""
    _check(x, h_prev, w_ru, w_c, b_ru, b_c)
    dtype = np.result_type(x, h_prev)
    batch, depth = x.shape
    n = h_prev.shape[1]
    address = gemm_address(dtype) if batch and n else None
    if address is not None:
        return _cell(address, np.asarray(x, dtype), _matrix(h_prev, dtype),
                     *(_matrix(a, dtype) for a in (w_ru, w_c, b_ru, b_c)))
    xh = np.empty((batch, depth + n), dtype)
    xh[:, :depth] = x
    xh[:, depth:] = h_prev
    h_prev = _matrix(h_prev, dtype)
    ru_bar = xh @ _matrix(w_ru, dtype)
    r, u, c, h = (np.empty((batch, n), dtype) for _ in range(4))
    _gates(ru_bar, _matrix(b_ru, dtype), h_prev, depth, r, u, xh)  # xh is [x, r * h_prev] from here on
    c_bar = xh @ _matrix(w_c, dtype)
    _blend(c_bar, _matrix(b_c, dtype), h_prev, u, c, h)
    return r, u, c, h


def gru_block_cell_grad(x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h, transposed_weights: bool = False,
                        with_d_x: bool = True) -> tuple[np.ndarray | None, ...]:
    """TF's GRUBlockCellGrad: returns (d_x, d_h_prev, d_c_bar, d_r_bar_u_bar).

    `transposed_weights`: w_ru and w_c come as their transposes (C-contiguous; BLAS multiplies by
    them faster than by the transposed views). `with_d_x=False`: d_x is not wanted (a first layer's
    input is data) and comes back None; the two products then make only h_prev's columns.
    """
    dtype = np.result_type(x, h_prev)
    batch, depth = x.shape
    n = h_prev.shape[1]
    h_prev, r, u, c, d_h = (_matrix(a, dtype) for a in (h_prev, r, u, c, d_h))
    first = 0 if with_d_x else depth  # the first column of [x, h_prev] the products make
    address = gemm_address(dtype) if batch and n else None
    if address is not None:
        d_x, *rest = _cell_grad(address, h_prev, _matrix(w_ru, dtype), _matrix(w_c, dtype), r, u, c, d_h, depth, first,
                                bool(transposed_weights))
        return (d_x if with_d_x else None, *rest)
    w_ru_t, w_c_t = (_matrix(w, dtype) if transposed_weights else _matrix(w, dtype).T for w in (w_ru, w_c))
    d_c_bar, d_ru_bar, d_h_prev = (np.empty((batch, m), dtype) for m in (n, 2 * n, n))
    _candidate_grad(h_prev, u, c, d_h, d_c_bar, d_ru_bar)
    d_xhr = d_c_bar @ w_c_t[:, first:]
    _reset_grad(h_prev, r, u, d_h, d_xhr, depth - first, d_ru_bar, d_h_prev)
    d_xh = d_ru_bar @ w_ru_t[:, first:]
    d_h_prev += d_xh[:, depth - first:]
    d_x = d_xhr[:, :depth] + d_xh[:, :depth] if with_d_x else None
    return d_x, d_h_prev, d_c_bar, d_ru_bar
