"""Element-wise kernels in GB/s against numpy's way of computing them and against a plain copy.

    python bench/bench_elementwise.py [--size 16384,1048576] [--repeats 200]

One row per kernel: bytes moved (inputs read + output written) per second, best of `--repeats`
timings interleaved with the copy and numpy rows, so a loaded machine slows all rows alike. The
copy row is the memory-speed ceiling; sizes: 128x128 (an LSTM gate block, in cache) and 1M elements.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _numpy_sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)  # tftk's op before these kernels


def rows(x, y, g):
    from tftk.kernels import activations as a
    out = np.empty_like(x)
    return {
        "copy": (lambda: np.copyto(out, x), 2),
        "sigmoid  tftk": (lambda: a.sigmoid(x, out), 2),
        "sigmoid  numpy": (lambda: _numpy_sigmoid(x), 2),
        "tanh     tftk": (lambda: a.tanh(x, out), 2),
        "tanh     numpy": (lambda: np.tanh(x, out=out), 2),
        "sigmoid' tftk": (lambda: a.sigmoid_grad(y, g), 3),
        "sigmoid' numpy": (lambda: g * (y * (1 - y)), 3),
        "tanh'    tftk": (lambda: a.tanh_grad(y, g), 3),
        "tanh'    numpy": (lambda: g * (1 - y * y), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="16384,1048576")
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for size in (int(s) for s in args.size.split(",")):
        x = (rng.standard_normal(size) * 3).astype(np.float32)
        y, g = np.tanh(x), rng.standard_normal(size).astype(np.float32)
        table = rows(x, y, g)
        inner = max(1, 2_000_000 // size)
        best = {name: float("inf") for name in table}
        for fn, _ in table.values():
            fn()  # compile / warm
        for _ in range(args.repeats):
            for name, (fn, _) in table.items():
                start = time.perf_counter()
                for _ in range(inner):
                    fn()
                best[name] = min(best[name], (time.perf_counter() - start) / inner)
        print(f"\nfloat32, {size} elements, best of {args.repeats}, load average {os.getloadavg()[0]:.2f}")
        print(f"  {'kernel':<16}{'us':>10}{'GB/s':>8}{'vs copy':>9}")
        for name, (fn, arrays) in table.items():
            gbs = arrays * x.nbytes / best[name] / 1e9
            print(f"  {name:<16}{best[name] * 1e6:>10.2f}{gbs:>8.1f}{best['copy'] / best[name]:>8.2f}x")


if __name__ == "__main__":
    main()
