"""The fused LSTM cell kernels at sizes their vectorised loops run on, against the cell math in float64
numpy; the LSTM and GRU ops in one compiled call against the same ops made of numpy calls.

The op-level tests (tests/nn/test_lstm_block.py) check gradients and TF equality on cells of 5 units,
which only the loops' scalar remainders see; these check widths of several vectors. (The GRU kernels'
math is checked in tests/nn/test_gru_block.py.)
"""

import numpy as np
import pytest

from tftk.kernels import gru, lstm
from tftk.kernels.gru import gru_block_cell, gru_block_cell_grad
from tftk.kernels.lstm import lstm_block_cell, lstm_block_cell_grad


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _lstm_reference(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias, clip, peephole, cs_grad, h_grad):
    """TF's LSTMBlockCell and LSTMBlockCellGrad (clip differentiated through when clip > 0) in float64."""
    x, cs_prev, h_prev, w, wci, wcf, wco, b, cs_grad, h_grad = (
        a.astype(np.float64) for a in (x, cs_prev, h_prev, w, wci, wcf, wco, b, cs_grad, h_grad))
    if not peephole:
        wci = wcf = wco = np.zeros_like(wci)
    n = cs_prev.shape[1]
    pre = np.concatenate([x, h_prev], 1) @ w + b
    i = _sigmoid(pre[:, :n] + wci * cs_prev)
    ci = np.tanh(pre[:, n:2 * n])
    f = _sigmoid(pre[:, 2 * n:3 * n] + forget_bias + wcf * cs_prev)
    unclipped = ci * i + f * cs_prev
    cs = np.clip(unclipped, -clip, clip) if clip > 0 else unclipped
    o = _sigmoid(pre[:, 3 * n:] + wco * cs)
    co = np.tanh(cs)
    do = h_grad * co * o * (1 - o)
    dcs = h_grad * o * (1 - co * co) + cs_grad + do * wco
    if clip > 0:
        dcs = np.where(np.abs(unclipped) > clip, 0.0, dcs)
    di, dci, df = dcs * ci * i * (1 - i), dcs * i * (1 - ci * ci), dcs * cs_prev * f * (1 - f)
    grads = (dcs * f + di * wci + df * wcf, np.concatenate([di, dci, df, do], 1),
             (di * cs_prev).sum(0) if peephole else 0 * wci, (df * cs_prev).sum(0) if peephole else 0 * wci,
             (do * cs).sum(0) if peephole else 0 * wci)
    return (i, cs, f, o, ci, co, co * o), grads


LSTM_CASES = [  # batch, depth, units, h width, forget_bias, clip, peephole
    (9, 7, 64, 64, 1.0, -1.0, False),
    (9, 7, 64, 64, 0.3, 0.8, True),
    (5, 3, 37, 37, 1.0, -1.0, True),
    (4, 6, 40, 17, 1.0, 1.5, True),  # LSTMCell with a projection: a narrower h feeds back
    (3, 5, 33, 33, 0.0, 0.5, False),
]


@pytest.mark.parametrize("batch,depth,units,width,forget_bias,clip,peephole", LSTM_CASES)
def test_lstm_kernels_equal_the_cell_math(batch, depth, units, width, forget_bias, clip, peephole):
    rng = np.random.default_rng(units)
    f32 = np.float32
    x, cs_prev, h_prev = (rng.standard_normal(s).astype(f32) for s in ((batch, depth), (batch, units), (batch, width)))
    w = (rng.standard_normal((depth + width, 4 * units)) * 0.4).astype(f32)
    b, (wci, wcf, wco) = (rng.standard_normal(4 * units) * 0.4).astype(f32), rng.standard_normal((3, units)).astype(f32)
    cs_grad, h_grad = rng.standard_normal((2, batch, units)).astype(f32)
    outs = lstm_block_cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias, clip, peephole)
    grads = lstm_block_cell_grad(cs_prev, wci, wcf, wco, *outs[:6], cs_grad, h_grad, peephole, clip)
    want_outs, want_grads = _lstm_reference(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias, clip, peephole,
                                            cs_grad, h_grad)
    # The gradient kernel is fed the float32 forward outputs; the reference recomputes them in float64.
    for got, want in zip(outs + grads, want_outs + want_grads):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,depth,units,width,forget_bias,clip,peephole", LSTM_CASES)
def test_lstm_cell_in_one_call_equals_the_cell_of_numpy_calls(batch, depth, units, width, forget_bias, clip,
                                                               peephole, dtype, monkeypatch):
    """`_cell` (the gemm called from compiled code) against the numpy-call cell used where numpy has another
    BLAS: the same bits, x read through a transposed view too."""
    rng = np.random.default_rng(units + 1)
    x = rng.standard_normal((depth, batch)).astype(dtype).T  # not C-contiguous
    cs_prev, h_prev = rng.standard_normal((batch, units)).astype(dtype), rng.standard_normal((batch, width)).astype(dtype)
    w = (rng.standard_normal((depth + width, 4 * units)) * 0.4).astype(dtype)
    b, peeps = (rng.standard_normal(4 * units) * 0.4).astype(dtype), rng.standard_normal((3, units)).astype(dtype)
    args = (x, cs_prev, h_prev, w, *peeps, b, forget_bias, clip, peephole)
    assert lstm.gemm_address(np.dtype(dtype)) is not None  # numpy's bundled OpenBLAS: the one-call cell runs
    in_one_call = lstm_block_cell(*args)
    monkeypatch.setattr(lstm, "gemm_address", lambda dtype: None)
    of_numpy_calls = lstm_block_cell(*args)
    for got, want in zip(in_one_call, of_numpy_calls):
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch,depth,units", [(9, 7, 64), (5, 3, 37), (2, 20, 130), (4, 6, 5)])
@pytest.mark.parametrize("transposed_weights,with_d_x", [(False, True), (True, True), (True, False), (False, False)])
def test_gru_ops_in_one_call_equal_the_ops_of_numpy_calls(batch, depth, units, transposed_weights, with_d_x, dtype,
                                                          monkeypatch):
    """`gru._cell` and `gru._cell_grad` (both products called from compiled code, the weights read in place
    through BLAS's strides) against the numpy-call ops used where numpy has another BLAS: the same bits,
    x read through a transposed view, the weights as they are or transposed, with and without d_x."""
    rng = np.random.default_rng(units + depth)
    x = rng.standard_normal((depth, batch)).astype(dtype).T  # not C-contiguous
    h_prev = rng.standard_normal((batch, units)).astype(dtype)
    w_ru, w_c = ((rng.standard_normal((depth + units, m)) * 0.5).astype(dtype) for m in (2 * units, units))
    b_ru, b_c = (rng.standard_normal(m).astype(dtype) for m in (2 * units, units))
    d_h = rng.standard_normal((batch, units)).astype(dtype)
    weights = (np.ascontiguousarray(w_ru.T), np.ascontiguousarray(w_c.T)) if transposed_weights else (w_ru, w_c)

    def both_ops():
        outs = gru_block_cell(x, h_prev, w_ru, w_c, b_ru, b_c)
        return outs + gru_block_cell_grad(x, h_prev, *weights, b_ru, b_c, *outs[:3], d_h, transposed_weights,
                                          with_d_x)

    assert gru.gemm_address(np.dtype(dtype)) is not None  # numpy's bundled OpenBLAS: the one-call ops run
    in_one_call = both_ops()
    monkeypatch.setattr(gru, "gemm_address", lambda dtype: None)
    of_numpy_calls = both_ops()
    assert (in_one_call[4] is None) == (of_numpy_calls[4] is None) == (not with_d_x)
    for got, want in zip(in_one_call, of_numpy_calls):
        if want is not None:
            assert got.dtype == dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_lstm_kernel_without_peepholes_ignores_the_peephole_weights():
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (4, 32), (4, 32), (35, 128))]
    peeps = [rng.standard_normal(32).astype(np.float32) for _ in range(3)]
    b = np.zeros(128, np.float32)
    with_weights = lstm_block_cell(*args, *peeps, b)
    zeros = lstm_block_cell(*args, *(np.zeros(32, np.float32),) * 3, b)
    for got, want in zip(with_weights, zeros):
        np.testing.assert_array_equal(got, want)
    grad = lstm_block_cell_grad(args[1], *peeps, *with_weights[:6], args[1], args[2])
    grad_zeros = lstm_block_cell_grad(args[1], *(np.zeros(32, np.float32),) * 3, *with_weights[:6], args[1], args[2])
    for got, want in zip(grad, grad_zeros):
        np.testing.assert_array_equal(got, want)
