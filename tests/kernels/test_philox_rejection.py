"""TF's rejection samplers and shuffles on Philox without TensorFlow at hand: the compiled generator is
the numpy one, the samplers draw the distributions they name, the shuffle and the shards follow TF's
rules, and the gamma sample gradient is the implicit derivative of the incomplete gamma function.
(Bit-for-bit agreement with TF itself is tests/differential/test_random_samplers_tf.py.)"""

import math

import numpy as np
import pytest

from tftk.kernels import philox, philox_rejection
from tftk.kernels.gamma_sample_grad import gamma_sample_grad
from tftk.ops.special_math_ops import _digamma, _igamma, _igammac

KEY, COUNTER = (0x12345678, 0x9ABCDEF0), (3 << 64) | (2**64 - 300)  # a counter whose low word carries


@pytest.mark.parametrize("offset", [0, 1, 299, 300, 4097])
def test_compiled_blocks_are_the_numpy_blocks(offset):
    low, high = np.uint64(COUNTER & (2**64 - 1)), np.uint64(COUNTER >> 64)
    low, high = (np.uint64(w) for w in philox_rejection._advance(low, high, np.uint64(offset)))
    words = philox_rejection._block(np.uint64(KEY[0]), np.uint64(KEY[1]), low, high)
    assert [int(w) for w in words] == philox.philox_blocks(KEY, COUNTER, np.array([offset]))[0].tolist()


@pytest.mark.parametrize("size", [2, 3, 5, 17, 1000])
def test_fisher_yates_swaps_each_place_with_a_later_one_by_sample_modulo_the_rest(size):
    draws = philox.samples32(KEY, COUNTER, size - 1)
    expected = list(range(size))
    for i, draw in enumerate(draws.tolist()):
        j = i + draw % (size - i)
        expected[i], expected[j] = expected[j], expected[i]
    words = np.uint64(KEY[0]), np.uint64(KEY[1]), np.uint64(COUNTER & (2**64 - 1)), np.uint64(COUNTER >> 64)
    assert philox_rejection.fisher_yates(*words, size).tolist() == expected


@pytest.mark.parametrize("total, cost, threads, expected", [
    (1, 10**9, 2, [(0, 1)]),
    (100, 1000, 2, [(0, 100)]),  # 1e5 cycles: not worth a second thread
    (600, 4981, 2, [(start, start + 75) for start in range(0, 600, 75)]),  # total / (4 * threads) rows
    # 2 rows (5 blocks: 3 rounds for 2 threads) grow to 3 (4 blocks: 2 rounds, no idle thread)
    (10, 10**6, 2, [(0, 3), (3, 6), (6, 9), (9, 10)]),
    # 3 rows (13 blocks) grow to 4 (10 blocks, as busy) and to 5 (8 blocks: 2 full rounds)
    (37, 50000, 4, [(start, min(37, start + 5)) for start in range(0, 37, 5)]),
    (5, 10**7, 1, [(0, 5)]),
])
def test_shards_follow_eigens_parallel_for(total, cost, threads, expected):
    assert philox.tf_shards(total, cost, threads) == expected


@pytest.mark.parametrize("alpha", [0.2, 1.0, 3.5, 60.0])
def test_gamma_draws_have_the_gamma_mean_and_variance(alpha):
    draws = philox_rejection.gamma_samples(np.uint64(KEY[0]), np.uint64(KEY[1]), np.uint64(5), np.uint64(0),
                                           np.array([alpha]), 20000)
    assert abs(draws.mean() - alpha) < 5 * math.sqrt(alpha / 20000)
    assert abs(draws.var() / alpha - 1) < 0.1


@pytest.mark.parametrize("rate, highest", [(0.0, 2**31 - 1), (0.7, 2**31 - 1), (9.5, 2**31 - 1), (10.0, 65504.0),
                                           (250.0, 2**63)])
def test_poisson_draws_have_the_poisson_mean_and_variance(rate, highest):
    draws = philox_rejection.poisson_samples(np.uint64(KEY[0]), np.uint64(KEY[1]), np.uint64(7), np.uint64(0),
                                             np.array([rate]), 20000, float(highest))
    assert np.all(draws == np.floor(draws)) and draws.min() >= 0
    assert abs(draws.mean() - rate) <= 5 * math.sqrt(max(rate, 1e-3) / 20000)
    assert rate == 0 or abs(draws.var() / rate - 1) < 0.1


@pytest.mark.parametrize("alpha, sample", [(0.05, 1e-9), (0.5, 0.3), (0.5, 4.0), (1.0, 2.0), (2.0, 0.5),
                                           (7.0, 9.0), (30.0, 22.0), (300.0, 340.0), (3.0, 40.0)])
def test_gamma_sample_gradient_is_the_implicit_derivative_of_the_cdf(alpha, sample):
    """x(alpha) keeps P(alpha, x) fixed: dx/dalpha = -(dP/dalpha) / (dP/dx), here by central differences."""
    h = 1e-5 * alpha
    if sample < alpha:
        dp_da = (_igamma(alpha + h, sample) - _igamma(alpha - h, sample)) / (2 * h)
    else:  # in the upper tail P is 1 to the last bit: difference Q = 1 - P instead
        dp_da = -(_igammac(alpha + h, sample) - _igammac(alpha - h, sample)) / (2 * h)
    density = math.exp((alpha - 1) * math.log(sample) - sample - math.lgamma(alpha))
    got = gamma_sample_grad(np.array([alpha]), np.array([sample]), np.array([_digamma(alpha)]))[0]
    assert got == pytest.approx(-dp_da / density, rel=1e-6)
