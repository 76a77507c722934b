"""First training step of the deep-MNIST tutorial graph (Adam), tftk vs TensorFlow, warm caches.

Run: .venv/bin/python bench/bench_first_step.py [--repeats 5] [--tf-python /work/tfvenv/bin/python] [--profile]

Each measurement is a fresh process (what `tftk infer`, an hpsearch trial or a new program pays):
build the graph, run the initializers, then time the first `sess.run(train_step)` on a batch of 50
and the second one. tftk runs once first, unmeasured, so Numba's cache is warm; rounds alternate
tftk and TF so both see the same machine load; medians are reported with the ratio of first steps.
`--profile` runs one tftk first step under cProfile and prints where its time goes.

The `numba` row is Numba's own fixed cost in a fresh process, measured the same way: the first
call of a one-loop cached kernel (Numba builds its typing and target contexts then), a floor
under tftk's first step that no plan work can remove.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NUMBA_FLOOR = r'''
import json, sys, time
import numpy as np
from tftk.kernels.elementwise import relu_grad_in_place  # a one-loop kernel, already in the cache
g, y = np.ones(4, np.float32), np.ones(4, np.float32)
start = time.perf_counter()
relu_grad_in_place(g, y)
print(json.dumps({"first_call": time.perf_counter() - start}))
'''

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[2])
framework, profile = sys.argv[1], sys.argv[3] == "1"
import numpy as np
start = time.perf_counter()
if framework == "tf":
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
else:
    import tftk as tf
imported = time.perf_counter()
from tests.formats.deep_mnist_model import build
rng = np.random.RandomState(0)
xs = rng.rand(50, 784).astype(np.float32)
ys = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 50)]
with tf.Graph().as_default():
    x, y_, keep_prob, train_step, accuracy = build(tf)
    built = time.perf_counter()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        initialised = time.perf_counter()
        feed = {x: xs, y_: ys, keep_prob: 0.5}
        if profile:
            import cProfile, pstats
            profiler = cProfile.Profile()
            profiler.enable()
        sess.run(train_step, feed)
        first = time.perf_counter()
        if profile:
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(45)
        sess.run(train_step, feed)
        second = time.perf_counter()
print(json.dumps({"import": imported - start, "build": built - imported, "init": initialised - built,
                  "first_step": first - initialised, "second_step": second - first}))
'''


def measure(python: str, framework: str, profile: bool = False) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    source = NUMBA_FLOOR if framework == "numba" else CHILD
    proc = subprocess.run([python, "-c", source, framework, str(ROOT), "1" if profile else "0"],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{framework} child failed:\n{proc.stderr[-3000:]}")
    if profile:
        print(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON"),
                        help="a Python with TensorFlow installed (default: $TFTK_TF_PYTHON)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one tftk first step")
    args = parser.parse_args()
    measure(sys.executable, "tftk")  # warms Numba's cache; not counted
    measure(sys.executable, "numba")
    if args.profile:
        measure(sys.executable, "tftk", profile=True)
        return
    rounds: dict[str, list[dict]] = {"tftk": [], "tf": []}
    floor = []
    for _ in range(args.repeats):
        rounds["tftk"].append(measure(sys.executable, "tftk"))
        floor.append(measure(sys.executable, "numba")["first_call"])
        if args.tf_python:
            rounds["tf"].append(measure(args.tf_python, "tf"))
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.repeats} fresh processes, seconds")
    print(f"{'':8}{'import':>9}{'build':>9}{'init':>9}{'1st step':>10}{'2nd step':>10}")
    medians = {}
    for name, results in rounds.items():
        if not results:
            print(f"{name:8}(not run: pass --tf-python)")
            continue
        medians[name] = {k: statistics.median(r[k] for r in results) for k in results[0]}
        m = medians[name]
        print(f"{name:8}{m['import']:9.3f}{m['build']:9.3f}{m['init']:9.3f}{m['first_step']:10.3f}{m['second_step']:10.3f}")
    print(f"{'numba':8}{'':36}{statistics.median(floor):10.3f}   (first call of a one-loop cached kernel)")
    if len(medians) == 2:
        print(f"first step tftk/TF: {medians['tftk']['first_step'] / medians['tf']['first_step']:.2f}x")


if __name__ == "__main__":
    main()
