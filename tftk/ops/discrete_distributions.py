"""tf.distributions' discrete and multivariate distributions: Bernoulli, Categorical, Dirichlet,
Multinomial, DirichletMultinomial (the base class and the continuous ones are in distributions.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, nn_ops, random_ops, reduction_ops
from tftk.ops.distributions import NOT_REPARAMETERIZED, Distribution, RegisterKL, _sample_shape
from tftk.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits
from tftk.ops.scan_ops import argmax
from tftk.ops.special_math_ops import digamma, lbeta, lgamma, xlogy

__all__ = ["Bernoulli", "Categorical", "Dirichlet", "Multinomial", "DirichletMultinomial"]


# ---- discrete ---------------------------------------------------------------------------------------------

class _LogitsOrProbs(Distribution):
    def _init_logits(self, logits: Any, probs: Any, multiclass: bool) -> None:
        if (logits is None) == (probs is None):
            raise ValueError("Must pass probs or logits, but not both.")
        if logits is not None:
            self._logits = convert_to_tensor(logits, name="logits")
            self._probs = nn_ops.softmax(self._logits) if multiclass else math_ops.sigmoid(self._logits)
        else:
            self._probs = convert_to_tensor(probs, name="probs")
            self._logits = math_ops.log(self._probs) if multiclass else \
                math_ops.log(self._probs) - math_ops.log1p(-self._probs)

    logits, probs = property(lambda self: self._logits), property(lambda self: self._probs)


class Bernoulli(_LogitsOrProbs):
    """A 0/1 outcome with P(1) = probs = sigmoid(logits)."""

    def __init__(self, logits: Any = None, probs: Any = None, dtype: Any = dtypes.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Bernoulli") -> None:
        with name_scope(name, values=[logits, probs]) as scope:
            self._init_logits(logits, probs, False)
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"logits": logits, "probs": probs}, name=scope)

    def _zeros(self) -> Tensor:
        return self._logits * 0

    def _log_prob(self, x: Tensor) -> Tensor:
        event = math_ops.cast(x, self._logits.dtype)
        logits = self._logits + event * 0
        return -sigmoid_cross_entropy_with_logits(labels=event + logits * 0, logits=logits)

    def _entropy(self) -> Tensor:
        return -self._logits * (math_ops.sigmoid(self._logits) - 1.0) + nn_ops.softplus(-self._logits)

    def _mean(self) -> Tensor:
        return array_ops.identity(self._probs)

    def _variance(self) -> Tensor:
        return self._probs * (1.0 - self._probs)

    def _mode(self) -> Tensor:
        return math_ops.cast(math_ops.greater(self._probs, 0.5), self._dtype)

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        u = random_ops.random_uniform(_sample_shape(shape, self._probs), dtype=self._probs.dtype, seed=seed)
        return math_ops.cast(math_ops.less(u, self._probs), self._dtype)


class Categorical(_LogitsOrProbs):
    """A class index k in [0, K) with P(k) = softmax(logits)[k]."""

    def __init__(self, logits: Any = None, probs: Any = None, dtype: Any = dtypes.int32, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Categorical") -> None:
        with name_scope(name, values=[logits, probs]) as scope:
            self._init_logits(logits, probs, True)
        super().__init__(dtypes.as_dtype(dtype), NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"logits": logits, "probs": probs}, name=scope)

    event_size = property(lambda self: array_ops.shape(self._logits)[-1])

    def _zeros(self) -> Tensor:
        return self._logits[..., 0] * 0

    def _log_prob(self, k: Tensor) -> Tensor:
        k = math_ops.cast(k, dtypes.int32)
        logits = self._logits + array_ops.expand_dims(math_ops.cast(k, self._logits.dtype) * 0, -1)
        labels = k + math_ops.cast(self._zeros(), dtypes.int32)
        return -sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)

    def _entropy(self) -> Tensor:
        return -reduction_ops.reduce_sum(nn_ops.log_softmax(self._logits) * self._probs, axis=-1)

    def _mode(self) -> Tensor:
        return math_ops.cast(argmax(self._logits, axis=-1), self._dtype)

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        n = int(np.prod(shape)) if shape else 1
        flat = array_ops.reshape(self._logits, array_ops.stack([-1, array_ops.shape(self._logits)[-1]]))
        draws = random_ops.multinomial(flat, n, seed=seed)  # [batch, n]
        draws = array_ops.transpose(draws)
        out = array_ops.reshape(draws, array_ops.concat([convert_to_tensor(shape, dtype=dtypes.int32),
                                                         array_ops.shape(self._logits)[:-1]], 0))
        return math_ops.cast(out, self._dtype)


class Dirichlet(Distribution):
    """Probability vectors with density prod x_i^(a_i - 1) / B(a)."""

    def __init__(self, concentration: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "Dirichlet") -> None:
        with name_scope(name, values=[concentration]) as scope:
            self._concentration = convert_to_tensor(concentration, name="concentration")
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"concentration": concentration}, name=scope)

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: reduction_ops.reduce_sum(self._concentration, axis=-1))

    def _event_rank(self) -> int:
        return 1

    def _zeros(self) -> Tensor:
        return self._concentration * 0

    def _log_prob(self, x: Tensor) -> Tensor:
        return reduction_ops.reduce_sum(xlogy(self._concentration - 1.0, x), axis=-1) - lbeta(self._concentration)

    def _entropy(self) -> Tensor:
        a, total = self._concentration, self.total_concentration
        k = math_ops.cast(array_ops.shape(a)[-1], a.dtype)
        return (lbeta(a) + (total - k) * digamma(total)
                - reduction_ops.reduce_sum((a - 1.0) * digamma(a), axis=-1))

    def _mean(self) -> Tensor:
        return self._concentration / array_ops.expand_dims(self.total_concentration, -1)

    def _variance(self) -> Tensor:
        total = array_ops.expand_dims(self.total_concentration, -1)
        mean = self._concentration / total
        return mean * (1.0 - mean) / (total + 1.0)

    def _sample(self, shape: list, seed: int | None) -> Tensor:
        g = random_ops.random_gamma(shape, self._concentration, dtype=self._dtype, seed=seed)
        return g / reduction_ops.reduce_sum(g, axis=-1, keepdims=True)


class Multinomial(_LogitsOrProbs):
    """Counts of total_count draws over K classes."""

    def __init__(self, total_count: Any, logits: Any = None, probs: Any = None, validate_args: bool = False,
                 allow_nan_stats: bool = True, name: str = "Multinomial") -> None:
        with name_scope(name, values=[total_count, logits, probs]) as scope:
            self._init_logits(logits, probs, True)
            self._total_count = convert_to_tensor(total_count, dtype=self._probs.dtype, name="total_count")
        super().__init__(self._probs.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"total_count": total_count, "logits": logits, "probs": probs}, name=scope)

    total_count = property(lambda self: self._total_count)

    def _event_rank(self) -> int:
        return 1

    def _zeros(self) -> Tensor:
        return self._probs * 0 + array_ops.expand_dims(self._total_count * 0, -1)

    def _log_prob(self, counts: Tensor) -> Tensor:
        return (lgamma(self._total_count + 1.0) - reduction_ops.reduce_sum(lgamma(counts + 1.0), axis=-1)
                + reduction_ops.reduce_sum(counts * nn_ops.log_softmax(self._logits), axis=-1))

    def _mean(self) -> Tensor:
        return array_ops.expand_dims(self._total_count, -1) * self._probs

    def _variance(self) -> Tensor:
        return self._mean() * (1.0 - self._probs)


class DirichletMultinomial(Distribution):
    """Counts of total_count draws whose class probabilities are Dirichlet(concentration)."""

    def __init__(self, total_count: Any, concentration: Any, validate_args: bool = False, allow_nan_stats: bool = True,
                 name: str = "DirichletMultinomial") -> None:
        with name_scope(name, values=[total_count, concentration]) as scope:
            self._concentration = convert_to_tensor(concentration, name="concentration")
            self._total_count = convert_to_tensor(total_count, dtype=self._concentration.dtype, name="total_count")
        super().__init__(self._concentration.dtype, NOT_REPARAMETERIZED, validate_args, allow_nan_stats,
                         {"total_count": total_count, "concentration": concentration}, name=scope)

    total_count, concentration = property(lambda self: self._total_count), property(lambda self: self._concentration)
    total_concentration = property(lambda self: reduction_ops.reduce_sum(self._concentration, axis=-1))

    def _event_rank(self) -> int:
        return 1

    def _zeros(self) -> Tensor:
        return self._concentration * 0 + array_ops.expand_dims(self._total_count * 0, -1)

    def _log_prob(self, counts: Tensor) -> Tensor:
        a, n, total = self._concentration, self._total_count, self.total_concentration
        return (lgamma(n + 1.0) + lgamma(total) - lgamma(n + total)
                + reduction_ops.reduce_sum(lgamma(counts + a) - lgamma(a) - lgamma(counts + 1.0), axis=-1))

    def _mean(self) -> Tensor:
        return array_ops.expand_dims(self._total_count / self.total_concentration, -1) * self._concentration

    def _variance(self) -> Tensor:
        n = array_ops.expand_dims(self._total_count, -1)
        total = array_ops.expand_dims(self.total_concentration, -1)
        p = self._concentration / total
        return n * p * (1.0 - p) * (n + total) / (1.0 + total)


@RegisterKL(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(a: Bernoulli, b: Bernoulli, name: str | None = None) -> Tensor:
    delta = nn_ops.softplus(-b.logits) - nn_ops.softplus(-a.logits)
    delta_neg = nn_ops.softplus(b.logits) - nn_ops.softplus(a.logits)
    return math_ops.sigmoid(a.logits) * delta + math_ops.sigmoid(-a.logits) * delta_neg


@RegisterKL(Categorical, Categorical)
def _kl_categorical_categorical(a: Categorical, b: Categorical, name: str | None = None) -> Tensor:
    log_ratio = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
    return reduction_ops.reduce_sum(nn_ops.softmax(a.logits) * log_ratio, axis=-1)


@RegisterKL(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(a: Dirichlet, b: Dirichlet, name: str | None = None) -> Tensor:
    digamma_sum = digamma(array_ops.expand_dims(a.total_concentration, -1))
    return (lbeta(b.concentration) - lbeta(a.concentration)
            + reduction_ops.reduce_sum((a.concentration - b.concentration)
                                       * (digamma(a.concentration) - digamma_sum), -1))
