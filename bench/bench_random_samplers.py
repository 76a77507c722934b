"""TF's samplers in tftk vs TensorFlow itself: random_shuffle, multinomial, random_gamma, random_poisson.

    TFTK_TF_PYTHON=/work/tfvenv/bin/python python bench/bench_random_samplers.py [--repeats 5]

One row per draw: milliseconds per Session.run in tftk (the same values as TF's, bit for bit) and
in TensorFlow (its CPU kernels, run in the TF venv's interpreter right before), best of
`--repeats` after a warm-up run, and their ratio (tftk / TF). TF runs its kernels on all its
intra-op threads; tftk's rejection loops are one Numba pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

DRAWS = {
    "shuffle 1e6 rows": "tf.random_shuffle(tf.zeros([1000000]), seed=1)",
    "multinomial 1000x100, 100 samples": "tf.multinomial(tf.zeros([1000, 100]), 100, seed=1)",
    "gamma 1e6, alpha 0.5 / 3": "tf.random_gamma([500000], [0.5, 3.0], seed=1)",
    "poisson 1e6, rate 3 / 30": "tf.random_poisson([3.0, 30.0], [500000], seed=1)",
}

TIMER = """
import json, sys, time
def best_times(tf, draws, repeats):
    out = {}
    for name, expr in draws.items():
        with tf.Graph().as_default():
            tf.set_random_seed(3)
            y = eval(expr, {"tf": tf})
            with tf.Session() as s:
                s.run(y)
                best = float("inf")
                for _ in range(repeats):
                    start = time.perf_counter()
                    s.run(y)
                    best = min(best, time.perf_counter() - start)
        out[name] = best
    return out
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tf_python = os.environ.get("TFTK_TF_PYTHON")
    if not tf_python:
        sys.exit("set TFTK_TF_PYTHON to a python with tensorflow-cpu (the reference)")
    script = TIMER + ("import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()\n"
                      f"print(json.dumps(best_times(tf, {DRAWS!r}, {args.repeats})))\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    reference = json.loads(subprocess.run([tf_python, "-c", script], capture_output=True, text=True, env=env,
                                          check=True).stdout.strip().splitlines()[-1])
    import tftk
    scope: dict = {}
    exec(TIMER, scope)
    ours = scope["best_times"](tftk, DRAWS, args.repeats)
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'draw':36s} {'tftk ms':>9s} {'TF ms':>9s} {'ratio':>7s}")
    for name in DRAWS:
        print(f"{name:36s} {ours[name] * 1e3:9.1f} {reference[name] * 1e3:9.1f} {ours[name] / reference[name]:7.2f}")


if __name__ == "__main__":
    main()
