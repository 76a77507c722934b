"""tf.distributions' base class and continuous distributions: Normal, Uniform, Laplace, StudentT,
Exponential, Gamma, Beta, with log_prob/prob, cdf where TF has one, mean/variance/stddev/mode,
entropy, sampling, and kl_divergence (RegisterKL). The discrete and multivariate ones are in
discrete_distributions.py.

Each distribution is a Python object over tensors: its methods build ops (so everything is
differentiable where the formulas are), with the batch shape the parameters broadcast to.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, random_ops, reduction_ops
from tftk.ops.gather_ops import where
from tftk.ops.safe_math_ops import xlog1py
from tftk.ops.special_math_ops import digamma, erfc, lbeta, lgamma, xlogy

__all__ = ["ReparameterizationType", "FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Distribution", "Normal",
           "Uniform", "Laplace", "StudentT", "Exponential", "Gamma", "Beta", "RegisterKL", "kl_divergence"]


class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters."""

    def __init__(self, rep_type: str) -> None:
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameteriation Type: {self._rep_type}>"


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def _broadcast(*tensors: Tensor) -> Tensor:
    """A zero tensor of the parameters' broadcast shape (added to each to broadcast it)."""
    total = tensors[0] * 0
    for t in tensors[1:]:
        total = total + t * 0
    return total


class Distribution:
    """The shared interface: methods named as TF's, each under a name scope of the distribution."""

    def __init__(self, dtype: Any, reparameterization_type: ReparameterizationType, validate_args: bool,
                 allow_nan_stats: bool, parameters: dict | None = None, graph_parents: Any = None,
                 name: str | None = None) -> None:
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._validate_args, self._allow_nan_stats = validate_args, allow_nan_stats
        self._parameters = dict(parameters or {})
        self._name = name or type(self).__name__

    dtype = property(lambda self: self._dtype)
    name = property(lambda self: self._name)
    parameters = property(lambda self: dict(self._parameters))
    reparameterization_type = property(lambda self: self._reparameterization_type)
    validate_args = property(lambda self: self._validate_args)
    allow_nan_stats = property(lambda self: self._allow_nan_stats)

    # shapes
    def _zeros(self) -> Tensor:
        raise NotImplementedError

    @property
    def batch_shape(self) -> Any:
        return self._zeros().shape[:self._zeros().shape.ndims - self._event_rank()] \
            if self._zeros().shape.ndims is not None else self._zeros().shape

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        shape = array_ops.shape(self._zeros())
        return shape[:array_ops.size(shape) - self._event_rank()] if self._event_rank() else shape

    def _event_rank(self) -> int:
        return 0

    @property
    def event_shape(self) -> Any:
        z = self._zeros()
        return z.shape[z.shape.ndims - self._event_rank():] if self._event_rank() else z.shape[:0]

    def event_shape_tensor(self, name: str = "event_shape_tensor") -> Tensor:
        shape = array_ops.shape(self._zeros())
        return shape[array_ops.size(shape) - self._event_rank():] if self._event_rank() else shape[:0]

    def is_scalar_batch(self) -> bool:
        return self.batch_shape.ndims == 0

    def is_scalar_event(self) -> bool:
        return self._event_rank() == 0

    # methods: each runs its _implementation under "<name>/<method>"
    def _call(self, method: str, *args: Any) -> Any:
        implementation = getattr(self, "_" + method, None)
        if implementation is None:
            raise NotImplementedError(f"{method} is not implemented: {type(self).__name__}")
        with name_scope(self._name):
            with name_scope(method):
                return implementation(*args)

    def _value(self, value: Any) -> Tensor:
        return convert_to_tensor(value, dtype=self._dtype, name="value")

    def log_prob(self, value: Any, name: str = "log_prob") -> Tensor:
        return self._call("log_prob", self._value(value))

    def prob(self, value: Any, name: str = "prob") -> Tensor:
        return math_ops.exp(self.log_prob(value))

    def cdf(self, value: Any, name: str = "cdf") -> Tensor:
        return self._call("cdf", self._value(value))

    def log_cdf(self, value: Any, name: str = "log_cdf") -> Tensor:
        return math_ops.log(self.cdf(value))

    def survival_function(self, value: Any, name: str = "survival_function") -> Tensor:
        return 1.0 - self.cdf(value)

    def log_survival_function(self, value: Any, name: str = "log_survival_function") -> Tensor:
        return math_ops.log(self.survival_function(value))

    def entropy(self, name: str = "entropy") -> Tensor:
        return self._call("entropy")

    def mean(self, name: str = "mean") -> Tensor:
        return self._call("mean")

    def variance(self, name: str = "variance") -> Tensor:
        return self._call("variance")

    def stddev(self, name: str = "stddev") -> Tensor:
        return math_ops.sqrt(self.variance())

    def mode(self, name: str = "mode") -> Tensor:
        return self._call("mode")

    def covariance(self, name: str = "covariance") -> Tensor:
        return self._call("covariance")

    def sample(self, sample_shape: Any = (), seed: int | None = None, name: str = "sample") -> Tensor:
        shape = [int(sample_shape)] if isinstance(sample_shape, int) else list(sample_shape)
        return self._call("sample", shape, seed)

    def kl_divergence(self, other: "Distribution", name: str = "kl_divergence") -> Tensor:
        return kl_divergence(self, other)

    def cross_entropy(self, other: "Distribution", name: str = "cross_entropy") -> Tensor:
        return self.entropy() + kl_divergence(self, other)

    def _nan_unless(self, ok: Tensor, value: Tensor, what: str) -> Tensor:
        if self._allow_nan_stats:
            return where(ok, value, value + np.nan)
        from tftk.ops.check_ops import assert_equal
        from tftk.framework.ops import control_dependencies
        with control_dependencies([assert_equal(reduction_ops.reduce_all(ok), True, message=f"{what} is undefined")]):
            return array_ops.identity(value)


def _sample_shape(shape: list, batch: Tensor) -> Tensor:
    return array_ops.concat([convert_to_tensor(shape, dtype=dtypes.int32), array_ops.shape(batch)], 0)


def _float_params(names: list[str], values: list[Any], dtype: Any = None) -> list[Tensor]:
    first = convert_to_tensor(values[0], dtype=dtype, name=names[0])
    return [first] + [convert_to_tensor(v, dtype=first.dtype, name=n) for n, v in zip(names[1:], values[1:])]


# ---- continuous, location-scale ------------------------------------------------------------------------

class _LocScale(Distribution):
    def __init__(self, loc: Any, scale: Any, validate_args: bool, allow_nan_stats: bool, name: str) -> None:
        with name_scope(name, values=[loc, scale]) as scope:
            self._loc, self._scale = _float_params(["loc", "scale"], [loc, scale])
        super().__init__(self._loc.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"loc": loc, "scale": scale}, name=scope)

    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _zeros(self) -> Tensor:
        return _broadcast(self._loc, self._scale)

    def _mean(self) -> Tensor:
        return self._loc + self._zeros()

    def _mode(self) -> Tensor:
        return self._mean()

    def _z(self, x: Tensor) -> Tensor:
        return (x - self._loc) / self._scale


class Normal(_LocScale):
    """The normal distribution N(loc, scale^2)."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Normal") -> None:
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _log_prob(self, x: Tensor) -> Tensor:
        return -0.5 * math_ops.square(self._z(x)) - (0.5 * math.log(2 * math.pi) + math_ops.log(self._scale))

    def _cdf(self, x: Tensor) -> Tensor:
        return 0.5 * erfc(-self._z(x) * (1 / math.sqrt(2)))

    def _entropy(self) -> Tensor:
        return 0.5 * math.log(2 * math.pi * math.e) + math_ops.log(self._scale) + self._zeros()

    def _variance(self) -> Tensor:
        return math_ops.square(self._scale) + self._zeros()

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        noise = random_ops.random_normal(_sample_shape(shape, self._zeros()), dtype=self._dtype, seed=seed)
        return noise * self._scale + self._loc


class Laplace(_LocScale):
    """The Laplace distribution with density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(self, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Laplace") -> None:
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _log_prob(self, x: Tensor) -> Tensor:
        return -math_ops.abs(self._z(x)) - math.log(2.0) - math_ops.log(self._scale)

    def _cdf(self, x: Tensor) -> Tensor:
        z = self._z(x)
        return 0.5 - 0.5 * math_ops.sign(z) * math_ops.expm1(-math_ops.abs(z))

    def _entropy(self) -> Tensor:
        return math.log(2.0) + 1.0 + math_ops.log(self._scale) + self._zeros()

    def _variance(self) -> Tensor:
        return 2.0 * math_ops.square(self._scale) + self._zeros()

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        tiny = np.finfo(self._dtype.as_numpy_dtype).tiny
        u = random_ops.random_uniform(_sample_shape(shape, self._zeros()), -1.0 + tiny, 1.0, dtype=self._dtype,
                                      seed=seed)
        return self._loc - self._scale * math_ops.sign(u) * math_ops.log1p(-math_ops.abs(u))


class StudentT(Distribution):
    """Student's t with `df` degrees of freedom, location and scale."""

    def __init__(self, df: Any, loc: Any, scale: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "StudentT") -> None:
        with name_scope(name, values=[df, loc, scale]) as scope:
            self._df, self._loc, self._scale = _float_params(["df", "loc", "scale"], [df, loc, scale])
        super().__init__(self._df.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"df": df, "loc": loc, "scale": scale}, name=scope)

    df, loc, scale = (property(lambda self: self._df), property(lambda self: self._loc),
                      property(lambda self: self._scale))

    def _zeros(self) -> Tensor:
        return _broadcast(self._df, self._loc, self._scale)

    def _log_prob(self, x: Tensor) -> Tensor:
        z = (x - self._loc) / self._scale
        half = 0.5 * (self._df + 1.0)
        return (lgamma(half) - lgamma(0.5 * self._df) - 0.5 * math_ops.log(self._df * math.pi)
                - math_ops.log(math_ops.abs(self._scale)) - half * math_ops.log1p(math_ops.square(z) / self._df))

    def _entropy(self) -> Tensor:
        v = self._df + self._zeros()
        half = 0.5 * (v + 1.0)
        beta = lgamma(0.5 * v) + lgamma(0.5 + v * 0) - lgamma(half)
        return half * (digamma(half) - digamma(0.5 * v)) + 0.5 * math_ops.log(v) + beta + \
            math_ops.log(math_ops.abs(self._scale))

    def _mean(self) -> Tensor:
        mean = self._loc + self._zeros()
        return self._nan_unless(math_ops.greater(self._df + self._zeros(), 1.0), mean, "mean")

    def _mode(self) -> Tensor:
        return self._loc + self._zeros()

    def _variance(self) -> Tensor:
        v = self._df + self._zeros()
        big = math_ops.greater(v, 2.0)
        var = math_ops.square(self._scale) * where(big, v, array_ops.ones_like(v)) / \
            where(big, v - 2.0, array_ops.ones_like(v))
        var = where(big, var, var * 0 + np.inf)
        return self._nan_unless(math_ops.greater(v, 1.0), var, "variance")

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        full = _sample_shape(shape, self._zeros())
        normal = random_ops.random_normal(full, dtype=self._dtype, seed=seed)
        chi2 = random_ops.random_gamma(shape, 0.5 * (self._df + self._zeros()), 0.5, dtype=self._dtype, seed=seed)
        return self._loc + self._scale * normal * math_ops.rsqrt(chi2 / self._df)


class Uniform(Distribution):
    """The uniform distribution on [low, high)."""

    def __init__(self, low: Any = 0.0, high: Any = 1.0, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Uniform") -> None:
        with name_scope(name, values=[low, high]) as scope:
            self._low, self._high = _float_params(["low", "high"], [low, high])
        super().__init__(self._low.dtype, FULLY_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"low": low, "high": high}, name=scope)

    low, high = property(lambda self: self._low), property(lambda self: self._high)

    def range(self, name: str = "range") -> Tensor:
        return self._high - self._low

    def _zeros(self) -> Tensor:
        return _broadcast(self._low, self._high)

    def _log_prob(self, x: Tensor) -> Tensor:
        return math_ops.log(self._prob(x))

    def _prob(self, x: Tensor) -> Tensor:
        inside = math_ops.logical_and(math_ops.greater_equal(x, self._low), math_ops.less(x, self._high))
        density = 1.0 / self.range() + x * 0
        return where(inside, density, array_ops.zeros_like(density))

    def prob(self, value: Any, name: str = "prob") -> Tensor:
        return self._call("prob", self._value(value))

    def _cdf(self, x: Tensor) -> Tensor:
        return math_ops.minimum(math_ops.maximum((x - self._low) / self.range(), 0.0), 1.0)

    def _entropy(self) -> Tensor:
        return math_ops.log(self.range()) + self._zeros()

    def _mean(self) -> Tensor:
        return (self._low + self._high) / 2.0

    def _variance(self) -> Tensor:
        return math_ops.square(self.range()) / 12.0

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        u = random_ops.random_uniform(_sample_shape(shape, self._zeros()), dtype=self._dtype, seed=seed)
        return self._low + self.range() * u


class Gamma(Distribution):
    """The gamma distribution with shape `concentration` and inverse scale `rate`."""

    def __init__(self, concentration: Any, rate: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Gamma") -> None:
        with name_scope(name, values=[concentration, rate]) as scope:
            self._concentration, self._rate = _float_params(["concentration", "rate"], [concentration, rate])
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"concentration": concentration, "rate": rate}, name=scope)

    concentration, rate = property(lambda self: self._concentration), property(lambda self: self._rate)

    def _zeros(self) -> Tensor:
        return _broadcast(self._concentration, self._rate)

    def _log_prob(self, x: Tensor) -> Tensor:
        a, b = self._concentration, self._rate
        return xlogy(a - 1.0, x) - b * x + a * math_ops.log(b) - lgamma(a)  # xlogy as TF (its gradient at a = 1 too)

    def _cdf(self, x: Tensor) -> Tensor:
        from tftk.ops.special_math_ops import igamma
        return igamma(self._concentration + x * 0, self._rate * x)

    def _entropy(self) -> Tensor:
        a = self._concentration + self._zeros()
        return a - math_ops.log(self._rate) + lgamma(a) + (1.0 - a) * digamma(a)

    def _mean(self) -> Tensor:
        return self._concentration / self._rate

    def _variance(self) -> Tensor:
        return self._concentration / math_ops.square(self._rate)

    def _mode(self) -> Tensor:
        mode = (self._concentration - 1.0) / self._rate
        return self._nan_unless(math_ops.greater(self._concentration + self._zeros(), 1.0), mode, "mode")

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        return random_ops.random_gamma(shape, self._concentration + self._zeros(), self._rate + self._zeros(),
                                       dtype=self._dtype, seed=seed)


class Exponential(Gamma):
    """The exponential distribution with `rate` (Gamma with concentration 1)."""

    def __init__(self, rate: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Exponential") -> None:
        rate_t = convert_to_tensor(rate, name="rate")
        super().__init__(array_ops.ones_like(rate_t), rate_t, validate_args, allow_nan_stats, name)
        self._parameters = {"rate": rate}

    def _cdf(self, x: Tensor) -> Tensor:
        return -math_ops.expm1(-self._rate * x)


class Beta(Distribution):
    """The beta distribution on (0, 1) with concentrations a = concentration1, b = concentration0."""

    def __init__(self, concentration1: Any = None, concentration0: Any = None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Beta") -> None:
        with name_scope(name, values=[concentration1, concentration0]) as scope:
            self._a, self._b = _float_params(["concentration1", "concentration0"], [concentration1, concentration0])
        super().__init__(self._a.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"concentration1": concentration1, "concentration0": concentration0}, name=scope)

    concentration1, concentration0 = property(lambda self: self._a), property(lambda self: self._b)
    total_concentration = property(lambda self: self._a + self._b)

    def _zeros(self) -> Tensor:
        return _broadcast(self._a, self._b)

    def _lbeta(self) -> Tensor:
        return lbeta(array_ops.stack([self._a + self._zeros(), self._b + self._zeros()], -1))

    def _log_prob(self, x: Tensor) -> Tensor:
        return xlogy(self._a - 1.0, x) + xlog1py(self._b - 1.0, -x) - self._lbeta()

    def _cdf(self, x: Tensor) -> Tensor:
        from tftk.ops.special_math_ops import betainc
        return betainc(self._a + x * 0, self._b + x * 0, x + self._zeros())

    def _entropy(self) -> Tensor:
        a, b = self._a + self._zeros(), self._b + self._zeros()
        return self._lbeta() - (a - 1.0) * digamma(a) - (b - 1.0) * digamma(b) + (a + b - 2.0) * digamma(a + b)

    def _mean(self) -> Tensor:
        return self._a / self.total_concentration

    def _variance(self) -> Tensor:
        total = self.total_concentration
        return self._a * self._b / (math_ops.square(total) * (total + 1.0))

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        a = random_ops.random_gamma(shape, self._a + self._zeros(), dtype=self._dtype, seed=seed)
        b = random_ops.random_gamma(shape, self._b + self._zeros(), dtype=self._dtype, seed=seed)
        return a / (a + b)

    def _mode(self) -> Tensor:
        mode = (self._a - 1.0) / (self.total_concentration - 2.0)
        ok = math_ops.logical_and(math_ops.greater(self._a + self._zeros(), 1.0),
                                  math_ops.greater(self._b + self._zeros(), 1.0))
        return self._nan_unless(ok, mode, "mode")


# ---- KL divergence -------------------------------------------------------------------------------------

_KL: dict[tuple[type, type], Callable] = {}


class RegisterKL:
    """Decorator registering kl(a, b) for a pair of distribution classes (subclasses inherit it)."""

    def __init__(self, dist_cls_a: type, dist_cls_b: type) -> None:
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn: Callable) -> Callable:
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _KL:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has already been registered "
                             f"to: {_KL[self._key]}")
        _KL[self._key] = kl_fn
        return kl_fn


def kl_divergence(distribution_a: Distribution, distribution_b: Distribution, allow_nan_stats: bool = True,
                  name: str | None = None) -> Tensor:
    """KL(a || b) by the most specific registered pair of classes."""
    for a in type(distribution_a).__mro__:
        for b in type(distribution_b).__mro__:
            if (a, b) in _KL:
                with name_scope(name, "KullbackLeibler"):
                    return _KL[(a, b)](distribution_a, distribution_b, name=name)
    raise NotImplementedError(f"No KL(distribution_a || distribution_b) registered for distribution_a type "
                              f"{type(distribution_a).__name__} and distribution_b type {type(distribution_b).__name__}")


@RegisterKL(Normal, Normal)
def _kl_normal_normal(a: Normal, b: Normal, name: str | None = None) -> Tensor:
    ratio = math_ops.square(a.scale / b.scale)
    return 0.5 * (ratio - 1.0 - math_ops.log(ratio)) + 0.5 * math_ops.square((a.loc - b.loc) / b.scale)


@RegisterKL(Gamma, Gamma)
def _kl_gamma_gamma(a: Gamma, b: Gamma, name: str | None = None) -> Tensor:
    return ((a.concentration - b.concentration) * digamma(a.concentration) + lgamma(b.concentration)
            - lgamma(a.concentration) + b.concentration * math_ops.log(a.rate) - b.concentration * math_ops.log(b.rate)
            + a.concentration * (b.rate / a.rate - 1.0))


@RegisterKL(Beta, Beta)
def _kl_beta_beta(a: Beta, b: Beta, name: str | None = None) -> Tensor:
    return (b._lbeta() - a._lbeta() + (a.concentration1 - b.concentration1) * digamma(a.concentration1)
            + (a.concentration0 - b.concentration0) * digamma(a.concentration0)
            + (b.total_concentration - a.total_concentration) * digamma(a.total_concentration))
