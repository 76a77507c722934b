"""Numba kernels for TF's string hashing over whole arrays, and the hashed feature cross.

`fingerprint64_array` hashes every string of an array with FarmHash Fingerprint64 (TF's
`Fingerprint64`: StringToHashBucketFast, out-of-vocabulary buckets, crossed columns) in one
compiled loop over the strings laid end to end in one byte buffer; `siphash24_array` does the same
with keyed SipHash-2-4 (StringToHashBucketStrong). `cross_rows` builds TF's
hashed SparseCross output: per row, every combination of one feature per column (the last column
varying fastest), chained with FingerprintCat64 from the hash key.

`tftk.kernels.hashing` holds the same hashes in plain Python, one string at a time; the tests check
these kernels against it bit for bit. All arithmetic is on uint64 (Numba wraps it as C does);
mixing in a signed int would promote to float, hence the explicit `_U` casts.
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.jit import njit

__all__ = ["fingerprint64_array", "siphash24_array", "fingerprint_cat64", "cross_rows", "strings_as_buffer"]

_U = np.uint64
_K0, _K1, _K2 = _U(0xC3A5C85C97CB3127), _U(0xB492B66FBE98F273), _U(0x9AE16A3B2F90404F)
_MUL16 = _U(0x9DDFEA08EB382D69)
_CAT_MUL = _U(0xC6A4A7935BD1E995)


@njit(cache=True)
def _load(buf, i, size):  # pragma: no cover - compiled
    """The little-endian unsigned int of buf[i:i+size]."""
    r = _U(0)
    for k in range(size):
        r |= _U(buf[i + k]) << _U(8 * k)
    return r


@njit(cache=True)
def _u64(buf, i):  # pragma: no cover - compiled
    return _load(buf, i, 8)


@njit(cache=True)
def _u32(buf, i):  # pragma: no cover - compiled
    return _load(buf, i, 4)


@njit(cache=True)
def _rot(v, shift):  # pragma: no cover - compiled
    if shift == 0:
        return v
    return (v >> _U(shift)) | (v << _U(64 - shift))


@njit(cache=True)
def _shift_mix(v):  # pragma: no cover - compiled
    return v ^ (v >> _U(47))


@njit(cache=True)
def _len16(u, v, mul):  # pragma: no cover - compiled
    a = (u ^ v) * mul
    a ^= a >> _U(47)
    b = (v ^ a) * mul
    b ^= b >> _U(47)
    return b * mul


@njit(cache=True)
def _len0to16(buf, s, n):  # pragma: no cover - compiled
    if n >= 8:
        mul = _K2 + _U(n) * _U(2)
        a = _u64(buf, s) + _K2
        b = _u64(buf, s + n - 8)
        c = _rot(b, 37) * mul + a
        d = (_rot(a, 25) + b) * mul
        return _len16(c, d, mul)
    if n >= 4:
        mul = _K2 + _U(n) * _U(2)
        return _len16(_U(n) + (_u32(buf, s) << _U(3)), _u32(buf, s + n - 4), mul)
    if n > 0:
        y = _U(buf[s]) + (_U(buf[s + (n >> 1)]) << _U(8))
        z = _U(n) + (_U(buf[s + n - 1]) << _U(2))
        return _shift_mix((y * _K2) ^ (z * _K0)) * _K2
    return _K2


@njit(cache=True)
def _head(buf, s, n, a_mul):  # pragma: no cover - compiled
    """What the 17-32 and 33-64 byte hashes share: mul, a, y and z (z is the whole 17-32 byte hash)."""
    mul = _K2 + _U(n) * _U(2)
    a = _u64(buf, s) * a_mul
    b = _u64(buf, s + 8)
    c = _u64(buf, s + n - 8) * mul
    d = _u64(buf, s + n - 16) * _K2
    y = _rot(a + b, 43) + _rot(c, 30) + d
    return mul, a, y, _len16(y, a + _rot(b + _K2, 18) + c, mul)


@njit(cache=True)
def _len17to32(buf, s, n):  # pragma: no cover - compiled
    return _head(buf, s, n, _K1)[3]


@njit(cache=True)
def _len33to64(buf, s, n):  # pragma: no cover - compiled
    mul, a, y, z = _head(buf, s, n, _K2)
    e = _u64(buf, s + 16) * mul
    f = _u64(buf, s + 24)
    g = (y + _u64(buf, s + n - 32)) * mul
    h = (z + _u64(buf, s + n - 24)) * mul
    return _len16(_rot(e + f, 43) + _rot(g, 30) + h, e + _rot(f + a, 18) + g, mul)


@njit(cache=True)
def _weak32(buf, i, a, b):  # pragma: no cover - compiled
    w, x, y, z = _u64(buf, i), _u64(buf, i + 8), _u64(buf, i + 16), _u64(buf, i + 24)
    a = a + w
    b = _rot(b + a + z, 21)
    c = a
    a = a + x + y
    b = b + _rot(a, 44)
    return a + z, b + c


@njit(cache=True)
def _fingerprint64(buf, s, n):  # pragma: no cover - compiled
    """farmhashna::Hash64 of buf[s:s+n] (Fingerprint64)."""
    if n <= 16:
        return _len0to16(buf, s, n)
    if n <= 32:
        return _len17to32(buf, s, n)
    if n <= 64:
        return _len33to64(buf, s, n)
    seed = _U(81)
    x = seed
    y = seed * _K1 + _U(113)
    z = _shift_mix(y * _K2 + _U(113)) * _K2
    v0, v1, w0, w1 = _U(0), _U(0), _U(0), _U(0)
    x = x * _K2 + _u64(buf, s)
    end = s + ((n - 1) // 64) * 64
    last64 = s + n - 64
    i = s
    while True:
        x = _rot(x + y + v0 + _u64(buf, i + 8), 37) * _K1
        y = _rot(y + v1 + _u64(buf, i + 48), 42) * _K1
        x ^= w1
        y = y + v0 + _u64(buf, i + 40)
        z = _rot(z + w0, 33) * _K1
        v0, v1 = _weak32(buf, i, v1 * _K1, x + w0)
        w0, w1 = _weak32(buf, i + 32, z + w1, y + _u64(buf, i + 16))
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = _K1 + ((z & _U(0xFF)) << _U(1))
    i = last64
    w0 = w0 + _U((n - 1) & 63)
    v0 = v0 + w0
    w0 = w0 + v0
    x = _rot(x + y + v0 + _u64(buf, i + 8), 37) * mul
    y = _rot(y + v1 + _u64(buf, i + 48), 42) * mul
    x ^= w1 * _U(9)
    y = y + v0 * _U(9) + _u64(buf, i + 40)
    z = _rot(z + w0, 33) * mul
    v0, v1 = _weak32(buf, i, v1 * mul, x + w0)
    w0, w1 = _weak32(buf, i + 32, z + w1, y + _u64(buf, i + 16))
    z, x = x, z
    return _len16(_len16(v0, w0, mul) + _shift_mix(y) * _K0 + z, _len16(v1, w1, mul) + x, mul)


@njit(cache=True)
def _fingerprint_all(buf, offsets):  # pragma: no cover - compiled
    out = np.empty(offsets.shape[0] - 1, np.uint64)
    for k in range(out.shape[0]):
        out[k] = _fingerprint64(buf, offsets[k], offsets[k + 1] - offsets[k])
    return out


def strings_as_buffer(strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strings (bytes or str) laid end to end as uint8, and the offsets where each starts (plus the end)."""
    flat = strings.reshape(-1).tolist()
    try:
        joined = b"".join(flat)  # the common case: all bytes already
    except TypeError:
        flat = [s.encode() if isinstance(s, str) else bytes(s) for s in flat]
        joined = b"".join(flat)
    offsets = np.zeros(len(flat) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, flat), np.int64, len(flat)), out=offsets[1:])
    # 8 spare bytes so the compiled loads never read past the buffer (they do not use them)
    return np.frombuffer(joined + bytes(8), np.uint8), offsets


def fingerprint64_array(strings: np.ndarray) -> np.ndarray:
    """FarmHash Fingerprint64 of every string of `strings` (uint64, same shape)."""
    strings = np.asarray(strings, dtype=object)
    buf, offsets = strings_as_buffer(strings)
    return _fingerprint_all(buf, offsets).reshape(strings.shape)


@njit(cache=True)
def _sipround(v0, v1, v2, v3):  # pragma: no cover - compiled
    v0 += v1
    v1 = _rot(v1, 64 - 13) ^ v0
    v0 = _rot(v0, 32)
    v2 += v3
    v3 = _rot(v3, 64 - 16) ^ v2
    v0 += v3
    v3 = _rot(v3, 64 - 21) ^ v0
    v2 += v1
    v1 = _rot(v1, 64 - 17) ^ v2
    v2 = _rot(v2, 32)
    return v0, v1, v2, v3


@njit(cache=True)
def _siphash_all(buf, offsets, k0, k1):  # pragma: no cover - compiled
    out = np.empty(offsets.shape[0] - 1, np.uint64)
    for k in range(out.shape[0]):
        s, n = offsets[k], offsets[k + 1] - offsets[k]
        v0, v1 = k0 ^ _U(0x736F6D6570736575), k1 ^ _U(0x646F72616E646F6D)
        v2, v3 = k0 ^ _U(0x6C7967656E657261), k1 ^ _U(0x7465646279746573)
        full = n - n % 8
        for i in range(0, full + 8, 8):
            if i == full:  # the last word: the remaining bytes, the length in the top byte
                m = (_U(n & 0xFF) << _U(56)) | _load(buf, s + full, n - full)
            else:
                m = _u64(buf, s + i)
            v3 ^= m
            v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
            v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
            v0 ^= m
        v2 ^= _U(0xFF)
        for _ in range(4):
            v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        out[k] = v0 ^ v1 ^ v2 ^ v3
    return out


def siphash24_array(key: tuple[int, int], strings: np.ndarray) -> np.ndarray:
    """SipHash-2-4 under the 128-bit key (key[0], key[1]) of every string of `strings` (uint64, same shape)."""
    strings = np.asarray(strings, dtype=object)
    buf, offsets = strings_as_buffer(strings)
    return _siphash_all(buf, offsets, np.uint64(key[0]), np.uint64(key[1])).reshape(strings.shape)


@njit(cache=True)
def fingerprint_cat64(fp1, fp2):  # pragma: no cover - compiled
    """TF's FingerprintCat64: two 64-bit fingerprints combined into one (order matters)."""
    result = fp1 ^ _CAT_MUL
    result ^= _shift_mix(fp2 * _CAT_MUL) * _CAT_MUL
    result *= _CAT_MUL
    result = _shift_mix(result) * _CAT_MUL
    return _shift_mix(result)


@njit(cache=True)
def _cross(values, starts, splits, batch, hash_key, modulus):  # pragma: no cover - compiled
    n_cols = starts.shape[0]
    counts = np.ones(batch, np.int64)
    for b in range(batch):
        for c in range(n_cols):
            counts[b] *= splits[c, b + 1] - splits[c, b]
    total = 0
    width = 0
    for b in range(batch):
        total += counts[b]
        width = max(width, counts[b])
    indices = np.empty((total, 2), np.int64)
    out = np.empty(total, np.int64)
    pick = np.zeros(n_cols, np.int64)
    k = 0
    for b in range(batch):
        pick[:] = 0
        for j in range(counts[b]):
            h = hash_key
            for c in range(n_cols):
                h = fingerprint_cat64(h, values[starts[c] + splits[c, b] + pick[c]])
            indices[k, 0] = b
            indices[k, 1] = j
            out[k] = np.int64(h % modulus)
            k += 1
            for c in range(n_cols - 1, -1, -1):  # the last column varies fastest
                pick[c] += 1
                if pick[c] < splits[c, b + 1] - splits[c, b]:
                    break
                pick[c] = 0
    return indices, out, width


def cross_rows(columns: list[tuple[np.ndarray, np.ndarray]], batch: int, hash_key: int,
               num_buckets: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Hashed crosses of `columns`, each (uint64 features, row splits of length batch + 1).

    Returns the [N, 2] indices (row, position in the row), the N ids, and the widest row's count.
    """
    values = np.concatenate([v for v, _ in columns]).astype(np.uint64) if columns else np.zeros(0, np.uint64)
    starts = np.cumsum([0] + [len(v) for v, _ in columns[:-1]]).astype(np.int64)
    splits = np.stack([s for _, s in columns]).astype(np.int64)
    modulus = np.uint64(num_buckets if num_buckets > 0 else 2 ** 63 - 1)
    return _cross(values, starts, splits, int(batch), np.uint64(hash_key), modulus)
