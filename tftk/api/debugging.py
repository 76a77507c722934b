"""The `tf.debugging` namespace: asserts, Assert, check_numerics."""

from tftk.debug import check_numerics
from tftk.ops.check_ops import (assert_equal, assert_greater, assert_greater_equal, assert_integer,
                                assert_less, assert_less_equal, assert_near, assert_negative,
                                assert_non_negative, assert_non_positive, assert_none_equal,
                                assert_positive, assert_rank, assert_rank_at_least, assert_scalar,
                                assert_type, is_numeric_tensor)
from tftk.ops.logging_ops import Assert

__all__ = ["Assert", "check_numerics", "assert_equal", "assert_greater", "assert_greater_equal",
           "assert_integer", "assert_less", "assert_less_equal", "assert_near", "assert_negative",
           "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive",
           "assert_rank", "assert_rank_at_least", "assert_scalar", "assert_type", "is_numeric_tensor"]

from tftk.ops.sort_ops import is_non_decreasing, is_strictly_increasing  # noqa: E402
from tftk.ops.math_ops import is_finite, is_inf, is_nan  # noqa: E402
from tftk.ops.structure_checks import (assert_all_finite, assert_proper_iterable, assert_rank_in,  # noqa: E402
                                       assert_same_float_dtype, assert_shapes)
