"""TF's Philox distributions as compiled loops: RandomUniform (float32, float64), RandomStandardNormal
and TruncatedNormal (float32), the very values `tftk.kernels.philox`'s numpy path gives.

The numpy path spends ~150 numpy calls per draw on the ten Philox rounds and the conversions, which
dominates small draws (a served ConvNet's dropout mask: ~190 of its ~295 µs) and costs a tenth of a
second on a deep-MNIST initialisation's 3.3M truncated normals. These kernels generate the blocks
1024 at a time as planes of words (`_words`, which the compiler vectorises) and convert them into
the output. Each takes the generator as `state` = [key0, key1, counter low 64 bits, counter high
64 bits] (uint64) and fills `out` in place:

- uniform: group g (4 floats or 2 doubles) is the block at counter + g; a float is its sample's 23
  low bits times 2**-23 (exactly TF's 1.m - 1), a double 20 + 32 bits times 2**-52;
- normal: Box-Muller on pairs of those uniforms in float32 through libm's logf/sqrtf/sinf/cosf, the
  angle rounded from double (TF's BoxMullerFloat);
- truncated normal: group g reads the blocks from counter + g * 256 on, keeping the normals with
  |x| < 2 in order until its 4 values are there.

The float64 normals are computed in `philox`, its Box-Muller loop through libm's log/sin/cos.
"""

from __future__ import annotations

import math

import numpy as np

from tftk.kernels.jit import njit
from tftk.kernels.philox_rejection import _M0, _M1, _MASK, _SHIFT, _W0, _W1, _advance, _block, _to_double

__all__ = ["uniform_float32", "uniform_float64", "normal_float32", "truncated_float32"]

_MANTISSA_F4 = np.uint64(0x7FFFFF)
_ZERO, _ONE = np.uint64(0), np.uint64(1)
_ULP_F4 = np.float32(2.0 ** -23)
_TINY_F4 = np.float32(1.0e-7)
_MINUS_TWO_F4 = np.float32(-2.0)
_CUT = 2.0  # TruncatedNormal keeps |x| < 2


@njit(error_model="numpy")
def _block_at(state, offset):
    """The four 32-bit words (as uint64) of Philox4x32-10 at the state's counter + offset."""
    lo, hi = _advance(state[2], state[3], offset)
    return _block(state[0], state[1], lo, hi)


@njit(error_model="numpy")
def _float(bits):
    """TF's Uint32ToFloat: 23 mantissa bits read as 1.m - 1, i.e. m * 2**-23 (exact)."""
    return np.float32(bits & _MANTISSA_F4) * _ULP_F4


@njit(error_model="numpy")
def _box_muller_f4(x0, x1):
    """TF's BoxMullerFloat of two samples: (sin, cos) branches, float32 arithmetic through libm."""
    u = _float(x0)
    angle = np.float32(2.0 * math.pi * np.float64(_float(x1)))
    radius = math.sqrt(_MINUS_TWO_F4 * math.log(max(u, _TINY_F4)))
    return math.sin(angle) * radius, math.cos(angle) * radius


@njit(error_model="numpy")
def _words(state, first, stride, count, words):
    """Philox4x32-10 of the blocks at counter + first + i * stride (i < count) into column i of
    `words` (4, m) uint32: one plane per word, so the compiler runs the rounds of many blocks side
    by side (SIMD), ~10x faster than a block at a time. The rounds are written out here, not called
    from `philox_rejection._block`: through a call (even one Numba inlines) the loop stays scalar."""
    key0, key1, low, high = state[0], state[1], state[2], state[3]
    for i in range(count):
        offset = first + np.uint64(i) * stride
        lo = low + offset
        hi = high + np.uint64(lo < offset)  # 128-bit carry
        c0, c1, c2, c3 = lo & _MASK, lo >> _SHIFT, hi & _MASK, hi >> _SHIFT
        k0, k1 = key0, key1
        for _ in range(10):
            p0 = _M0 * c0
            p1 = _M1 * c2
            c0, c1, c2, c3 = ((p1 >> _SHIFT) ^ c1 ^ k0) & _MASK, p1 & _MASK, ((p0 >> _SHIFT) ^ c3 ^ k1) & _MASK, p0 & _MASK
            k0 = (k0 + _W0) & _MASK
            k1 = (k1 + _W1) & _MASK
        words[0, i], words[1, i], words[2, i], words[3, i] = c0, c1, c2, c3


_CHUNK = 1024  # blocks generated at a time: 16 KiB of words, in L1


@njit(error_model="numpy")
def uniform_float32(state, out):
    """RandomUniform float32: 4 values per block, block g at counter + g."""
    n = out.size
    words = np.empty((4, _CHUNK), np.uint32)
    for first in range(0, (n + 3) // 4, _CHUNK):
        count = min(_CHUNK, (n + 3) // 4 - first)
        _words(state, np.uint64(first), _ONE, count, words)
        whole = min(count, (n - 4 * first) // 4)
        for i in range(whole):
            at = 4 * (first + i)
            out[at] = _float(np.uint64(words[0, i]))
            out[at + 1] = _float(np.uint64(words[1, i]))
            out[at + 2] = _float(np.uint64(words[2, i]))
            out[at + 3] = _float(np.uint64(words[3, i]))
        for j in range(4 * (first + whole), n if whole < count else 0):
            out[j] = _float(np.uint64(words[j % 4, whole]))


@njit(error_model="numpy")
def uniform_float64(state, out):
    """RandomUniform float64: 2 values per block, block g at counter + g."""
    n = out.size
    words = np.empty((4, _CHUNK), np.uint32)
    for first in range(0, (n + 1) // 2, _CHUNK):
        count = min(_CHUNK, (n + 1) // 2 - first)
        _words(state, np.uint64(first), _ONE, count, words)
        for j in range(min(2 * count, n - 2 * first)):
            column, pair = j // 2, 2 * (j % 2)
            out[2 * first + j] = _to_double(np.uint64(words[pair, column]), np.uint64(words[pair + 1, column]))


@njit(error_model="numpy")
def normal_float32(state, out):
    """RandomStandardNormal float32: two Box-Muller pairs per block, block g at counter + g."""
    n = out.size
    words = np.empty((4, _CHUNK), np.uint32)
    for first in range(0, (n + 3) // 4, _CHUNK):
        count = min(_CHUNK, (n + 3) // 4 - first)
        _words(state, np.uint64(first), _ONE, count, words)
        for j in range(0, min(4 * count, n - 4 * first), 2):
            column, pair = j // 4, j % 4
            a, b = _box_muller_f4(np.uint64(words[pair, column]), np.uint64(words[pair + 1, column]))
            out[4 * first + j] = a
            if 4 * first + j + 1 < n:
                out[4 * first + j + 1] = b


@njit(error_model="numpy")
def _take_block(values, out, at, filled):
    """Append the values of one Box-Muller block with |x| < 2 to group at `at`; the new fill count."""
    for value in values:
        if filled < 4 and abs(value) < _CUT:
            out[at + filled] = value
            filled += 1
    return filled


@njit(error_model="numpy")
def truncated_float32(state, out):
    """TruncatedNormal float32 into `out` (a whole number of groups of 4): group g rejects its way
    through the blocks from counter + 256 g on. The first block of every group is generated side by
    side; the ~1 in 6 groups that reject a value read their further blocks one at a time."""
    groups = out.size // 4
    words = np.empty((4, _CHUNK), np.uint32)
    stride = np.uint64(256)
    for first in range(0, groups, _CHUNK):
        count = min(_CHUNK, groups - first)
        _words(state, np.uint64(first) * stride, stride, count, words)
        for i in range(count):
            g = first + i
            a, b = _box_muller_f4(np.uint64(words[0, i]), np.uint64(words[1, i]))
            c, d = _box_muller_f4(np.uint64(words[2, i]), np.uint64(words[3, i]))
            filled = _take_block((a, b, c, d), out, 4 * g, np.int64(0))  # not a Literal[int](0): one version
            block = _ONE
            while filled < 4:
                x0, x1, x2, x3 = _block_at(state, np.uint64(g) * stride + block)
                block += _ONE
                a, b = _box_muller_f4(x0, x1)
                c, d = _box_muller_f4(x2, x3)
                filled = _take_block((a, b, c, d), out, 4 * g, filled)
