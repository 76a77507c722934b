"""Learning-rate schedules of the global step (TF1's learning_rate_decay), built as graph ops.

Each returns a scalar tensor of the learning rate's dtype (float32 for a Python number) that
reads the step each time it runs, so passing it to an optimizer decays the rate as training goes.
The arithmetic is TF1's, in the learning rate's dtype (powers correctly rounded): e.g.
exponential_decay(0.1, step, 10, 0.9) gives 0.1, 0.09895193, 0.09791484, ... in float32.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import math_ops
from tftk.framework import dtypes
from tftk.ops.control_flow_ops import case, cond

__all__ = ["exponential_decay", "piecewise_constant", "polynomial_decay", "natural_exp_decay",
           "inverse_time_decay", "cosine_decay"]


def _as(value: Any, dtype: Any) -> Tensor:
    """`value` in `dtype`: tensors and Variables are cast, Python numbers convert exactly (no float32 detour)."""
    if isinstance(value, Tensor) or hasattr(value, "_ref"):
        return math_ops.cast(value, dtype)
    return convert_to_tensor(value, dtype=dtype)


def _rounded_pow(base: Tensor, exponent: Tensor) -> Tensor:
    """base ** exponent correctly rounded to base's dtype, via float64. numpy's float32 power is one ulp
    off TF1's printed schedule of seed 000 at step 4 (0.09587315 for 0.095873155); this is not."""
    if base.dtype is dtypes.float64:
        return math_ops.pow(base, exponent)
    wide = math_ops.pow(math_ops.cast(base, dtypes.float64), math_ops.cast(exponent, dtypes.float64))
    return math_ops.cast(wide, base.dtype)


def _require_step(global_step: Any, schedule: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {schedule}.")


def _decay_progress(learning_rate: Any, global_step: Any, decay_steps: Any, staircase: bool) -> tuple[Tensor, Tensor]:
    """The learning rate as a tensor and p = global_step / decay_steps in its dtype (floored when staircase)."""
    lr = convert_to_tensor(learning_rate, name="learning_rate")
    if not lr.dtype.is_floating:
        raise TypeError(f"learning_rate must be a float tensor or number, got {lr.dtype.name}")
    p = _as(global_step, lr.dtype) / _as(decay_steps, lr.dtype)
    return lr, (math_ops.floor(p) if staircase else p)


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """learning_rate * decay_rate ^ (global_step / decay_steps); integer division when `staircase`.

    Args:
      learning_rate: initial rate (float tensor or number).
      global_step: integer step tensor or Variable (must not be None).
      decay_steps: positive number of steps per decay_rate factor.
      decay_rate: the factor.
      staircase: decay at discrete intervals.
    Returns:
      A scalar tensor named `name` (default "ExponentialDecay").
    """
    _require_step(global_step, "exponential_decay")
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step]) as scope:
        lr, p = _decay_progress(learning_rate, global_step, decay_steps, staircase)
        return math_ops.multiply(lr, _rounded_pow(_as(decay_rate, lr.dtype), p), name=scope)


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: str | None = None) -> Tensor:
    """learning_rate * exp(-decay_rate * global_step / decay_steps) (floored ratio when `staircase`)."""
    _require_step(global_step, "natural_exp_decay")
    with name_scope(name, "NaturalExpDecay", [learning_rate, global_step]) as scope:
        lr, p = _decay_progress(learning_rate, global_step, decay_steps, staircase)
        exponent = math_ops.exp(math_ops.multiply(math_ops.negative(_as(decay_rate, lr.dtype)), p))
        return math_ops.multiply(lr, exponent, name=scope)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: str | None = None) -> Tensor:
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (floored ratio when `staircase`)."""
    _require_step(global_step, "inverse_time_decay")
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step]) as scope:
        lr, p = _decay_progress(learning_rate, global_step, decay_steps, staircase)
        denom = math_ops.add(_as(1, lr.dtype), math_ops.multiply(_as(decay_rate, lr.dtype), p))
        return math_ops.truediv(lr, denom, name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
                     power: Any = 1.0, cycle: bool = False, name: str | None = None) -> Tensor:
    """(learning_rate - end) * (1 - step / decay_steps) ^ power + end, step capped at decay_steps.

    With `cycle`, decay_steps is instead stretched to the first multiple of itself above the step
    (so the rate jumps back up and decays again).
    """
    _require_step(global_step, "polynomial_decay")
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        step = _as(global_step, dtype)
        steps = _as(decay_steps, dtype)
        end = _as(end_learning_rate, dtype)
        if cycle:
            multiplier = cond(math_ops.equal(step, _as(0, dtype)), lambda: _as(1, dtype),
                              lambda: math_ops.ceil(step / steps))
            steps = math_ops.multiply(steps, multiplier)
        else:
            step = math_ops.minimum(step, steps)
        p = math_ops.truediv(step, steps)
        decayed = math_ops.multiply(lr - end, math_ops.pow(_as(1, dtype) - p, _as(power, dtype)))
        return math_ops.add(decayed, end, name=scope)


def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: Any = 0.0,
                 name: str | None = None) -> Tensor:
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    _require_step(global_step, "cosine_decay")
    with name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype
        steps = _as(decay_steps, dtype)
        fraction = math_ops.minimum(_as(global_step, dtype), steps) / steps
        cosine = 0.5 * (1.0 + math_ops.cos(_as(math.pi, dtype) * fraction))
        alpha_t = _as(alpha, dtype)
        return math_ops.multiply(lr, (1.0 - alpha_t) * cosine + alpha_t, name=scope)


def piecewise_constant(x: Any, boundaries: Sequence[Any], values: Sequence[Any], name: str | None = None) -> Tensor:
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i], then values[-1].

    Args:
      x: scalar step tensor (or number).
      boundaries: increasing numbers or scalar tensors of x's dtype (int32 boundaries widen for an int64 x).
      values: len(boundaries) + 1 numbers or scalar tensors of one dtype.
    """
    if len(boundaries) != len(values) - 1:
        raise ValueError(f"The length of boundaries ({len(boundaries)}) should be 1 less than the length "
                         f"of values ({len(values)}).")
    with name_scope(name, "PiecewiseConstant", [x]):
        x = convert_to_tensor(x)
        bounds = [_boundary(b, x) for b in boundaries]
        vals = [convert_to_tensor(v) for v in values]
        for v in vals[1:]:
            if v.dtype is not vals[0].dtype:
                raise ValueError(f"Values must have elements all with the same dtype ({vals[0].dtype.name} vs "
                                 f"{v.dtype.name}).")
        pairs = [(math_ops.less_equal(x, bounds[0]), lambda: vals[0]),
                 (math_ops.greater(x, bounds[-1]), lambda: vals[-1])]
        for low, high, v in zip(bounds[:-1], bounds[1:], vals[1:-1]):
            inside = math_ops.logical_and(math_ops.greater(x, low), math_ops.less_equal(x, high))
            pairs.append((inside, lambda v=v: v))
        return case(pairs, lambda: vals[0], exclusive=True)


def _boundary(b: Any, x: Tensor) -> Tensor:
    """A boundary in x's dtype: numbers convert, int32 tensors widen to int64; anything else must match."""
    if not isinstance(b, Tensor) and not hasattr(b, "_ref"):
        if x.dtype.is_integer and isinstance(b, float) and not b.is_integer():
            raise ValueError(f"Boundaries ({b}) must have the same dtype as x ({x.dtype.name}).")
        return convert_to_tensor(b, dtype=x.dtype)
    b = convert_to_tensor(b)
    if b.dtype is dtypes.int32 and x.dtype is dtypes.int64:
        return math_ops.cast(b, dtypes.int64)
    if b.dtype is not x.dtype:
        raise ValueError(f"Boundaries ({b.dtype.name}) must have the same dtype as x ({x.dtype.name}).")
    return b
