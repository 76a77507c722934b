"""The `tf.debugging` namespace: asserts, Assert, check_numerics, the finiteness tests and checks."""

from typing import Any

from tftk.debug import check_numerics
from tftk.framework.ops import Tensor, control_dependencies, convert_to_tensor, name_scope
from tftk.ops import array_ops
from tftk.ops.check_ops import (assert_equal, assert_greater, assert_greater_equal, assert_integer,
                                assert_less, assert_less_equal, assert_near, assert_negative,
                                assert_non_negative, assert_non_positive, assert_none_equal,
                                assert_positive, assert_rank, assert_rank_at_least, assert_scalar,
                                assert_type, is_numeric_tensor)
from tftk.ops.logging_ops import Assert
from tftk.ops.math_ops import is_finite, is_inf, is_nan
from tftk.ops.sort_ops import is_non_decreasing, is_strictly_increasing
from tftk.ops.structure_checks import (assert_proper_iterable, assert_rank_in, assert_same_float_dtype,
                                       assert_shapes)

__all__ = ["Assert", "check_numerics", "assert_equal", "assert_greater", "assert_greater_equal",
           "assert_integer", "assert_less", "assert_less_equal", "assert_near", "assert_negative",
           "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive",
           "assert_rank", "assert_rank_at_least", "assert_scalar", "assert_type", "is_numeric_tensor",
           "is_finite", "is_inf", "is_nan", "is_non_decreasing", "is_strictly_increasing",
           "assert_proper_iterable", "assert_rank_in", "assert_same_float_dtype", "assert_shapes",
           "verify_tensor_all_finite", "assert_all_finite"]


def verify_tensor_all_finite(t: Any = None, msg: str | None = None, name: str | None = None, x: Any = None,
                             message: str | None = None) -> Tensor:
    """`t` after a check that it holds no NaN or Inf (InvalidArgumentError naming `msg` when run)."""
    value = convert_to_tensor(x if t is None else t, name="t")
    text = message if msg is None else msg
    with name_scope(name, "VerifyFinite", [value]):
        checked = check_numerics(value, message=text)
        with control_dependencies([checked]):
            return array_ops.identity(value)


def assert_all_finite(t: Any = None, msg: str | None = None, name: str | None = None, x: Any = None,
                      message: str | None = None) -> Tensor:
    """TF 1.13+'s name of verify_tensor_all_finite."""
    return verify_tensor_all_finite(t, msg, name, x, message)
