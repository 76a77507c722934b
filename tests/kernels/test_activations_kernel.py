"""Sigmoid/tanh kernels and their gradients against float64 numpy, over ranges, shapes and dtypes."""

import numpy as np
import pytest

from tftk.kernels import activations

RANGES = {"tiny": 1e-6, "unit": 1.0, "gates": 8.0, "wide": 60.0}


def _x(shape, scale, dtype, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


@pytest.mark.parametrize("scale", RANGES.values(), ids=RANGES.keys())
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (33, 17), (2, 3, 5)])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 4e-7), (np.float64, 1e-15)])
def test_sigmoid_matches_float64_reference_to_relative_precision(scale, shape, dtype, rtol):
    x = _x(shape, scale, dtype)
    ref = 1 / (1 + np.exp(-x.astype(np.float64)))
    y = activations.sigmoid(x)
    assert y.dtype == dtype and y.shape == shape
    np.testing.assert_allclose(y, ref, rtol=rtol, atol=np.finfo(dtype).tiny)  # denormals flush to 0


@pytest.mark.parametrize("scale", RANGES.values(), ids=RANGES.keys())
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (33, 17), (2, 3, 5)])
@pytest.mark.parametrize("dtype,tol", [(np.float32, 4e-7), (np.float64, 1e-15)])
def test_tanh_matches_float64_reference(scale, shape, dtype, tol):
    x = _x(shape, scale, dtype)
    ref = np.tanh(x.astype(np.float64))
    y = activations.tanh(x)
    assert y.dtype == dtype and y.shape == shape
    np.testing.assert_allclose(y, ref, rtol=tol, atol=tol * 1e-3)


def test_sigmoid_tails_keep_relative_precision_and_saturate():
    x = np.array([-87.0, -80.0, -30.0, -9.0, 0.0, 9.0, 30.0, 100.0, np.inf, -np.inf], np.float32)
    y = activations.sigmoid(x)
    ref = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(y[:-2], ref[:-2], rtol=4e-7)
    assert y[-2] == 1.0 and y[-1] == 0.0
    assert activations.tanh(np.array([np.inf, -np.inf, 10.0], np.float32)).tolist() == [1.0, -1.0, 1.0]


def test_nan_propagates():
    x = np.array([np.nan, 1.0], np.float32)
    assert np.isnan(activations.sigmoid(x)[0]) and np.isnan(activations.tanh(x)[0])


@pytest.mark.parametrize("name", ["sigmoid", "tanh"])
def test_out_may_be_the_input_and_non_contiguous_inputs_work(name):
    fn = getattr(activations, name)
    x = _x((6, 8), 3.0, np.float32)
    expected = fn(x.copy())
    assert fn(x, x) is x and np.array_equal(x, expected)
    strided = _x((6, 16), 3.0, np.float32)[:, ::2]
    np.testing.assert_array_equal(fn(strided), fn(np.ascontiguousarray(strided)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,formula", [("sigmoid_grad", lambda y, g: g * y * (1 - y)),
                                          ("tanh_grad", lambda y, g: g * (1 - y * y))])
def test_gradients_match_formula(dtype, name, formula):
    y = np.random.default_rng(1).uniform(-1, 1, (9, 13)).astype(dtype)
    g = _x((9, 13), 2.0, dtype, seed=2)
    out = getattr(activations, name)(y, g)
    assert out.dtype == dtype
    ref = formula(y.astype(np.float64), g.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=1e-6 if dtype == np.float32 else 1e-14, atol=1e-7)


def test_other_dtypes_fall_back_to_numpy():
    x = np.array([-2.0, 0.0, 3.0], np.float16)
    np.testing.assert_allclose(activations.sigmoid(x), 1 / (1 + np.exp(-x)), rtol=1e-3)
    np.testing.assert_allclose(activations.tanh(x), np.tanh(x), rtol=1e-3)
