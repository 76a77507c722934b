"""TF math functions that TF itself builds from other ops: log_sigmoid, reduce_variance, reduce_std.

Built the way TF builds them (the same ops under the same name scopes), so values, gradients
and op names follow from the ops they are made of.
"""

from __future__ import annotations

from typing import Any

from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import math_ops, nn_ops, reduction_ops

__all__ = ["log_sigmoid", "reduce_variance", "reduce_std"]


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """log(1 / (1 + exp(-x))), computed as -softplus(-x) so large |x| stays finite."""
    with name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.negative(nn_ops.softplus(math_ops.negative(x)), name=scope)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The variance of the elements across `axis`: mean((x - mean(x))^2)."""
    with name_scope(name, "reduce_variance", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input_tensor")
        means = reduction_ops.reduce_mean(x, axis=axis, keepdims=True)
        squared_deviations = math_ops.square(x - means)
        return reduction_ops.reduce_mean(squared_deviations, axis=axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The standard deviation of the elements across `axis`: sqrt(reduce_variance)."""
    with name_scope(name, "reduce_std", [input_tensor]):
        return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))
