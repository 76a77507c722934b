"""The `tf.math` namespace: the element-wise, reduction and segment ops under their TF1.13+ path."""

from tftk.ops.segment_ops import (segment_max, segment_mean, segment_min, segment_prod, segment_sum,
                                  unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
                                  unsorted_segment_prod, unsorted_segment_sqrt_n, unsorted_segment_sum)
from tftk.ops.special_math_ops import (acosh, asinh, atanh, betainc, digamma, erfc, igamma, igammac,
                                       lbeta, lgamma, polygamma, xdivy, xlogy, zeta)
from tftk.ops.safe_math_ops import (divide_no_nan, log_sigmoid, multiply_no_nan, reciprocal_no_nan,
                                    reduce_euclidean_norm, reduce_std, reduce_variance, xlog1py, zero_fraction)
from tftk.ops.math_ops import scalar_mul
from tftk.ops.nn_ops import in_top_k, log_softmax, softmax, softsign, top_k
from tftk.ops.sequence_ops import invert_permutation
from tftk.ops.math_ops import (abs, acos, add, add_n, asin, atan, atan2, ceil, cos, cosh, divide, equal,  # noqa: A004
                               erf, exp, expm1, floor, floordiv, floormod, greater, greater_equal,
                               is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and,
                               logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply,
                               negative, not_equal, pow, reciprocal, round, rsqrt, sigmoid, sign, sin,
                               sinh, sqrt, square, squared_difference, subtract, tan, tanh, truediv)
from tftk.ops.reduction_ops import (count_nonzero, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
                                    reduce_mean, reduce_min, reduce_prod, reduce_sum)
from tftk.ops.scan_ops import argmax, argmin, bincount, cumprod, cumsum
from tftk.ops.spectral_ops import imag, real
from tftk.ops.nn_ops import in_top_k, l2_normalize, log_softmax, softmax, softplus, softsign, top_k
from tftk.ops.math_ops import scalar_mul
from tftk.ops.sequence_ops import invert_permutation
from tftk.ops.composite_math_ops import log_sigmoid, reduce_std, reduce_variance

from tftk.ops.sort_ops import confusion_matrix, is_non_decreasing, is_strictly_increasing  # noqa: E402
from tftk.api import math_special as special  # noqa: E402
from tftk.ops.bessel_erfinv_ops import (accumulate_n, angle,  # noqa: E402
                                        bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, conj,
                                        cumulative_logsumexp, erfcinv, erfinv, ndtri, nextafter, polyval,
                                        rint)
