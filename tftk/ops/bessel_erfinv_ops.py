"""More special functions: modified Bessel functions I0, I1 (and exponentially scaled I0e, I1e),
the inverse error functions (erfinv, erfcinv, ndtri), and small numeric helpers TF lists beside
them: polyval, cumulative_logsumexp, nextafter, rint, truncatediv/truncatemod, conj, angle and
accumulate_n.

Bessel functions: I_n(x) = (1/pi) * integral_0^pi exp(x cos t) cos(n t) dt, evaluated as
exp(|x|) times the trapezoidal sum of a periodic analytic integrand, which converges
geometrically (float64 rounding with the point count used). erfinv: a rational first guess
(Giles 2010) refined by Newton steps on math.erf. Gradients as TF's math_grad defines them.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.gather_ops import where
from tftk.ops.op_builder import binary_inputs, broadcast_shape, op_scope
from tftk.ops.scan_ops import cumsum
from tftk.ops.spectral_ops import complex as make_complex, imag, real

__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "erfinv", "erfcinv", "ndtri", "polyval",
           "cumulative_logsumexp", "nextafter", "rint", "truncatediv", "truncatemod", "conj", "angle",
           "accumulate_n"]


# ---- Bessel I0, I1 ------------------------------------------------------------------------------

def _scaled_bessel(x: np.ndarray, order: int) -> np.ndarray:
    """exp(-|x|) * I_order(x), by the trapezoidal rule on (1/pi) int_0^pi e^{|x|(cos t - 1)} cos(n t) dt."""
    a = np.abs(x.astype(np.float64))
    points = int(min(4096, 64 + 8 * math.sqrt(float(a.max(initial=0.0)))))
    t = np.linspace(0.0, math.pi, points + 1)
    weights = np.full(points + 1, 1.0 / points)
    weights[[0, -1]] *= 0.5
    integrand = np.exp(a[..., None] * (np.cos(t) - 1.0)) * np.cos(order * t)
    value = integrand @ weights
    return value * np.sign(x) if order == 1 else value


def _bessel_kernel(order: int, scaled: bool):
    def kernel(x: np.ndarray) -> np.ndarray:
        value = _scaled_bessel(x, order)
        return value if scaled else value * np.exp(np.abs(x.astype(np.float64)))
    return kernel


for _name, _order, _scaled in (("BesselI0", 0, False), ("BesselI0e", 0, True), ("BesselI1", 1, False),
                               ("BesselI1e", 1, True)):
    register_array_op(_name, _bessel_kernel(_order, _scaled), differentiable=True)


def _float_unary(op_type: str, x: Any, name: str | None) -> Tensor:
    t = convert_to_tensor(x, name="x")
    if not t.dtype.is_floating:
        raise TypeError(f"{op_type}: x must be a floating-point tensor, got {t.dtype.name}")
    return array_op(op_type, [t], [(t.dtype, t.shape)], name)


def bessel_i0(x: Any, name: str | None = None) -> Tensor:
    """Modified Bessel function of the first kind, order 0."""
    return _float_unary("BesselI0", x, name)


def bessel_i0e(x: Any, name: str | None = None) -> Tensor:
    """exp(-|x|) * I0(x): I0 without its exponential growth."""
    return _float_unary("BesselI0e", x, name)


def bessel_i1(x: Any, name: str | None = None) -> Tensor:
    """Modified Bessel function of the first kind, order 1."""
    return _float_unary("BesselI1", x, name)


def bessel_i1e(x: Any, name: str | None = None) -> Tensor:
    """exp(-|x|) * I1(x)."""
    return _float_unary("BesselI1e", x, name)


def _i1_over_x(x: Tensor, i1: Tensor) -> Tensor:
    """I1(x) / x, with its limit 1/2 at x = 0 (the scaled form's limit too)."""
    zero = math_ops.equal(x, 0)
    ones = array_ops.ones_like(x)
    return where(zero, 0.5 * ones, i1 / where(zero, ones, x))


@registry.register_gradient("BesselI0")
def _bessel_i0_grad(op, grad):
    return [grad * bessel_i1(op.inputs[0])]


@registry.register_gradient("BesselI0e")
def _bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (bessel_i1e(x) - math_ops.sign(x) * y)]


@registry.register_gradient("BesselI1")
def _bessel_i1_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (bessel_i0(x) - _i1_over_x(x, y))]


@registry.register_gradient("BesselI1e")
def _bessel_i1e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return [grad * (bessel_i0e(x) - y * math_ops.sign(x) - _i1_over_x(x, y))]


# ---- erfinv / ndtri / erfcinv -------------------------------------------------------------------

def _giles_guess(y: float, w: float) -> float:
    """Giles' single-precision erfinv(y), with w = -log((1 - y)(1 + y)) given exactly by the caller."""
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    return p * y


def _erfcinv_small(q: float) -> float:
    """x > 0 with erfc(x) = q, for 0 < q <= 1/2: Newton on log erfc, which stays well conditioned."""
    x = _giles_guess(1.0 - q, -math.log(q * (2.0 - q)))
    target = math.log(q)
    for _ in range(8):
        e = math.erfc(x)
        if e == 0.0:
            break
        step = (math.log(e) - target) / (-2.0 / math.sqrt(math.pi) * math.exp(-x * x) / e)
        x -= step
        if abs(step) <= 1e-16 * x:
            break
    return x


def _erfinv_scalar(y: float) -> float:
    if math.isnan(y) or abs(y) > 1.0:
        return math.nan
    if abs(y) == 1.0:
        return math.copysign(math.inf, y)
    if abs(y) > 0.5:  # tail: solve erfc(|x|) = 1 - |y|, which is exact here
        return math.copysign(_erfcinv_small(1.0 - abs(y)), y)
    x = _giles_guess(y, -math.log((1.0 - y) * (1.0 + y)))
    for _ in range(3):
        x -= (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _ndtri_scalar(p: float) -> float:
    """-sqrt(2) * erfcinv(2p), keeping the precision of tiny p and of p near 1."""
    if math.isnan(p) or p < 0.0 or p > 1.0:
        return math.nan
    if p in (0.0, 1.0):
        return -math.inf if p == 0.0 else math.inf
    if p < 0.25:
        return -math.sqrt(2.0) * _erfcinv_small(2.0 * p)
    if p > 0.75:
        return math.sqrt(2.0) * _erfcinv_small(2.0 * (1.0 - p))
    return math.sqrt(2.0) * _erfinv_scalar(2.0 * p - 1.0)


_erfinv_vector = np.frompyfunc(_erfinv_scalar, 1, 1)
_ndtri_vector = np.frompyfunc(_ndtri_scalar, 1, 1)
register_array_op("Erfinv", lambda x: _erfinv_vector(x.astype(np.float64)).astype(np.float64),
                  differentiable=True)
register_array_op("Ndtri", lambda x: _ndtri_vector(x.astype(np.float64)).astype(np.float64), differentiable=True)


@registry.register_gradient("Erfinv")
def _erfinv_grad(op, grad):
    y = op.outputs[0]
    return [grad * (math.sqrt(math.pi) / 2) * math_ops.exp(math_ops.square(y))]


@registry.register_gradient("Ndtri")
def _ndtri_grad(op, grad):
    y = op.outputs[0]
    return [grad * math.sqrt(2 * math.pi) * math_ops.exp(math_ops.square(y) / 2.0)]


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside)."""
    return _float_unary("Erfinv", x, name)


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The inverse of the standard normal CDF on (0, 1)."""
    return _float_unary("Ndtri", x, name)


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of erfc on (0, 2): -ndtri(x / 2) / sqrt(2), as TF computes it."""
    with name_scope(name, "erfcinv", [x]):
        t = convert_to_tensor(x, name="x")
        return -ndtri(0.5 * t) * math.sqrt(0.5)


# ---- polyval, cumulative_logsumexp ---------------------------------------------------------------

def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> Tensor:
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1], by Horner's rule (0 for no coefficients)."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type found {type(coeffs)}.")
    with name_scope(name, "polyval", list(coeffs) + [x]):
        t = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_ops.zeros_like(t)
        value = convert_to_tensor(coeffs[0], dtype=t.dtype)
        for c in coeffs[1:]:
            value = c + value * t
        return value


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """log(cumsum(exp(x))) along `axis`, computed stably (shifted by the axis maximum)."""
    with name_scope(name, "CumulativeLogsumexp", [x]):
        t = convert_to_tensor(x, name="x")
        shift = array_ops.stop_gradient(reduction_ops.reduce_max(t, axis=axis, keepdims=True))
        total = cumsum(math_ops.exp(t - shift), axis=axis, exclusive=exclusive, reverse=reverse)
        return math_ops.log(total) + shift


# ---- element-wise helpers ------------------------------------------------------------------------

register_array_op("NextAfter", np.nextafter)
register_array_op("Rint", np.rint)
register_array_op("TruncateDiv", lambda x, y: np.trunc(np.true_divide(x, y)) if x.dtype.kind == "f"
                  else _truncated_int_division(x, y))
register_array_op("TruncateMod", np.fmod)


def _truncated_int_division(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if (y == 0).any():
        raise ValueError("Integer division by zero")
    q = np.abs(x) // np.abs(y)
    return np.where((x < 0) ^ (y < 0), -q, q)


def _binary(op_type: str, x: Any, y: Any, name: str | None, floats_only: bool = False) -> Tensor:
    with op_scope(name, op_type, [x, y]) as scope:
        a, b = binary_inputs(x, y, op_type)
        if floats_only and not a.dtype.is_floating:
            raise TypeError(f"{op_type}: x1 and x2 must be float32 or float64, got {a.dtype.name}")
        return array_op(op_type, [a, b], [(a.dtype, broadcast_shape(a.shape, b.shape, op_type))], scope)


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable float after x1 in the direction of x2."""
    return _binary("NextAfter", x1, x2, name, floats_only=True)


def truncatediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y rounded toward zero (C's integer division)."""
    return _binary("TruncateDiv", x, y, name)


def truncatemod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The remainder of truncatediv: its sign follows x (C's fmod)."""
    return _binary("TruncateMod", x, y, name)


def rint(x: Any, name: str | None = None) -> Tensor:
    """x rounded to the nearest integer, halves to even (a float tensor)."""
    return _float_unary("Rint", x, name)


register_array_op("Conj", np.conj, differentiable=True)
registry.register_gradient("Conj")(lambda op, grad: [conj(grad)])


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is (TypeError for other dtypes)."""
    t = convert_to_tensor(x, name="x")
    if t.dtype.is_complex:
        return array_op("Conj", [t], [(t.dtype, t.shape)], name)
    if t.dtype.is_floating or t.dtype.is_integer:
        return t
    raise TypeError(f"Expected numeric or variant tensor, got dtype {t.dtype!r}")


register_array_op("Angle", np.angle, differentiable=True)


@registry.register_gradient("Angle")
def _angle_grad(op, grad):
    z = op.inputs[0]
    re, im = real(z), imag(z)
    # d angle / dz as TF writes it: -grad / (im + i re), as a complex gradient
    inverse = math_ops.reciprocal(make_complex(im, re))
    return [-make_complex(grad, array_ops.zeros_like(grad)) * inverse]


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The argument of complex values; for real ones 0 where x >= 0 and pi where x < 0."""
    with name_scope(name, "Angle", [input]) as scope:
        t = convert_to_tensor(input, name="input")
        if t.dtype.is_complex:
            real_type = dtypes.float64 if t.dtype is dtypes.complex128 else dtypes.float32
            return array_op("Angle", [t], [(real_type, t.shape)], scope)
        return where(math_ops.less(t, 0), math.pi * array_ops.ones_like(t), array_ops.zeros_like(t))


def accumulate_n(inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None) -> Tensor:
    """The element-wise sum of `inputs` (TF1's accumulate_n: add_n without waiting for all inputs)."""
    if not inputs or not isinstance(inputs, (list, tuple)):
        raise ValueError("inputs must be a list of at least one Tensor/IndexedSlices with the same dtype and shape")
    tensors = [convert_to_tensor(t) for t in inputs]
    if tensor_dtype is not None and any(t.dtype is not dtypes.as_dtype(tensor_dtype) for t in tensors):
        raise TypeError(f"tensor_dtype is {dtypes.as_dtype(tensor_dtype).name}, but input is of type "
                        f"{tensors[0].dtype.name}")
    if shape is not None:
        for t in tensors:
            t.shape.assert_is_compatible_with(shape)
    return math_ops.add_n(tensors, name=name)
