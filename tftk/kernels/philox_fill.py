"""TF's Philox distributions as compiled loops: RandomUniform (float32, float64), RandomStandardNormal
and TruncatedNormal (float32), the very values `tftk.kernels.philox`'s numpy path gives.

The numpy path spends ~150 numpy calls per draw on the ten Philox rounds and the conversions, which
dominates small draws (a served ConvNet's dropout mask: ~190 of its ~295 µs) and costs a tenth of a
second on a deep-MNIST initialisation's 3.3M truncated normals. These kernels make one pass over
the output with the generator in registers. Each takes the generator as `state` = [key0, key1,
counter low 64 bits, counter high 64 bits] (uint64) and fills `out` in place:

- uniform: group g (4 floats or 2 doubles) is the block at counter + g; a float is its sample's 23
  low bits times 2**-23 (exactly TF's 1.m - 1), a double 20 + 32 bits times 2**-52;
- normal: Box-Muller on pairs of those uniforms in float32 through libm's logf/sqrtf/sinf/cosf, the
  angle rounded from double (TF's BoxMullerFloat);
- truncated normal: group g reads the blocks from counter + g * 256 on, keeping the normals with
  |x| < 2 in order until its 4 values are there.

The float64 normals stay on numpy: its vectorised float64 sin/cos/log (SIMD on AVX-512 hosts) are
a few ulps away from libm's for some inputs, and the streams must keep the values they had.
"""

from __future__ import annotations

import math

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["uniform_float32", "uniform_float64", "normal_float32", "truncated_float32"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
_MASK = np.uint64(0xFFFFFFFF)
_MANTISSA_F4 = np.uint64(0x7FFFFF)
_MANTISSA_HIGH_F8 = np.uint64(0xFFFFF)
_SHIFT = np.uint64(32)
_ZERO, _ONE = np.uint64(0), np.uint64(1)
_ULP_F4 = np.float32(2.0 ** -23)
_ULP_F8 = 2.0 ** -52
_TINY_F4 = np.float32(1.0e-7)
_MINUS_TWO_F4 = np.float32(-2.0)
_CUT = 2.0  # TruncatedNormal keeps |x| < 2


@njit(error_model="numpy")
def _block(state, offset):
    """The four 32-bit words (as uint64) of Philox4x32-10 at the state's counter + offset."""
    k0, k1 = state[0], state[1]
    lo = state[2] + offset
    hi = state[3] + (_ONE if lo < offset else _ZERO)  # 128-bit carry
    c0, c1, c2, c3 = lo & _MASK, lo >> _SHIFT, hi & _MASK, hi >> _SHIFT
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _SHIFT) ^ c1 ^ k0) & _MASK, p1 & _MASK, ((p0 >> _SHIFT) ^ c3 ^ k1) & _MASK, p0 & _MASK
        k0 = (k0 + _W0) & _MASK
        k1 = (k1 + _W1) & _MASK
    return c0, c1, c2, c3


@njit(error_model="numpy")
def _float(bits):
    """TF's Uint32ToFloat: 23 mantissa bits read as 1.m - 1, i.e. m * 2**-23 (exact)."""
    return np.float32(bits & _MANTISSA_F4) * _ULP_F4


@njit(error_model="numpy")
def _double(high, low):
    """TF's Uint64ToDouble: 20 mantissa bits from `high`, 32 from `low`, i.e. m * 2**-52 (exact)."""
    return float(((high & _MANTISSA_HIGH_F8) << _SHIFT) | low) * _ULP_F8


@njit(error_model="numpy")
def _box_muller_f4(x0, x1):
    """TF's BoxMullerFloat of two samples: (sin, cos) branches, float32 arithmetic through libm."""
    u = _float(x0)
    angle = np.float32(2.0 * math.pi * np.float64(_float(x1)))
    radius = math.sqrt(_MINUS_TWO_F4 * math.log(max(u, _TINY_F4)))
    return math.sin(angle) * radius, math.cos(angle) * radius



@njit(error_model="numpy")
def uniform_float32(state, out):
    """RandomUniform float32: 4 values per block, block g at counter + g."""
    n = out.size
    for g in range((n + 3) // 4):
        x0, x1, x2, x3 = _block(state, np.uint64(g))
        i = 4 * g
        out[i] = _float(x0)
        if i + 1 < n:
            out[i + 1] = _float(x1)
        if i + 2 < n:
            out[i + 2] = _float(x2)
        if i + 3 < n:
            out[i + 3] = _float(x3)


@njit(error_model="numpy")
def uniform_float64(state, out):
    """RandomUniform float64: 2 values per block, block g at counter + g."""
    n = out.size
    for g in range((n + 1) // 2):
        x0, x1, x2, x3 = _block(state, np.uint64(g))
        out[2 * g] = _double(x0, x1)
        if 2 * g + 1 < n:
            out[2 * g + 1] = _double(x2, x3)


@njit(error_model="numpy")
def normal_float32(state, out):
    """RandomStandardNormal float32: two Box-Muller pairs per block, block g at counter + g."""
    n = out.size
    for g in range((n + 3) // 4):
        x0, x1, x2, x3 = _block(state, np.uint64(g))
        a, b = _box_muller_f4(x0, x1)
        c, d = _box_muller_f4(x2, x3)
        i = 4 * g
        out[i] = a
        if i + 1 < n:
            out[i + 1] = b
        if i + 2 < n:
            out[i + 2] = c
        if i + 3 < n:
            out[i + 3] = d



@njit(error_model="numpy")
def truncated_float32(state, out):
    """TruncatedNormal float32 into `out` (a whole number of groups of 4): group g rejects its way
    through the blocks from counter + 256 g on."""
    for g in range(out.size // 4):
        base = np.uint64(g) * np.uint64(256)
        filled = 0
        block = _ZERO
        while filled < 4:
            x0, x1, x2, x3 = _block(state, base + block)
            block += _ONE
            a, b = _box_muller_f4(x0, x1)
            c, d = _box_muller_f4(x2, x3)
            for value in (a, b, c, d):
                if filled < 4 and abs(value) < _CUT:
                    out[4 * g + filled] = value
                    filled += 1
