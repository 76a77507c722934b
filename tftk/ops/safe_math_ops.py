"""Division that returns 0 instead of inf/nan where TF's *_no_nan ops do, and moment reductions:
divide_no_nan, multiply_no_nan, reciprocal_no_nan, xlog1py, log_sigmoid, reduce_variance, reduce_std,
reduce_euclidean_norm, zero_fraction.

All are compositions of element-wise ops, `where` and reductions, so gradients come from those rules;
`where` picks a safe operand before dividing, so no nan reaches a gradient.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.gather_ops import where
from tftk.ops.nn_ops import softplus
from tftk.ops.op_builder import binary_inputs

__all__ = ["divide_no_nan", "multiply_no_nan", "reciprocal_no_nan", "xlog1py", "log_sigmoid", "reduce_variance",
           "reduce_std", "reduce_euclidean_norm", "zero_fraction"]


def _where_zero(mask: Tensor, value: Tensor) -> Tensor:
    return where(mask, array_ops.zeros_like(value), value)


def _safe(denominator: Tensor, mask: Tensor) -> Tensor:
    """`denominator` with ones where `mask`, so dividing by it never makes inf or nan."""
    return where(mask, array_ops.ones_like(denominator), denominator)


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y, and 0 where y == 0."""
    with name_scope(name, "div_no_nan", [x, y]):
        a, b = binary_inputs(x, y, "DivNoNan")
        a, b = a + array_ops.zeros_like(b), b + array_ops.zeros_like(a)  # broadcast both to the result shape
        zero = math_ops.equal(b, 0)
        return _where_zero(zero, math_ops.truediv(a, _safe(b, zero)))


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * y, and 0 where y == 0 (even when x is inf or nan)."""
    with name_scope(name, "multiply_no_nan", [x, y]):
        a, b = binary_inputs(x, y, "MulNoNan")
        a, b = a + array_ops.zeros_like(b), b + array_ops.zeros_like(a)
        return _where_zero(math_ops.equal(b, 0), math_ops.multiply(a, b))


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """1 / x, and 0 where x == 0."""
    with name_scope(name, "reciprocal_no_nan", [x]):
        t = convert_to_tensor(x)
        return divide_no_nan(array_ops.ones_like(t), t)


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * log1p(y), and 0 where x == 0."""
    with name_scope(name, "xlog1py", [x, y]):
        a, b = binary_inputs(x, y, "Xlog1py")
        a, b = a + array_ops.zeros_like(b), b + array_ops.zeros_like(a)
        zero = math_ops.equal(a, 0)
        return _where_zero(zero, math_ops.multiply(a, math_ops.log1p(_where_zero(zero, b))))


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """log(sigmoid(x)) computed stably as -softplus(-x)."""
    with name_scope(name, "LogSigmoid", [x]):
        return math_ops.negative(softplus(math_ops.negative(convert_to_tensor(x))))


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The (biased) variance over `axis`."""
    with name_scope(name, "reduce_variance", [input_tensor]):
        t = convert_to_tensor(input_tensor)
        mean = reduction_ops.reduce_mean(t, axis=axis, keepdims=True)
        return reduction_ops.reduce_mean(math_ops.squared_difference(t, mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The (biased) standard deviation over `axis`."""
    with name_scope(name, "reduce_std", [input_tensor]):
        return math_ops.sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """sqrt(sum(x ** 2)) over `axis`."""
    with name_scope(name, "EuclideanNorm", [input_tensor]):
        t = convert_to_tensor(input_tensor)
        return math_ops.sqrt(reduction_ops.reduce_sum(math_ops.square(t), axis=axis, keepdims=keepdims))


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of entries of `value` equal to zero (float32)."""
    with name_scope(name, "zero_fraction", [value]):
        t = convert_to_tensor(value)
        zeros = math_ops.cast(math_ops.equal(t, array_ops.zeros_like(t)), dtypes.float32)
        return reduction_ops.reduce_mean(zeros)
