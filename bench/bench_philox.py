"""TF's Philox draws: the compiled loops (`tftk.kernels.philox_fill`) against the numpy path.

    python bench/bench_philox.py [--repeats 20]

One row per draw: microseconds per draw through numpy (`compiled=False`) and through the compiled
loop (the same values, bit for bit), best of `--repeats` rounds interleaved so a loaded machine slows
both alike, and their ratio. Draws: a dropout mask of a 50x1024 batch and of one 1x1024 request
(random_uniform float32, drawn even at keep_prob 1 as TF does), 50x1024 random_normal float32, and
the 3.2M TF-exact truncated normals of a deep-MNIST initialisation. The compiled loops run from the
ahead-of-time module when it is built (`python -m tftk.kernels.aot_build`), else through Numba.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from tftk.kernels import philox

DRAWS = {
    "dropout 50x1024 uniform f32": (philox.uniform_float, 50 * 1024),
    "dropout 1x1024 uniform f32": (philox.uniform_float, 1024),
    "random_normal 50x1024 f32": (philox.standard_normal, 50 * 1024),
    "truncated_normal 3.2M f32": (philox.truncated_normal, 3_200_000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    state = philox.PhiloxState(1, 2)
    print(f"best of {args.repeats}, load average {os.getloadavg()[0]:.2f}")
    print(f"  {'draw':<30}{'numpy us':>12}{'compiled us':>13}{'speed-up':>10}")
    for name, (draw, n) in DRAWS.items():
        key, counter = state.reserve(n)
        if draw(key, counter, n, np.float32).tobytes() != draw(key, counter, n, np.float32, compiled=False).tobytes():
            raise SystemExit(f"{name}: the compiled draw differs from the numpy draw")
        repeats = max(2, args.repeats // 5) if n > 1_000_000 else args.repeats
        inner = max(1, 200_000 // n)
        best = {False: float("inf"), True: float("inf")}
        for _ in range(repeats):
            for compiled in (False, True):
                start = time.perf_counter()
                for _ in range(inner):
                    draw(key, counter, n, np.float32, compiled=compiled)
                best[compiled] = min(best[compiled], (time.perf_counter() - start) / inner)
        print(f"  {name:<30}{best[False] * 1e6:>12.1f}{best[True] * 1e6:>13.1f}{best[False] / best[True]:>9.1f}x")


if __name__ == "__main__":
    main()
