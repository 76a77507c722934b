"""`tf.debugging` asserts (`tf.assert_equal`, `tf.assert_positive`, ...), as TF1's check_ops builds them.

Each returns an `Assert` op checking the condition element-wise when run; when both sides are
known at graph-building time a failing check raises InvalidArgumentError at once (TF1 does the
same). Rank, type and scalar checks are static and raise ValueError/TypeError.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes, errors
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, name_scope
from tftk.ops import math_ops, reduction_ops
from tftk.ops.array_ops import zeros_like
from tftk.ops.constant_value import constant_value
from tftk.ops.control_flow_ops import no_op
from tftk.ops.logging_ops import Assert

__all__ = ["assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_near", "assert_rank", "assert_rank_at_least", "assert_type",
           "assert_integer", "assert_scalar", "is_numeric_tensor"]


def _static_text(item: Any) -> str:
    if isinstance(item, Tensor):
        value = constant_value(item)
        return str(item) if value is None else str(value)
    return str(item)


def _assert(condition: Tensor, static: Any, data: list, summarize: int | None) -> Operation:
    """The Assert op, after failing at once when the condition is known to be false."""
    if static is not None and not bool(np.all(static)):
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))
    return Assert(condition, data, summarize=summarize)


def _binary(symbol: str, test: Callable, numpy_test: Callable, default_name: str):
    def check(x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None,
              name: str | None = None) -> Operation:
        with name_scope(name, default_name, [x, y]):
            x = convert_to_tensor(x, name="x")
            y = convert_to_tensor(y, name="y", dtype=x.dtype)
            if data is None:
                data = [f"Condition x {symbol} y did not hold element-wise:", f"x ({x.name}) = ", x,
                        f"y ({y.name}) = ", y]
            if message is not None:
                data = [message] + list(data)
            condition = reduction_ops.reduce_all(test(x, y))
            xs, ys = constant_value(x), constant_value(y)
            static = None if xs is None or ys is None else numpy_test(xs, ys)
            return _assert(condition, static, list(data), summarize)
    check.__name__ = default_name
    check.__doc__ = f"Assert that x {symbol} y holds element-wise (broadcasting)."
    return check


assert_equal = _binary("==", math_ops.equal, np.equal, "assert_equal")
assert_none_equal = _binary("!=", math_ops.not_equal, np.not_equal, "assert_none_equal")
assert_less = _binary("<", math_ops.less, np.less, "assert_less")
assert_less_equal = _binary("<=", math_ops.less_equal, np.less_equal, "assert_less_equal")
assert_greater = _binary(">", math_ops.greater, np.greater, "assert_greater")
assert_greater_equal = _binary(">=", math_ops.greater_equal, np.greater_equal, "assert_greater_equal")


def _sign(condition: str, binary: Callable, zero_first: bool, default_name: str):
    def check(x: Any, data: Any = None, summarize: int | None = None, message: str | None = None,
              name: str | None = None) -> Operation:
        with name_scope(name, default_name, [x]):
            x = convert_to_tensor(x, name="x")
            if data is None:  # TF lists the message even when it is None (printed as "[]")
                data = [message or "", *_sign_text(condition, x), x]
            zero = zeros_like(x)
            return binary(zero, x, data=data, summarize=summarize) if zero_first else \
                binary(x, zero, data=data, summarize=summarize)
    check.__name__ = default_name
    check.__doc__ = f"Assert that {condition} holds element-wise."
    return check


def _sign_text(condition: str, x: Tensor) -> list[str]:
    text = [f"Condition {condition} did not hold element-wise:", f"x ({x.name}) = "]
    # TF's assert_non_positive lacks a comma between its two strings; its message reads so
    return ["".join(text)] if condition == "x <= 0" else text


assert_positive = _sign("x > 0", assert_less, True, "assert_positive")
assert_negative = _sign("x < 0", assert_less, False, "assert_negative")
assert_non_negative = _sign("x >= 0", assert_less_equal, True, "assert_non_negative")
assert_non_positive = _sign("x <= 0", assert_less_equal, False, "assert_non_positive")


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None, data: Any = None,
                summarize: int | None = None, message: str | None = None, name: str | None = None) -> Operation:
    """Assert |x - y| <= atol + rtol * |y| element-wise (defaults 10 * eps of the dtype)."""
    with name_scope(name, "assert_near", [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = float(np.finfo(x.dtype.as_numpy_dtype).eps)
        rtol = 10 * eps if rtol is None else rtol
        atol = 10 * eps if atol is None else atol
        diff = math_ops.abs(math_ops.subtract(x, y))
        tolerance = math_ops.add(convert_to_tensor(atol, dtype=x.dtype),
                                 math_ops.multiply(convert_to_tensor(rtol, dtype=x.dtype), math_ops.abs(y)))
        if data is None:
            data = [f"x and y not equal to tolerance rtol = {rtol}, atol = {atol}", f"x ({x.name}) = ", x,
                    f"y ({y.name}) = ", y]
        if message is not None:
            data = [message] + list(data)
        xs, ys = constant_value(x), constant_value(y)
        static = None if xs is None or ys is None else np.abs(xs - ys) <= atol + rtol * np.abs(ys)
        return _assert(reduction_ops.reduce_all(math_ops.less_equal(diff, tolerance)), static, list(data), summarize)


def _static_rank_check(x: Tensor, ok: Callable[[int], bool], wording: str, message: str | None) -> None:
    ndims = x.shape.ndims
    if ndims is not None and not ok(ndims):
        raise ValueError(f"{message or ''}Tensor {x.name} must have rank {wording}.  Received rank {ndims}, "
                         f"shape {tuple(x.shape.as_list())}")


def _dynamic_rank_check(x: Tensor, test: Callable, rank: int, message: str | None, summarize: int | None,
                        wording: str) -> Operation:
    from tftk.ops.array_ops import rank as rank_of
    data = ([message] if message else []) + [f"Tensor {x.name} must have rank {wording}.", "Received rank:",
                                              rank_of(x)]
    return Assert(test(rank_of(x), rank), data, summarize=summarize)


def assert_rank(x: Any, rank: int, data: Any = None, summarize: int | None = None, message: str | None = None,
                name: str | None = None) -> Operation:
    """Assert x has rank `rank` (a ValueError at once when the static rank is known and wrong)."""
    with name_scope(name, "assert_rank", [x]):
        x = convert_to_tensor(x)
        _static_rank_check(x, lambda n: n == rank, str(rank), message)
        if x.shape.ndims is not None:
            return no_op(name="static_checks_determined_all_ok")
        return _dynamic_rank_check(x, math_ops.equal, rank, message, summarize, str(rank))


def assert_rank_at_least(x: Any, rank: int, data: Any = None, summarize: int | None = None,
                         message: str | None = None, name: str | None = None) -> Operation:
    """Assert x has rank `rank` or more."""
    with name_scope(name, "assert_rank_at_least", [x]):
        x = convert_to_tensor(x)
        _static_rank_check(x, lambda n: n >= rank, f"at least {rank}", message)
        if x.shape.ndims is not None:
            return no_op(name="static_checks_determined_all_ok")
        return _dynamic_rank_check(x, math_ops.greater_equal, rank, message, summarize, f"at least {rank}")


def assert_type(tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Raise TypeError at once unless `tensor` has dtype `tf_type`."""
    tensor = convert_to_tensor(tensor)
    want = dtypes.as_dtype(tf_type)
    if tensor.dtype is not want:
        raise TypeError(f"{message or ''}{tensor.name} must be of type {want!r}; got {tensor.dtype!r}")
    return no_op(name=name or "statically_determined_correct_type")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Raise TypeError at once unless `x` has an integer dtype."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"{message or ''}Expected \"x\" to be integer type.  Found: {x.name} of dtype "
                        f"{x.dtype.name}")
    return no_op(name=name or "statically_determined_was_integer")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """Return `tensor` if its static shape is scalar, else raise ValueError."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims != 0:
        raise ValueError(f"{message or ''}Expected scalar shape for {tensor.name}, saw shape: {tensor.shape}.")
    return tensor


def is_numeric_tensor(tensor: Any) -> bool:
    return isinstance(tensor, Tensor) and tensor.dtype.is_numeric
