"""d sample / d alpha of a Gamma(alpha, 1) sample: the implicit reparameterisation gradient of RandomGamma.

A sample x = F^-1(u; alpha) moves with alpha so that the CDF P(alpha, x) stays at u, hence
dx/dalpha = -(dP/dalpha) / (dP/dx), with dP/dx = x^(alpha-1) e^-x / Gamma(alpha) the density.
dP/dalpha is the forward-mode derivative of the regularised incomplete gamma function: of its power
series where x < max(1, alpha), else of the continued fraction of Q = 1 - P (the Cephes recurrences,
carried with their derivatives), as TF's RandomGammaGrad computes it in Eigen.
"""

from __future__ import annotations

import math

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["gamma_sample_grad"]

_EPSILON = 2.0 ** -53
_BIG = 4503599627370496.0  # 2**52: rescale the continued fraction's terms past this
_MAX_TERMS = 2000


@njit(cache=True, error_model="numpy")
def _series_der(a, x, log_x, digamma_a):
    """dP/dalpha from P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))."""
    term, term_der = 1.0, 0.0
    total, total_der = 1.0, 0.0
    for n in range(1, _MAX_TERMS):
        ratio = x / (a + n)
        term_der = term_der * ratio - term * ratio / (a + n)
        term *= ratio
        total += term
        total_der += term_der
        if abs(term) <= _EPSILON * abs(total) and abs(term_der) <= _EPSILON * abs(total_der):
            break
    log_prefix = a * log_x - x - math.lgamma(a + 1)
    prefix = math.exp(log_prefix)
    return prefix * (total_der + total * (log_x - (digamma_a + 1.0 / a)))


@njit(cache=True, error_model="numpy")
def _fraction_der(a, x, log_x, digamma_a):
    """dP/dalpha = -dQ/dalpha, Q = x^a e^-x / Gamma(a) times Cephes' continued fraction."""
    y, z, c = 1.0 - a, x + 2.0 - a, 0.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, z * x
    dpkm2, dqkm2, dpkm1, dqkm1 = 0.0, 0.0, 0.0, -x
    ans = pkm1 / qkm1
    ans_der = (dpkm1 - ans * dqkm1) / qkm1
    for _ in range(_MAX_TERMS):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        done = False
        if qk != 0:
            ratio = pk / qk
            ratio_der = (dpk - ratio * dqk) / qk
            done = abs(ans - ratio) <= _EPSILON * abs(ratio) and abs(ans_der - ratio_der) <= _EPSILON * abs(ratio_der)
            ans, ans_der = ratio, ratio_der
        pkm2, qkm2, pkm1, qkm1 = pkm1, qkm1, pk, qk
        dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1, dqkm1, dpk, dqk
        if abs(pk) > _BIG:
            pkm2, qkm2, pkm1, qkm1 = pkm2 / _BIG, qkm2 / _BIG, pkm1 / _BIG, qkm1 / _BIG
            dpkm2, dqkm2, dpkm1, dqkm1 = dpkm2 / _BIG, dqkm2 / _BIG, dpkm1 / _BIG, dqkm1 / _BIG
        if done:
            break
    prefix = math.exp(a * log_x - x - math.lgamma(a))
    return -prefix * (ans_der + ans * (log_x - digamma_a))


@njit(cache=True, error_model="numpy")
def gamma_sample_grad(alphas, samples, digammas):
    """dx/dalpha for each (alpha, sample x, digamma(alpha)) triple (float64, same shape)."""
    out = np.empty(alphas.size, np.float64)
    for i in range(alphas.size):
        a, x = alphas[i], samples[i]
        if x == 0.0 or a == 0.0:
            out[i] = 0.0
            continue
        if not (a > 0.0 and x > 0.0):
            out[i] = math.nan
            continue
        log_x = math.log(x)
        if x <= 1.0 or x < a:
            der_a = _series_der(a, x, log_x, digammas[i])
        else:
            der_a = _fraction_der(a, x, log_x, digammas[i])
        density = math.exp((a - 1.0) * log_x - x - math.lgamma(a))
        out[i] = -der_a / density
    return out
