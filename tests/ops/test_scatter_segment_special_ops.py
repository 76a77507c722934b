"""scatter_nd / tensor_scatter_* / dynamic_partition / dynamic_stitch, segment reductions, variable
scatters and special functions: float64 gradient checks, values and errors."""

import math

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(17)


def arr(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape)


SEG = [0, 0, 2, 3, 3]
USEG = [2, 0, 2, -1, 1]

GRADIENT_CASES = [
    GradientCase("ScatterNd", lambda u: tf.scatter_nd([[1], [3], [1]], u, [4, 2]), [arr(3, 2)]),
    GradientCase("TensorScatterUpdate", lambda t, u: tf.tensor_scatter_update(t, [[0, 1], [2, 0]], u),
                 [arr(3, 2), arr(2)]),
    GradientCase("TensorScatterAdd", lambda t, u: tf.tensor_scatter_add(t, [[1], [1]], u), [arr(3, 2), arr(2, 2)]),
    GradientCase("TensorScatterSub", lambda t, u: tf.tensor_scatter_sub(t, [[0, 0]], u), [arr(3, 2), arr(1)]),
    GradientCase("DynamicPartition", lambda x: tf.reshape(tf.concat(tf.dynamic_partition(x, [1, 0, 1, 2], 3), 0),
                                                          [4, 2]), [arr(4, 2)]),
    # TF's DynamicStitch gradient gathers for every input, overwritten or not; use distinct indices here.
    GradientCase("DynamicStitch", lambda x, y: tf.dynamic_stitch([[0, 2], [1, 3]], [x, y]), [arr(2, 3), arr(2, 3)]),
    GradientCase("SegmentMax", lambda x: tf.segment_max(x, SEG), [arr(5, 2)]),
    GradientCase("SegmentMin", lambda x: tf.segment_min(x, SEG), [arr(5, 2)]),
    GradientCase("SegmentProd", lambda x: tf.segment_prod(x, SEG), [arr(5, 2)]),
    GradientCase("UnsortedSegmentMax", lambda x: tf.unsorted_segment_max(x, USEG, 3), [arr(5, 2)]),
    GradientCase("UnsortedSegmentMin", lambda x: tf.unsorted_segment_min(x, USEG, 3), [arr(5, 2)]),
    GradientCase("UnsortedSegmentProd", lambda x: tf.unsorted_segment_prod(x, USEG, 3), [arr(5, 2)]),
    GradientCase("UnsortedSegmentProd_one_zero",
                 lambda x: tf.unsorted_segment_prod(x * tf.constant([[1.0], [1.0], [0.0], [1.0], [1.0]], tf.float64),
                                                    [0, 0, 0, 1, 1], 2), [arr(5, 2)]),
    GradientCase("unsorted_segment_mean_sqrt_n",
                 lambda x: tf.unsorted_segment_mean(x, USEG, 3) + tf.unsorted_segment_sqrt_n(x, USEG, 3), [arr(5, 2)]),
    GradientCase("sparse_segment_mean", lambda x: tf.reshape(tf.sparse_segment_mean(x, [0, 3, 3], [0, 0, 1]), [2, 2]),
                 [arr(4, 2)]),
    GradientCase("Lgamma", lambda x: tf.lgamma(x), [arr(5, lo=0.2, hi=6.0)]),
    GradientCase("Digamma", lambda x: tf.digamma(x), [arr(5, lo=0.2, hi=6.0)]),
    GradientCase("Polygamma", lambda x: tf.polygamma(tf.constant([1.0, 2.0, 3.0], tf.float64), x),
                 [arr(3, lo=0.5, hi=4.0)]),
    GradientCase("Zeta", lambda q: tf.zeta(tf.constant([2.0, 3.0, 4.5], tf.float64), q), [arr(3, lo=0.5, hi=3.0)]),
    GradientCase("Erfc", lambda x: tf.erfc(x), [arr(5, lo=-2.0, hi=2.0)]),
    GradientCase("Igamma", lambda a, x: tf.igamma(a, x), [arr(4, lo=0.5, hi=4.0), arr(4, lo=0.2, hi=5.0)],
                 rtol=1e-4),
    GradientCase("Igammac", lambda a, x: tf.igammac(a, x), [arr(3, lo=0.5, hi=4.0), arr(3, lo=0.2, hi=5.0)],
                 rtol=1e-4),
    GradientCase("Betainc", lambda x: tf.betainc(tf.constant([0.7, 2.0, 4.0], tf.float64),
                                                  tf.constant([1.5, 3.0, 0.8], tf.float64), x),
                 [arr(3, lo=0.1, hi=0.9)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


SCALAR_REFERENCES = [  # (op, args, value from the definitions / tables)
    (tf.lgamma, [0.5], math.log(math.sqrt(math.pi))),
    (tf.digamma, [1.0], -0.5772156649015329),
    (tf.digamma, [-0.5], 0.03648997397857652),
    (lambda x: tf.polygamma(1.0, x), [1.0], math.pi ** 2 / 6),
    (lambda x: tf.zeta(2.0, x), [1.0], math.pi ** 2 / 6),
    (lambda x: tf.zeta(4.0, x), [1.0], math.pi ** 4 / 90),
    (tf.erfc, [5.0], 1.5374597944280349e-12),
    (lambda x: tf.igamma(1.0, x), [2.0], 1 - math.exp(-2.0)),
    (lambda x: tf.igammac(3.0, x), [30.0], math.exp(-30.0) * (1 + 30 + 450)),
    (lambda x: tf.betainc(2.0, 3.0, x), [0.4], 0.5248),
    (lambda x: tf.betainc(1.0, 1.0, x), [0.3], 0.3),
]


@pytest.mark.parametrize("fn, args, expected", SCALAR_REFERENCES)
def test_special_function_values(fn, args, expected):
    with tf.Graph().as_default(), tf.Session() as s:
        out = s.run(fn(*[tf.constant(a, tf.float64) for a in args]))
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_special_functions_keep_float32():
    with tf.Graph().as_default(), tf.Session() as s:
        assert s.run(tf.lgamma(tf.constant([2.5]))).dtype == np.float32


def test_special_functions_refuse_integers():
    with pytest.raises(TypeError, match="must be float tensors"):
        tf.lgamma(tf.constant([1, 2]))


def test_dynamic_stitch_merges_in_order_and_later_writes_win():
    with tf.Graph().as_default(), tf.Session() as s:
        out = s.run(tf.dynamic_stitch([[0, 2], [2, 1]], [[10, 20], [30, 40]]))
    np.testing.assert_array_equal(out, [10, 40, 30])


@pytest.mark.parametrize("build, message", [
    (lambda: tf.dynamic_stitch([[0, 3]], [[1.0, 2.0]]), "index 1 is missing"),
    (lambda: tf.scatter_nd([[0, 3]], [1.0], [2, 2]), "does not index into shape \\[2, 2\\]"),
    (lambda: tf.dynamic_partition([1.0, 2.0], [0, 5], 2), "partitions\\[1\\] = 5 is not in \\[0, 2\\)"),
])
def test_bad_indices_fail_when_run(build, message):
    with tf.Graph().as_default(), tf.Session() as s, pytest.raises(InvalidArgumentError, match=message):
        s.run(build())


def test_scatter_nd_refuses_mismatched_updates_at_build_time():
    with pytest.raises(ValueError, match="do not fit indices"):
        tf.scatter_nd([[0], [1]], tf.ones([2, 3]), [4, 2])
