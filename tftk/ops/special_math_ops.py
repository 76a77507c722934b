"""Special functions: acosh, asinh, atanh, lgamma, digamma, polygamma, zeta, erfc, igamma/igammac, betainc, lbeta, xlogy, xdivy.

numpy has none of these and scipy is not a dependency, so the kernels are written here from the
classic series and continued fractions (Cephes / Numerical Recipes), accurate to float64 rounding
over the arguments tests cover. They are element-wise numpy loops, not hot paths of training.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import math_ops, reduction_ops
from tftk.ops.gather_ops import where
from tftk.ops.op_builder import binary_inputs, broadcast_shape, make_op

__all__ = ["acosh", "asinh", "atanh", "lgamma", "digamma", "polygamma", "zeta", "erfc", "igamma", "igammac", "betainc", "lbeta",
           "xlogy", "xdivy"]


def _elementwise(fn: Callable[..., float]) -> Callable[..., np.ndarray]:
    """A numpy kernel applying the scalar `fn` to broadcast float arrays, keeping their dtype."""
    def kernel(*arrays: np.ndarray) -> np.ndarray:
        dtype = np.result_type(*arrays)
        values = np.frompyfunc(fn, len(arrays), 1)(*[a.astype(np.float64) for a in arrays])
        return np.asarray(values, dtype=np.float64).astype(dtype)
    return kernel


# ---- scalar functions ------------------------------------------------------------------------------

def _lgamma(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def _digamma(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.nan
    result = 0.0
    if x < 0:  # reflection: psi(1 - x) - psi(x) = pi / tan(pi x)
        result -= math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132 - inv2 * 691 / 32760)))))
    return result + math.log(x) - 0.5 / x - series


_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18]


def _zeta(x: float, q: float) -> float:
    """Hurwitz zeta sum_k (k + q)^-x (Cephes' Euler-Maclaurin summation)."""
    if x == 1.0:
        return math.inf
    if x < 1.0:
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = q ** -x
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < 1e-17:
            return s
    w = a
    s += b * w / (x - 1.0) - 0.5 * b
    fac, k = 1.0, 0.0
    for coefficient in _ZETA_A:
        fac *= x + k
        b /= w
        t = fac * b / coefficient
        s += t
        if abs(t / s) < 1e-17:
            break
        k += 1.0
        fac *= x + k
        b /= w
        k += 1.0
    return s


def _polygamma(n: float, x: float) -> float:
    if n != math.floor(n) or n < 0:
        return math.nan
    if n == 0:
        return _digamma(x)
    return (-1.0) ** (n + 1) * math.exp(math.lgamma(n + 1.0)) * _zeta(n + 1.0, x)


def _igamma_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(1000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _igammac_fraction(a: float, x: float) -> float:
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def _igamma(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x)."""
    if x < 0 or a <= 0 or math.isnan(a) or math.isnan(x):
        return math.nan
    if x == 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    return _igamma_series(a, x) if x < a + 1.0 else 1.0 - _igammac_fraction(a, x)


def _igammac(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    if x < 0 or a <= 0 or math.isnan(a) or math.isnan(x):
        return math.nan
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    return 1.0 - _igamma_series(a, x) if x < a + 1.0 else _igammac_fraction(a, x)


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (tiny if abs(d) < tiny else d)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if a <= 0 or b <= 0 or x < 0 or x > 1 or math.isnan(x):
        return math.nan
    if x == 0 or x == 1:
        return x
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def _igamma_grad_a(a: float, x: float) -> float:
    """d P(a, x) / da by a Richardson-extrapolated central difference of the series/fraction."""
    if a <= 0 or x <= 0:
        return 0.0 if x == 0 else math.nan
    h = 1e-3 * max(1.0, a)
    if a - 2 * h <= 0:
        h = a / 4.0

    def d(step: float) -> float:
        return (_igamma(a + step, x) - _igamma(a - step, x)) / (2 * step)
    return (4.0 * d(h / 2) - d(h)) / 3.0


# ---- ops ---------------------------------------------------------------------------------------------

for _op_type, _ufunc in (("Acosh", np.arccosh), ("Asinh", np.arcsinh), ("Atanh", np.arctanh)):
    registry.register_op(_op_type, lambda op, ctx, f=_ufunc: f)
_KERNELS = {"Lgamma": _lgamma, "Digamma": _digamma, "Polygamma": _polygamma, "Zeta": _zeta,
            "Erfc": math.erfc, "Igamma": _igamma, "Igammac": _igammac, "Betainc": _betainc,
            "IgammaGradA": _igamma_grad_a}
for _op_type, _fn in _KERNELS.items():
    registry.register_op(_op_type, lambda op, ctx, fn=_fn: _elementwise(fn))
registry.not_differentiable("IgammaGradA")


def _float_inputs(op_type: str, values: list[Any]) -> list[Tensor]:
    """Convert the inputs; Python numbers take the dtype of the first tensor among them."""
    like = next((v.dtype for v in values if isinstance(v, Tensor)), None)
    tensors = [convert_to_tensor(v, dtype=like) for v in values]
    if not tensors[0].dtype.is_floating or any(t.dtype is not tensors[0].dtype for t in tensors):
        raise TypeError(f"{op_type}: inputs must be float tensors of one dtype, got "
                        f"{[t.dtype.name for t in tensors]}")
    return tensors


def _make(op_type: str, values: list[Any], name: str | None) -> Tensor:
    tensors = _float_inputs(op_type, values)
    shape = tensors[0].shape
    for t in tensors[1:]:
        shape = broadcast_shape(shape, t.shape, name or op_type)
    return make_op(op_type, tensors, tensors[0].dtype, shape, name)


def acosh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic cosine element-wise (x >= 1)."""
    return _make("Acosh", [x], name)


def asinh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic sine element-wise."""
    return _make("Asinh", [x], name)


def atanh(x: Any, name: str | None = None) -> Tensor:
    """Inverse hyperbolic tangent element-wise (|x| < 1)."""
    return _make("Atanh", [x], name)


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """log |Gamma(x)| element-wise."""
    return _make("Lgamma", [x], name)


def digamma(x: Any, name: str | None = None) -> Tensor:
    """Psi(x) = d/dx lgamma(x) element-wise."""
    return _make("Digamma", [x], name)


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The a-th derivative of digamma at x (a a non-negative integer value)."""
    return _make("Polygamma", [a, x], name)


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """Hurwitz zeta: sum over k >= 0 of (k + q)^-x."""
    return _make("Zeta", [x, q], name)


def erfc(x: Any, name: str | None = None) -> Tensor:
    """1 - erf(x), accurate for large x."""
    return _make("Erfc", [x], name)


def igamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """Regularized lower incomplete gamma P(a, x)."""
    return _make("Igamma", [a, x], name)


def igammac(a: Any, x: Any, name: str | None = None) -> Tensor:
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return _make("Igammac", [a, x], name)


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """Regularized incomplete beta I_x(a, b)."""
    return _make("Betainc", [a, b, x], name)


def lbeta(x: Any, name: str = "lbeta") -> Tensor:
    """log of the multivariate beta function over the last axis: sum(lgamma(x)) - lgamma(sum(x))."""
    with name_scope(name, "lbeta", [x]):
        t = convert_to_tensor(x)
        return math_ops.subtract(reduction_ops.reduce_sum(lgamma(t), axis=-1),
                                 lgamma(reduction_ops.reduce_sum(t, axis=-1)))


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * log(y), and 0 where x == 0 (even when y == 0)."""
    with name_scope(name, "xlogy", [x, y]):
        a, b = binary_inputs(x, y, "Xlogy")
        zero = math_ops.equal(a, 0.0)
        safe = where(zero, math_ops.add(math_ops.multiply(b, 0.0), 1.0), b)
        return math_ops.multiply(a, math_ops.log(safe))


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y, and 0 where x == 0 (even when y == 0)."""
    with name_scope(name, "xdivy", [x, y]):
        a, b = binary_inputs(x, y, "Xdivy")
        zero = math_ops.equal(a, 0.0)
        safe = where(zero, math_ops.add(math_ops.multiply(b, 0.0), 1.0), b)
        return math_ops.realdiv(a, safe)


# ---- gradients ---------------------------------------------------------------------------------------

def _unbroadcast(grads: list[Any], inputs: list[Tensor]) -> list[Any]:
    return [None if g is None else math_ops.unbroadcast(g, x) for g, x in zip(grads, inputs)]


@registry.register_gradient("Acosh")
def _acosh_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.realdiv(grad, math_ops.sqrt(math_ops.subtract(math_ops.square(x), 1.0)))]


@registry.register_gradient("Asinh")
def _asinh_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.realdiv(grad, math_ops.sqrt(math_ops.add(math_ops.square(x), 1.0)))]


@registry.register_gradient("Atanh")
def _atanh_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.realdiv(grad, math_ops.subtract(1.0, math_ops.square(x)))]


@registry.register_gradient("Lgamma")
def _lgamma_grad(op, grad):
    return [math_ops.multiply(grad, digamma(op.inputs[0]))]


@registry.register_gradient("Digamma")
def _digamma_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.multiply(grad, polygamma(math_ops.add(math_ops.multiply(x, 0.0), 1.0), x))]


@registry.register_gradient("Polygamma")
def _polygamma_grad(op, grad):
    a, x = op.inputs
    return _unbroadcast([None, math_ops.multiply(grad, polygamma(math_ops.add(a, 1.0), x))], [a, x])


@registry.register_gradient("Zeta")
def _zeta_grad(op, grad):
    x, q = op.inputs
    d_q = math_ops.multiply(grad, math_ops.negative(math_ops.multiply(x, zeta(math_ops.add(x, 1.0), q))))
    return _unbroadcast([None, d_q], [x, q])


@registry.register_gradient("Erfc")
def _erfc_grad(op, grad):
    x = op.inputs[0]
    return [math_ops.multiply(grad, math_ops.multiply(-2.0 / np.sqrt(np.pi), math_ops.exp(math_ops.negative(
        math_ops.square(x)))))]


def _igamma_partials(a: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
    """(dP/da, dP/dx); dP/dx = exp(-x + (a - 1) log x - lgamma(a))."""
    d_x = math_ops.exp(math_ops.subtract(math_ops.add(math_ops.negative(x), math_ops.multiply(
        math_ops.subtract(a, 1.0), math_ops.log(x))), lgamma(a)))
    a_b, x_b = math_ops.add(a, math_ops.multiply(x, 0.0)), math_ops.add(x, math_ops.multiply(a, 0.0))
    return make_op("IgammaGradA", [a_b, x_b], a.dtype, a_b.shape), d_x


@registry.register_gradient("Igamma")
def _igamma_grad(op, grad):
    a, x = op.inputs
    d_a, d_x = _igamma_partials(a, x)
    return _unbroadcast([math_ops.multiply(grad, d_a), math_ops.multiply(grad, d_x)], [a, x])


@registry.register_gradient("Igammac")
def _igammac_grad(op, grad):
    a, x = op.inputs
    d_a, d_x = _igamma_partials(a, x)
    return _unbroadcast([math_ops.multiply(grad, math_ops.negative(d_a)),
                         math_ops.multiply(grad, math_ops.negative(d_x))], [a, x])


@registry.register_gradient("Betainc")
def _betainc_grad(op, grad):
    """d/dx only, as TF: x^(a-1) (1-x)^(b-1) / B(a, b); a and b get no gradient."""
    a, b, x = op.inputs
    log_beta = math_ops.subtract(math_ops.add(lgamma(a), lgamma(b)), lgamma(math_ops.add(a, b)))
    log_density = math_ops.subtract(math_ops.add(
        xlogy(math_ops.subtract(a, 1.0), x),
        xlogy(math_ops.subtract(b, 1.0), math_ops.subtract(1.0, x))), log_beta)
    return _unbroadcast([None, None, math_ops.multiply(grad, math_ops.exp(log_density))], [a, b, x])
