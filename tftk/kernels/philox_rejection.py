"""TF's per-output rejection samplers on Philox4x32-10 (RandomGamma, RandomPoissonV2) and the
sequential steps of RandomShuffle and Multinomial.

A rejection sampler needs an unknown number of random values per output, so TF gives output i
(its index in alpha/rate-major order) its own stretch of the generator: the run's counter moved on
by 256 * i blocks. Inside that stretch the kernels draw whole 128-bit blocks, read as two doubles
(TF's UniformDistribution<double>: 20 + 32 mantissa bits from each pair of words) or as one
Box-Muller pair of normals (NormalDistribution<double>), and use the values of a block from the
last to the first (TF's `remaining--` counters). All arithmetic is in double, through libm's
log/exp/pow/sqrt/lgamma as TF's C++ calls them, so the accept/reject decisions and the values are
TF's bit for bit.

The loops are Numba kernels (compiled on first use, cached on disk): one pass over the outputs,
the generator kept in registers as (key, 128-bit counter) words.
"""

from __future__ import annotations

import math

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["gamma_samples", "poisson_samples", "fisher_yates", "upper_bounds"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
_ONE = np.uint64(1)
_BLOCKS_PER_OUTPUT = np.uint64(256)  # TF's kReservedSamplesPerOutput
_ULP = 2.0 ** -52  # a 52-bit mantissa m read as the double 1.m - 1 is exactly m * 2**-52


@njit(cache=True, error_model="numpy")
def _block(k0, k1, lo, hi):
    """The four 32-bit words (as uint64) of Philox4x32-10 at the 128-bit counter (lo, hi)."""
    c0, c1, c2, c3 = lo & _MASK, lo >> _SHIFT, hi & _MASK, hi >> _SHIFT
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _SHIFT) ^ c1 ^ k0) & _MASK, p1 & _MASK, ((p0 >> _SHIFT) ^ c3 ^ k1) & _MASK, p0 & _MASK
        k0 = (k0 + _W0) & _MASK
        k1 = (k1 + _W1) & _MASK
    return c0, c1, c2, c3


@njit(cache=True, error_model="numpy")
def _advance(lo, hi, count):
    """The counter (lo, hi) moved on by `count` blocks (128-bit wrap-around)."""
    new_lo = lo + count
    return new_lo, hi + (_ONE if new_lo < lo else np.uint64(0))


@njit(cache=True, error_model="numpy")
def _to_double(high, low):
    """TF's Uint64ToDouble: 20 mantissa bits from `high`, 32 from `low`, in [0, 1)."""
    return float(((high & np.uint64(0xFFFFF)) << _SHIFT) | low) * _ULP


@njit(cache=True, error_model="numpy")
def _uniform_pair(k0, k1, lo, hi):
    """One UniformDistribution<double> draw: the two doubles of the block at (lo, hi)."""
    x0, x1, x2, x3 = _block(k0, k1, lo, hi)
    return _to_double(x0, x1), _to_double(x2, x3)


@njit(cache=True, error_model="numpy")
def _normal_pair(k0, k1, lo, hi):
    """One NormalDistribution<double> draw: TF's BoxMullerDouble of the block at (lo, hi)."""
    x0, x1, x2, x3 = _block(k0, k1, lo, hi)
    u1 = max(_to_double(x0, x1), 1.0e-7)
    v1 = 2.0 * math.pi * _to_double(x2, x3)
    radius = math.sqrt(-2.0 * math.log(u1))
    return math.sin(v1) * radius, math.cos(v1) * radius


# An output's generator: counter[0:2] = (low, high) words of its 128-bit counter. A distribution's
# pending values (one row of `pending` each): [0:2] = the last draw's two values, [2] = how many
# are left (read from the last to the first, as TF's `remaining--` counters do).

@njit(cache=True, error_model="numpy")
def _start(lo, hi, output_index, counter, pending):
    """Point `counter` at output `output_index`'s stretch of the stream; empty `pending` (2 rows)."""
    counter[0], counter[1] = _advance(lo, hi, _BLOCKS_PER_OUTPUT * np.uint64(output_index))
    pending[:, 2] = 0.0


@njit(cache=True, error_model="numpy")
def _next(k0, k1, counter, pending, normal):
    """The next value of the uniform (normal=False) or normal distribution whose state is `pending`."""
    if pending[2] == 0.0:
        if normal:
            pending[0], pending[1] = _normal_pair(k0, k1, counter[0], counter[1])
        else:
            pending[0], pending[1] = _uniform_pair(k0, k1, counter[0], counter[1])
        counter[0], counter[1] = _advance(counter[0], counter[1], _ONE)
        pending[2] = 2.0
    pending[2] -= 1.0
    return pending[int(pending[2])]


@njit(cache=True, error_model="numpy")
def gamma_samples(k0, k1, lo, hi, alphas, num_samples):
    """RandomGamma's num_samples x len(alphas) draws (float64, sample-major) from the run's counter.

    Alpha 1 is an exponential, -log1p(-u); otherwise Marsaglia-Tsang's transformation-rejection
    from a normal x and a uniform u (d = alpha - 1/3, boosted by 1 and scaled by u**(1/alpha)
    for alpha < 1), as TF's kernel draws them.
    """
    num_alphas = alphas.size
    out = np.empty(num_samples * num_alphas, np.float64)
    counter = np.empty(2, np.uint64)
    pending = np.empty((2, 3))
    normals, uniforms = pending[0], pending[1]
    for alpha_index in range(num_alphas):
        alpha = alphas[alpha_index]
        below_one = alpha < 1
        d = alpha + (2.0 / 3 if below_one else -1.0 / 3)
        c = 1.0 / 3 / math.sqrt(d)
        for sample_index in range(num_samples):
            _start(lo, hi, alpha_index * num_samples + sample_index, counter, pending)
            if alpha == 1.0:
                result = -math.log1p(-_next(k0, k1, counter, uniforms, False))
            else:
                while True:
                    x = _next(k0, k1, counter, normals, True)
                    v = 1 + c * x
                    if v <= 0:
                        continue
                    v = v * v * v
                    u = _next(k0, k1, counter, uniforms, False)
                    if u < 1 - 0.0331 * (x * x) * (x * x) or math.log(u) < 0.5 * x * x + d * (1 - v + math.log(v)):
                        result = d * v
                        if below_one:
                            result *= _next(k0, k1, counter, uniforms, False) ** (1 / alpha)
                        break
            out[sample_index * num_alphas + alpha_index] = result
    return out


@njit(cache=True, error_model="numpy")
def poisson_samples(k0, k1, lo, hi, rates, num_samples, highest):
    """RandomPoissonV2's num_samples x len(rates) draws (float64 counts, sample-major).

    Rates below 10: Knuth's product of uniforms until it falls to exp(-rate); from 10 on,
    Hormann's transformed rejection (PTRS) from pairs of uniforms. Counts above `highest` (the
    output type's largest value) are redrawn, as in TF.
    """
    num_rates = rates.size
    out = np.empty(num_samples * num_rates, np.float64)
    counter = np.empty(2, np.uint64)
    pending = np.empty((1, 3))
    uniforms = pending[0]
    for rate_index in range(num_rates):
        rate = rates[rate_index]
        exp_neg_rate = math.exp(-rate)
        log_rate = math.log(rate) if rate >= 10 else 0.0
        b = 0.931 + 2.53 * math.sqrt(rate) if rate >= 10 else 0.0
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        for sample_index in range(num_samples):
            _start(lo, hi, rate_index * num_samples + sample_index, counter, pending)
            if rate < 10:
                product = 1.0
                k = 0.0
                while True:
                    product = product * _next(k0, k1, counter, uniforms, False)
                    if product <= exp_neg_rate and k <= highest:
                        break
                    k += 1
            else:
                while True:
                    u = _next(k0, k1, counter, uniforms, False) - 0.5
                    v = _next(k0, k1, counter, uniforms, False)
                    u_shifted = 0.5 - abs(u)
                    k = math.floor((2 * a / u_shifted + b) * u + rate + 0.43)
                    if k > highest:
                        continue
                    if u_shifted >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2):
                        break
                    if k < 0 or (u_shifted < 0.013 and v > u_shifted):
                        continue
                    s = math.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
                    t = -rate + k * log_rate - math.lgamma(k + 1)
                    if s <= t:
                        break
            out[sample_index * num_rates + rate_index] = k
    return out


@njit(cache=True, error_model="numpy")
def fisher_yates(k0, k1, lo, hi, size):
    """TF's RandomShuffle permutation of range(size) (int32, size < 2**31): swap i with
    i + s_i % (size - i), s_i the stream's 32-bit samples in order from the counter (lo, hi)."""
    permutation = np.arange(size, dtype=np.int32)
    words = np.empty(4, np.uint32)
    for i in range(size - 1):
        if i % 4 == 0:
            x0, x1, x2, x3 = _block(k0, k1, lo, hi)
            words[0], words[1], words[2], words[3] = x0, x1, x2, x3
            lo, hi = _advance(lo, hi, _ONE)
        j = i + np.int64(words[i % 4] % np.uint32(size - i))
        permutation[i], permutation[j] = permutation[j], permutation[i]
    return permutation


@njit(cache=True)
def upper_bounds(cdf, units, first_row, out):
    """Multinomial's class choices: out[first_row + r, j] = the first class whose running sum in
    cdf[first_row + r] exceeds units[r, j] * the row's total (std::upper_bound)."""
    classes = cdf.shape[1]
    for r in range(units.shape[0]):
        row = first_row + r
        total = cdf[row, classes - 1]
        for j in range(units.shape[1]):
            target = units[r, j] * total
            low, high = 0, classes
            while low < high:
                middle = (low + high) >> 1
                if cdf[row, middle] <= target:
                    low = middle + 1
                else:
                    high = middle
            out[row, j] = low
