"""The Numba hash kernels against the plain-Python reference (tftk.kernels.hashing), bit for bit."""

import itertools

import numpy as np
import pytest

from tftk.kernels import hash_kernels, hashing


def _random_strings(count: int, seed: int) -> list[bytes]:
    """Strings of every length class farmhash distinguishes (0-16, 17-32, 33-64, > 64, multiples of 64)."""
    rng = np.random.default_rng(seed)
    lengths = list(range(0, 70)) + [127, 128, 129, 191, 192, 193, 255, 256, 257, 1000] + \
        rng.integers(0, 300, count).tolist()
    return [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]


FIXED = [b"", b"a", b"hello", b"world", "h\u00e9llo w\u00f6rld \u2603".encode(), b"\x00" * 9, b"\xff" * 65,
         b"0123456789" * 13]


@pytest.mark.parametrize("seed", [0, 1])
def test_fingerprint64_array_matches_reference(seed):
    strings = FIXED + _random_strings(200, seed)
    got = hash_kernels.fingerprint64_array(np.array(strings, dtype=object))
    expected = np.array([hashing.fingerprint64(s) for s in strings], dtype=np.uint64)
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, expected)


def test_fingerprint64_array_keeps_shape_and_takes_str():
    strings = np.array([["hello", "world"], ["a", ""]], dtype=object)
    got = hash_kernels.fingerprint64_array(strings)
    assert got.shape == (2, 2)
    # TF's buckets for these strings: string_to_hash_bucket_fast(["hello", "world", "a"], 1000)
    assert (got.reshape(-1)[:3] % np.uint64(1000)).tolist() == [296, 598, 939]
    assert hash_kernels.fingerprint64_array(np.array([], dtype=object)).shape == (0,)


@pytest.mark.parametrize("key", [(0, 0), (1, 2), (2 ** 62 + 5, 17), (2 ** 64 - 1, 2 ** 63)])
def test_siphash24_array_matches_reference(key):
    strings = FIXED + _random_strings(60, 2)
    got = hash_kernels.siphash24_array(key, np.array(strings, dtype=object))
    np.testing.assert_array_equal(got, np.array([hashing.siphash24(key, s) for s in strings], dtype=np.uint64))


@pytest.mark.parametrize("fp1,fp2", [(0, 0), (0xDECAFCAFFE, 1), (2 ** 64 - 1, 2 ** 63), (12345, 2 ** 64 - 7),
                                     (hashing.fingerprint64(b"x"), hashing.fingerprint64(b"y"))])
def test_fingerprint_cat64_matches_reference(fp1, fp2):
    assert int(hash_kernels.fingerprint_cat64(np.uint64(fp1), np.uint64(fp2))) == hashing.fingerprint_cat64(fp1, fp2)


def _reference_cross(columns, batch, hash_key, num_buckets):
    """Each row's crosses in TF's order (the last column fastest), chained with the reference hash."""
    modulus = num_buckets if num_buckets > 0 else 2 ** 63 - 1
    rows = []
    for b in range(batch):
        features = [[int(v) for v in values[splits[b]:splits[b + 1]]] for values, splits in columns]
        ids = []
        for combo in itertools.product(*features):
            h = hash_key
            for f in combo:
                h = hashing.fingerprint_cat64(h, f)
            ids.append(h % modulus)
        rows.append(ids)
    return rows


CROSS_CASES = [
    # (feature counts per row for each column, num_buckets, hash_key)
    ([[1, 2, 0, 3], [2, 1, 1, 2]], 100, 0xDECAFCAFFE),
    ([[1, 1], [1, 1], [2, 3]], 0, 7),
    ([[0, 0], [1, 1]], 10, 1),
    ([[3], [2], [2], [1]], 2 ** 40, 2 ** 64 - 1),
]


@pytest.mark.parametrize("counts,num_buckets,hash_key", CROSS_CASES)
def test_cross_rows_matches_reference(counts, num_buckets, hash_key):
    rng = np.random.default_rng(3)
    batch = len(counts[0])
    columns = []
    for per_row in counts:
        splits = np.concatenate([[0], np.cumsum(per_row)]).astype(np.int64)
        columns.append((rng.integers(0, 2 ** 63, splits[-1], dtype=np.int64).view(np.uint64), splits))
    indices, values, width = hash_kernels.cross_rows(columns, batch, hash_key, num_buckets)
    expected = _reference_cross(columns, batch, hash_key, num_buckets)
    assert width == max(len(r) for r in expected)
    assert values.tolist() == [v for row in expected for v in row]
    assert indices.tolist() == [[b, k] for b, row in enumerate(expected) for k in range(len(row))]
