"""Cost of one kernel call: through the ahead-of-time module (tftk's type test + the compiled
function), through Numba's dispatcher, and the module's function called bare, in one process.
`keyed` is the ahead-of-time path as it was before the generated type test: build the argument
key (`aot.signature_key`), look it up, call.

Run: .venv/bin/python bench/bench_kernel_call.py [--calls 200000]

The kernels are tiny (a 4x4 ReLU gradient, 3 arrays; Adam on 4 elements, 4 arrays and 4 scalars),
so the figures are the per-call overhead a training step pays once per kernel call. Needs the
ahead-of-time module (built by `pip install`, or `python -m tftk.kernels.aot_build`). Best of 7.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _best(call, args: tuple, calls: int) -> float:
    call(*args)
    return min(timeit.repeat(lambda: call(*args), number=calls, repeat=7)) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    args = parser.parse_args()
    from tftk.kernels import aot, elementwise, optim

    if aot.location() is None:
        sys.exit("no ahead-of-time kernel module: build it with python -m tftk.kernels.aot_build")
    g, y, out = (np.ones((4, 4), np.float32) for _ in range(3))
    flat = [np.ones(4, np.float32) for _ in range(4)]
    scalars = tuple(np.float32(s) for s in (1e-3, 0.1, 0.001, 1e-8))
    cases = {"relu_grad (3 arrays)": (elementwise, "_relu_grad", (g, y, out)),
             "adam_dense (4 arrays, 4 f4)": (optim, "_adam_dense", (*flat, *scalars))}
    print(f"load average {os.getloadavg()[0]:.2f} (1 min); per call, microseconds (CPU seconds in brackets)")
    print(f"{'kernel':36}{'tftk (AOT)':>12}{'Numba':>10}{'bare AOT':>10}{'keyed':>10}{'tftk/Numba':>12}"
          f"{'keyed/Numba':>12}")
    for label, (module, name, call_args) in cases.items():
        kernel = getattr(module, name)
        kernel(*call_args)  # the first call puts the type-testing caller in the module
        through_tftk = getattr(module, name)
        versions = aot.exports(kernel.name)
        bare = next(iter(versions.values()))

        def keyed(*a):
            return versions[aot.signature_key(a)](*a)

        cpu = time.process_time()
        tftk_s = _best(through_tftk, call_args, args.calls)
        numba_s = _best(kernel.dispatcher, call_args, args.calls)
        bare_s = _best(bare, call_args, args.calls)
        keyed_s = _best(keyed, call_args, args.calls)
        print(f"{label:36}{tftk_s * 1e6:12.2f}{numba_s * 1e6:10.2f}{bare_s * 1e6:10.2f}{keyed_s * 1e6:10.2f}"
              f"{tftk_s / numba_s:12.2f}{keyed_s / numba_s:12.2f}"
              f"   ({time.process_time() - cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
