"""TF1's cosine learning-rate schedules with warm restarts and linear decay (SGDR, Loshchilov & Hutter;
the linear-cosine schedule of Bello et al.), built as graph ops of the global step.

The plain `cosine_decay` lives in learning_rate_decay; these are the variants TF 1.10 added.
Arithmetic follows TF's definitions in the learning rate's dtype, so values match TF's within an ulp.
"""

from __future__ import annotations

import math
from typing import Any

from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import math_ops
from tftk.ops.control_flow_ops import cond
from tftk.ops.random_ops import random_normal
from tftk.train.learning_rate_decay import _as, _require_step

__all__ = ["cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay"]


def cosine_decay_restarts(learning_rate: Any, global_step: Any, first_decay_steps: Any, t_mul: Any = 2.0,
                          m_mul: Any = 1.0, alpha: Any = 0.0, name: str | None = None) -> Tensor:
    """Cosine decay that restarts: period i lasts first_decay_steps * t_mul**i steps and starts at m_mul**i.

    Within a period the rate is learning_rate * ((1 - alpha) * 0.5 * m_mul**i * (1 + cos(pi * f)) + alpha),
    f the fraction of the period done.
    """
    _require_step(global_step, "cosine_decay_restarts")
    with name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype
        one = _as(1.0, dtype)
        t_mul_t, m_mul_t, alpha_t = _as(t_mul, dtype), _as(m_mul, dtype), _as(alpha, dtype)
        completed = _as(global_step, dtype) / _as(first_decay_steps, dtype)

        def same_length_periods() -> tuple[Tensor, Tensor]:
            restarts = math_ops.floor(completed)
            return restarts, completed - restarts

        def growing_periods() -> tuple[Tensor, Tensor]:
            restarts = math_ops.floor(math_ops.log(one - completed * (one - t_mul_t)) / math_ops.log(t_mul_t))
            steps_before = (one - math_ops.pow(t_mul_t, restarts)) / (one - t_mul_t)
            return restarts, (completed - steps_before) / math_ops.pow(t_mul_t, restarts)

        restarts, fraction = cond(math_ops.equal(t_mul_t, one), same_length_periods, growing_periods)
        cosine = 0.5 * math_ops.pow(m_mul_t, restarts) * (one + math_ops.cos(_as(math.pi, dtype) * fraction))
        return math_ops.multiply(lr, (one - alpha_t) * cosine + alpha_t, name=scope)


def _linear_and_cosine(lr: Tensor, global_step: Any, decay_steps: Any, num_periods: Any) -> tuple[Tensor, Tensor, Tensor]:
    """(step capped at decay_steps, linear factor (decay_steps - step) / decay_steps, cosine factor)."""
    dtype = lr.dtype
    steps = _as(decay_steps, dtype)
    step = math_ops.minimum(_as(global_step, dtype), steps)
    linear = (steps - step) / steps
    fraction = 2.0 * _as(num_periods, dtype) * (step / steps)
    cosine = 0.5 * (1.0 + math_ops.cos(_as(math.pi, dtype) * fraction))
    return step, linear, cosine


def linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: Any = 0.5,
                        alpha: Any = 0.0, beta: Any = 0.001, name: str | None = None) -> Tensor:
    """learning_rate * ((alpha + linear) * cosine + beta): linear = 1 - step / decay_steps,
    cosine = 0.5 * (1 + cos(2 pi num_periods step / decay_steps)), step capped at decay_steps."""
    _require_step(global_step, "linear_cosine_decay")
    with name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        _, linear, cosine = _linear_and_cosine(lr, global_step, decay_steps, num_periods)
        decayed = (_as(alpha, lr.dtype) + linear) * cosine + _as(beta, lr.dtype)
        return math_ops.multiply(lr, decayed, name=scope)


def noisy_linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, initial_variance: Any = 1.0,
                              variance_decay: Any = 0.55, num_periods: Any = 0.5, alpha: Any = 0.0,
                              beta: Any = 0.001, name: str | None = None) -> Tensor:
    """linear_cosine_decay with Gaussian noise on the linear factor, of variance
    initial_variance / (1 + step) ** variance_decay (a fresh draw each run; the stream is tftk's, not TF's)."""
    _require_step(global_step, "noisy_linear_cosine_decay")
    with name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = lr.dtype
        step, linear, cosine = _linear_and_cosine(lr, global_step, decay_steps, num_periods)
        variance = _as(initial_variance, dtype) / math_ops.pow(1.0 + step, _as(variance_decay, dtype))
        noisy_linear = linear + random_normal([], stddev=math_ops.sqrt(variance), dtype=dtype)
        decayed = (_as(alpha, dtype) + noisy_linear) * cosine + _as(beta, dtype)
        return math_ops.multiply(lr, decayed, name=scope)
