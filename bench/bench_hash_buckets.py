"""String hashing (Fingerprint64, SipHash-2-4) and the hashed feature cross: Numba kernels vs plain Python.

    python bench/bench_hash_buckets.py [--count 100000] [--repeats 5]

One row per hash: strings per second of the Numba kernel (tftk.kernels.hash_kernels, what
StringToHashBucketFast/Strong and crossed columns run) and of the plain-Python reference it is
tested against (tftk.kernels.hashing, what those ops ran before), best of `--repeats` timings
interleaved so a loaded machine slows both alike, and their ratio. Strings: random bytes of
lengths 1-40 (words, ids, short phrases).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np


def rows(strings: np.ndarray, rows_a: int):
    from tftk.kernels import hash_kernels, hashing
    key = (7, 11)
    batch = len(strings) // 4
    hashed = hash_kernels.fingerprint64_array(strings)
    splits = np.arange(batch + 1, dtype=np.int64) * 2
    columns = [(hashed[:2 * batch], splits), (hashed[2 * batch:4 * batch], splits)]

    def python_cross():
        for b in range(batch):
            for x, y in itertools.product(columns[0][0][2 * b:2 * b + 2], columns[1][0][2 * b:2 * b + 2]):
                hashing.fingerprint_cat64(hashing.fingerprint_cat64(0xDECAFCAFFE, int(x)), int(y)) % 1000

    return {
        "fingerprint64": (lambda: hash_kernels.fingerprint64_array(strings),
                          lambda: [hashing.fingerprint64(s) for s in strings]),
        "siphash24": (lambda: hash_kernels.siphash24_array(key, strings),
                      lambda: [hashing.siphash24(key, s) for s in strings]),
        "cross 2x2/row": (lambda: hash_kernels.cross_rows(columns, batch, 0xDECAFCAFFE, 1000), python_cross),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    strings = np.array([rng.integers(0, 256, n, dtype=np.uint8).tobytes()
                        for n in rng.integers(1, 41, args.count)], dtype=object)
    table = rows(strings, args.count)
    best = {name: [float("inf"), float("inf")] for name in table}
    for kernel, _ in table.values():
        kernel()  # compile / warm
    for _ in range(args.repeats):
        for name, fns in table.items():
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                fn()
                best[name][i] = min(best[name][i], time.perf_counter() - start)
    print(f"{args.count} strings, best of {args.repeats}, load average {os.getloadavg()[0]:.2f}")
    print(f"  {'hash':<16}{'Numba Mstr/s':>14}{'Python Mstr/s':>15}{'ratio':>8}")
    for name, (kernel, python) in best.items():
        print(f"  {name:<16}{args.count / kernel / 1e6:>14.2f}{args.count / python / 1e6:>15.3f}{python / kernel:>8.0f}x")


if __name__ == "__main__":
    main()
