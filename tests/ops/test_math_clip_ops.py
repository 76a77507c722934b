"""Forward values of scan, matrix, linalg, spectral, quantize and clip ops against float64 references."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import tftk as tf
from tftk.framework import dtypes
from tftk.ops import clip_ops, einsum_ops, linalg_ops, matrix_ops, quantize_ops, scan_ops, spectral_ops

FLOATS = [np.float32, np.float64]


def run(t, feed=None):
    graph = (t[0] if isinstance(t, (list, tuple)) else t).graph
    with tf.Session(graph=graph) as sess:
        return sess.run(t, feed)


@pytest.mark.parametrize("dtype", FLOATS + [np.int32])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin_first_on_ties(dtype, axis):
    x = np.array([[3, 1, 3], [0, 5, 5]], dtype)
    assert scan_ops.argmax(x, axis).dtype == tf.int64
    np.testing.assert_array_equal(run(scan_ops.argmax(x, axis)), np.argmax(x, axis))
    np.testing.assert_array_equal(run(scan_ops.argmin(x, axis, output_type=tf.int32)), np.argmin(x, axis))


def scan_reference(x, axis, exclusive, reverse, op):
    """out[i] = op over x[j] for j <= i (j < i if exclusive), j >= i when reversed."""
    x = np.moveaxis(x.astype(np.float64), axis, 0)
    n = x.shape[0]
    out = np.empty_like(x)
    for i in range(n):
        js = [j for j in range(n) if (j >= i if reverse else j <= i) and (j != i or not exclusive)]
        out[i] = functools.reduce(op, [x[j] for j in js]) if js else (0.0 if op is np.add else 1.0)
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumsum_cumprod(dtype, exclusive, reverse, axis):
    x = np.array([[1.5, 2.0, -1.0], [0.5, 3.0, 2.0]], dtype)
    np.testing.assert_allclose(run(scan_ops.cumsum(x, axis, exclusive, reverse)),
                               scan_reference(x, axis, exclusive, reverse, np.add), rtol=1e-6)
    np.testing.assert_allclose(run(scan_ops.cumprod(x, axis, exclusive, reverse)),
                               scan_reference(x, axis, exclusive, reverse, np.multiply), rtol=1e-6)


def test_trace_fft_tensordot():
    m = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_allclose(run(matrix_ops.trace(m)), [sum(m[b, i, i] for i in range(3)) for b in range(2)])
    z = (np.arange(8) + 1j * np.arange(8)[::-1]).astype(np.complex64)
    dft = np.exp(-2j * np.pi * np.outer(np.arange(8), np.arange(8)) / 8)
    out = spectral_ops.fft(z)
    assert out.dtype == tf.complex64
    np.testing.assert_allclose(run(out), dft @ z.astype(np.complex128), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(run(spectral_ops.ifft(spectral_ops.fft(z))), z, rtol=1e-5, atol=1e-5)
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(40.0).reshape(4, 2, 5)
    np.testing.assert_allclose(run(einsum_ops.tensordot(a, b, [[0, 2], [1, 0]])), np.tensordot(a, b, [[0, 2], [1, 0]]))
    np.testing.assert_allclose(run(einsum_ops.tensordot(a, np.ones((3, 4)), 2)), a.sum(axis=(1, 2)))
    with pytest.raises(TypeError, match="FFT"):
        spectral_ops.fft(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="tensordot"):
        einsum_ops.tensordot(a, b, [[0], [0]])


def quantize_reference(x, lo, hi, bits_signed):
    """TF1 MIN_COMBINED from its documented formula (range adjusted to contain 0, half away from zero),
    in float32 as TF's kernel computes it (tests/differential checks it against TF itself)."""
    info = np.iinfo(bits_signed)
    lo2 = min(0.0, lo)
    hi2 = max(0.0, max(hi, lo2 + max(1.0, abs(lo), abs(hi)) / 100.0))
    span = float(info.max) - float(info.min)
    f32 = np.float32
    out = (np.clip(x.astype(f32), f32(lo2), f32(hi2)) - f32(lo2)) * f32(span / (hi2 - lo2))
    if info.min < 0:
        out -= f32((span + 1) / 2.0)
    return np.clip(np.sign(out) * np.floor(np.abs(out) + 0.5), info.min, info.max), lo2, hi2


@pytest.mark.parametrize("T,npd", [(dtypes.quint8, np.uint8), (dtypes.qint8, np.int8), (dtypes.qint16, np.int16)])
@pytest.mark.parametrize("lo,hi", [(0.0, 6.0), (-1.0, 6.0), (1.0, 3.0)])
def test_quantize_min_combined(T, npd, lo, hi):
    x = np.linspace(-2.0, 7.0, 19).astype(np.float32)
    q, qmin, qmax = quantize_ops.quantize(x, lo, hi, T)
    assert q.dtype == T and q.dtype != tf.uint8
    got, got_min, got_max = run([q, qmin, qmax])
    expected, lo2, hi2 = quantize_reference(x.astype(np.float64), lo, hi, npd)
    np.testing.assert_array_equal(got, expected)
    assert (got_min, got_max) == (np.float32(lo2), np.float32(hi2))
    back = run(quantize_ops.dequantize(q, qmin, qmax))
    step = (hi2 - lo2) / (float(np.iinfo(npd).max) - float(np.iinfo(npd).min))
    inside = (x >= lo2) & (x <= hi2)
    assert np.all(np.abs(back[inside] - x[inside]) <= step / 2 + 1e-5)


def test_quantize_seed_style_example():
    q = run(quantize_ops.quantize([0.0, 1.0, 3.0, 6.0], 0.0, 6.0, dtypes.quint8)[0])
    assert q.tolist() == [0, 43, 128, 255]  # x * 255 / 6, rounded half away from zero
    with pytest.raises(TypeError, match="quantized type"):
        quantize_ops.quantize([1.0], 0.0, 1.0, tf.uint8)


def test_bincount_norm():
    assert run(scan_ops.bincount([1, 1, 3], minlength=6)).tolist() == [0, 2, 0, 1, 0, 0]
    np.testing.assert_allclose(run(scan_ops.bincount([0, 2, 2], weights=[0.5, 1.0, 2.0])), [0.5, 0.0, 3.0])
    x = np.array([[3.0, -4.0], [1.0, 2.0]])
    np.testing.assert_allclose(run(linalg_ops.norm(x)), np.sqrt((x ** 2).sum()))
    np.testing.assert_allclose(run(linalg_ops.norm(x, ord=1, axis=1)), np.abs(x).sum(1))
    np.testing.assert_allclose(run(linalg_ops.norm(x, ord=np.inf, axis=0, keepdims=True)), [[3.0, 4.0]])


@pytest.mark.parametrize("dtype", FLOATS)
def test_clip_ops_against_formulas(dtype):
    t = np.array([[3.0, -4.0], [0.0, 0.0], [1.0, 1.0]], dtype)
    np.testing.assert_array_equal(run(clip_ops.clip_by_value(t, -1.0, 2.0)), np.clip(t, -1, 2))
    norm = np.sqrt((t.astype(np.float64) ** 2).sum())
    np.testing.assert_allclose(run(clip_ops.clip_by_norm(t, 2.0)), t * 2.0 / max(norm, 2.0), rtol=1e-6)
    rows = np.sqrt((t.astype(np.float64) ** 2).sum(1, keepdims=True))
    np.testing.assert_allclose(run(clip_ops.clip_by_norm(t, 2.0, axes=[1])),
                               t * 2.0 / np.maximum(rows, 2.0), rtol=1e-6)
    np.testing.assert_allclose(run(clip_ops.clip_by_average_norm(t, 0.5)),
                               t * 0.5 / max(norm / t.size, 0.5), rtol=1e-6)
    u = np.array([12.0], dtype)
    clipped, gnorm = clip_ops.clip_by_global_norm([t, None, u], 6.5)
    assert clipped[1] is None
    total = np.sqrt(norm ** 2 + 144.0)
    got = run([clipped[0], clipped[2], gnorm])
    np.testing.assert_allclose(got[2], total, rtol=1e-6)
    np.testing.assert_allclose(got[0], t * 6.5 / total, rtol=1e-6)
    np.testing.assert_allclose(run(clip_ops.global_norm([t, None, u])), total, rtol=1e-6)


def test_clip_by_global_norm_with_infinite_norm_gives_nan():
    clipped, norm = clip_ops.clip_by_global_norm([tf.constant([np.inf, 1.0])], 1.0)
    with np.errstate(invalid="ignore"):
        assert np.all(np.isnan(run(clipped[0])))
    with pytest.raises(ValueError, match="global_norm"):
        clip_ops.global_norm([None])
