"""Sigmoid and tanh and their gradients in one vectorised pass each, float32 at memory speed.

numpy has no sigmoid: the op used ``exp(-logaddexp(0, -x))``, four passes with float64-grade
temporaries (about 16 ns an element on 128x128 float32), and the gradients ``g * (y * (1 - y))``
made two temporaries each. Here every function is one Numba loop LLVM vectorises:

- ``tanh`` (float32): the 13/6-degree rational interpolant Eigen (and so TF's CPU kernel) uses,
  accurate to a couple of ulp on [-9, 9] and exactly +-1 outside.
- ``sigmoid`` (float32): ``1 / (1 + e)`` for x >= 0 and ``e / (1 + e)`` below, with
  ``e = exp(-|x|)`` from a branch-free exp (Cody-Waite reduction, a degree-6 polynomial and the
  power of two built from its bits), so tiny outputs keep their relative precision
  (sigmoid(-80) is 1.8e-35, not 0).
- float64 (and other float types) use the same formulas with `math.exp` / `math.tanh`: the
  exact path, for gradient checks.

The float32 polynomials are evaluated with fused multiply-adds where the CPU has them (`contract`:
one rounding per multiply-add, as Eigen's do; half the instructions), and the loops over arrays, here
and in the fused cells (`lstm`, `gru`), take 512-bit vectors where the CPU has them
(`jit.wide_vectors`): an LSTM cell's forward pass on a [128, 512] gate block, 75 -> 38 us.

Each kernel compiles per dtype on first use (nothing at import of tftk).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from tftk.kernels.jit import njit, wide_vectors

__all__ = ["sigmoid", "tanh", "sigmoid_grad", "tanh_grad", "fast_sigmoid", "fast_tanh"]


@intrinsic
def _int32_as_float32(typingctx, bits):  # pragma: no cover - compiled
    """Reinterpret an int32's bits as a float32 (LLVM bitcast: vectorises, unlike a view)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def _exp_neg(a):  # pragma: no cover - compiled
    """exp(-a) for a float32 a >= 0, within 2 ulp; 0 below the smallest normal (a > 87.3)."""
    big = a > np.float32(87.33)
    a = min(a, np.float32(87.33))
    n = np.floor(a * np.float32(1.44269504) + np.float32(0.5))  # a = n ln2 + r, |r| <= ln2 / 2
    r = (n * np.float32(0.693359375) - a) + n * np.float32(-2.12194440e-4)
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    e = (p * r * r + r) + np.float32(1.0)
    e = e * _int32_as_float32(np.int32(127 - np.int32(n)) << 23)
    return np.float32(0.0) if big else e


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def fast_sigmoid(x):  # pragma: no cover - compiled
    """Logistic function of a float32 scalar; see the module docstring."""
    e = _exp_neg(abs(x))
    s = np.float32(1.0) / (np.float32(1.0) + e)
    return s if x >= 0 else e * s


@njit(cache=True, error_model="numpy", fastmath={"contract"})
def fast_tanh(x):  # pragma: no cover - compiled
    """tanh of a float32 scalar by Eigen's rational interpolant (clamped to [-9, 9])."""
    x = max(min(x, np.float32(9.0)), np.float32(-9.0))
    x2 = x * x
    p = np.float32(-2.76076847742355e-16)
    p = p * x2 + np.float32(2.00018790482477e-13)
    p = p * x2 + np.float32(-8.60467152213735e-11)
    p = p * x2 + np.float32(5.12229709037114e-08)
    p = p * x2 + np.float32(1.48572235717979e-05)
    p = p * x2 + np.float32(6.37261928875436e-04)
    p = p * x2 + np.float32(4.89352455891786e-03)
    q = np.float32(1.19825839466702e-06)
    q = q * x2 + np.float32(1.18534705686654e-04)
    q = q * x2 + np.float32(2.26843463243900e-03)
    q = q * x2 + np.float32(4.89352518554385e-03)
    return x * p / q


@njit(cache=True, error_model="numpy")
def exact_sigmoid(x):  # pragma: no cover - compiled
    """Logistic function of a float64 scalar, stable for large |x|."""
    e = math.exp(-abs(x))
    s = 1.0 / (1.0 + e)
    return s if x >= 0 else e * s


@njit(cache=True, error_model="numpy")
def _sigmoid32(x, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(x.size):
        out[k] = fast_sigmoid(x[k])


@njit(cache=True, error_model="numpy")
def _tanh32(x, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(x.size):
        out[k] = fast_tanh(x[k])


@njit(cache=True, error_model="numpy")
def _sigmoid64(x, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(x.size):
        out[k] = exact_sigmoid(x[k])


@njit(cache=True, error_model="numpy")
def _sigmoid_grad(y, g, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(y.size):
        out[k] = g[k] * (y[k] - y[k] * y[k])  # no literal 1: it would widen float32 to float64


@njit(cache=True, error_model="numpy")
def _tanh_grad(y, g, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(y.size):
        out[k] = g[k] - g[k] * y[k] * y[k]


def _flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def _into(out: np.ndarray | None, x: np.ndarray) -> np.ndarray:
    """`out` when it can take the result (x's shape and dtype, contiguous), else a new array."""
    if out is not None and out.shape == x.shape and out.dtype == x.dtype and out.flags.c_contiguous:
        return out
    return np.empty(x.shape, x.dtype)


def sigmoid(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """1 / (1 + exp(-x)) element-wise in x's dtype, into `out` when it fits (it may be x)."""
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)
    result = _into(out, x)
    (_sigmoid32 if x.dtype == np.float32 else _sigmoid64)(_flat(x), result.reshape(-1))
    return result


def tanh(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """tanh element-wise (float32 through the rational interpolant, others through numpy)."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return np.tanh(x, out=out) if out is not None and out.shape == x.shape and out.dtype == x.dtype \
            else np.tanh(x)
    result = _into(out, x)
    _tanh32(_flat(x), result.reshape(-1))
    return result


def _grad(kernel, y: np.ndarray, g: np.ndarray, formula) -> np.ndarray:
    y, g = np.asarray(y), np.asarray(g)
    if y.shape != g.shape or y.dtype != g.dtype or y.dtype not in (np.float32, np.float64):
        return formula(y, g)
    out = np.empty(g.shape, g.dtype)
    kernel(_flat(y), _flat(g), out.reshape(-1))
    return out


def sigmoid_grad(y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """TF's SigmoidGrad: g * y * (1 - y), y the sigmoid's output."""
    return _grad(_sigmoid_grad, y, g, lambda y, g: g * (y * (1 - y)))


def tanh_grad(y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """TF's TanhGrad: g * (1 - y * y), y the tanh's output."""
    return _grad(_tanh_grad, y, g, lambda y, g: g * (1 - y * y))


def sigmoid_scalar(x):  # pragma: no cover - replaced by the overload inside compiled code
    """Logistic function of one scalar in compiled code: the fast float32 form, else the exact one."""
    raise TypeError("sigmoid_scalar is for Numba-compiled kernels")


def tanh_scalar(x):  # pragma: no cover - replaced by the overload inside compiled code
    """tanh of one scalar in compiled code: Eigen's interpolant for float32, else math.tanh."""
    raise TypeError("tanh_scalar is for Numba-compiled kernels")


@overload(sigmoid_scalar)
def _sigmoid_scalar(x):  # pragma: no cover - compiled
    if x == types.float32:
        return lambda x: fast_sigmoid(x)
    return lambda x: exact_sigmoid(x)


@overload(tanh_scalar)
def _tanh_scalar(x):  # pragma: no cover - compiled
    if x == types.float32:
        return lambda x: fast_tanh(x)
    return lambda x: math.tanh(x)
