"""First training step of the deep-MNIST tutorial graph (Adam), tftk vs TensorFlow, in fresh processes.

Run: .venv/bin/python bench/bench_first_step.py [--repeats 5] [--tf-python /work/tfvenv/bin/python]
                                                [--cold] [--profile] [--no-build]

The tftk measured is the one the given Python imports (an installed tftk, e.g. a fresh
`pip install .` into a new venv, is timed as installed; without one, this source tree's).

Each measurement is a fresh process (what `tftk infer`, an hpsearch trial or a new program pays):
import, build the graph, run the initializers, then time the first `sess.run(train_step)` on a
batch of 50 and the second one; `to 1st` is the sum, the wait before the first step is done
(after `import numpy`); `its CPU` columns are the process's CPU time (steadier on a busy machine).
Rounds alternate the rows so all see the same machine load; medians are reported with the ratios
of first steps and of `to 1st` against TensorFlow's.

Rows (tftk's warm ones run once first, unmeasured, so Numba's cache and Python's .pyc are warm):
- `tftk`: with the ahead-of-time kernel module (built by `pip install`; when the install has none,
  `python -m tftk.kernels.aot_build` builds it here first, unless --no-build): the step's kernels
  run from it, Numba is never imported;
- `tftk-jit`: without it (TFTK_AOT_KERNELS=0), kernels from Numba's on-disk cache;
- `numba`: Numba's own fixed cost in a fresh process, the first call of a one-loop cached kernel
  (kernels import Numba on first call; it then builds its typing and target contexts), a floor
  under `tftk-jit`'s first kernel call that the `tftk` row does not pay;
- with `--cold`, the same two tftk rows with an empty Numba cache each round (a fresh install:
  with the module built at install time, and without a compiler), first step in wall and CPU time.
  The empty NUMBA_CACHE_DIR also hides the Numba cache a compiler-less `pip install` writes beside
  the package's kernels, so `tftk-jit cold` is the worst case: no module and no cache.
`--profile` runs one tftk first step under cProfile and prints where its time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NUMBA_FLOOR = r'''
import json, sys, time
sys.path.append(sys.argv[2])
import numpy as np
from tftk.kernels.elementwise import relu_grad_in_place  # a one-loop kernel, in the cache (Numba not imported yet)
g, y = np.ones(4, np.float32), np.ones(4, np.float32)
start = time.perf_counter()
relu_grad_in_place(g, y)
print(json.dumps({"first_call": time.perf_counter() - start}))
'''

CHILD = r'''
import json, sys, time
sys.path.append(sys.argv[2])  # for tests.formats; an installed tftk comes first
framework, profile = sys.argv[1], sys.argv[3] == "1"
import numpy as np
start, start_cpu = time.perf_counter(), time.process_time()
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
        cpu = time.process_time()
        sess.run(train_step, feed)
        first, first_cpu = time.perf_counter(), time.process_time() - cpu
        if profile:
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(45)
        sess.run(train_step, feed)
        second = time.perf_counter()
print(json.dumps({"import": imported - start, "build": built - imported, "init": initialised - built,
                  "first_step": first - initialised, "second_step": second - first, "first_cpu": first_cpu,
                  "to_first": first - start, "to_first_cpu": first_cpu + cpu - start_cpu,
                  "numba": "numba" in sys.modules, "tftk": getattr(tf, "__file__", "")}))
'''


# row -> (framework, environment changes, fresh Numba cache per run)
ROWS = {
    "tftk": ("tftk", {}, False),
    "tftk-jit": ("tftk", {"TFTK_AOT_KERNELS": "0"}, False),
    "tf": ("tf", {}, False),
    "tftk cold": ("tftk", {}, True),
    "tftk-jit cold": ("tftk", {"TFTK_AOT_KERNELS": "0"}, True),
    "numba": ("numba", {"TFTK_AOT_KERNELS": "0"}, False),
}


def measure(python: str, row: str, profile: bool = False) -> dict:
    framework, changes, cold = ROWS.get(row, (row, {}, False))
    # .pyc files are written as a user's Python writes them (this shell may say not to)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", **changes)
    source = NUMBA_FLOOR if framework == "numba" else CHILD
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as fresh:
        if cold:
            env["NUMBA_CACHE_DIR"] = fresh
        proc = subprocess.run([python, "-c", source, framework, str(ROOT), "1" if profile else "0"],
                              capture_output=True, text=True, env=env, timeout=900, cwd=fresh)
    if proc.returncode != 0:
        raise RuntimeError(f"{row} child failed:\n{proc.stderr[-3000:]}")
    if profile:
        print(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def kernel_module(build: bool) -> str | None:
    """The ahead-of-time kernel module the measured tftk loads (built first into the user's cache
    folder when missing and `build`); None when there is none."""
    ask = [sys.executable, "-c", "from tftk.kernels import aot; print(aot.location() or '')"]
    found = subprocess.run(ask, capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True).stdout.strip()
    if not found and build:
        print("building the ahead-of-time kernel module (python -m tftk.kernels.aot_build) ...", flush=True)
        subprocess.run([sys.executable, "-m", "tftk.kernels.aot_build"], cwd=tempfile.gettempdir())
        found = subprocess.run(ask, capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True).stdout.strip()
    return found or None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON"),
                        help="a Python with TensorFlow installed (default: $TFTK_TF_PYTHON)")
    parser.add_argument("--cold", action="store_true", help="add the fresh-install rows (empty Numba cache)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one tftk first step")
    parser.add_argument("--no-build", action="store_true", help="do not build the kernel module when it is missing")
    args = parser.parse_args()
    module = kernel_module(build=not args.no_build)
    print(f"{sys.executable}: ahead-of-time kernel module {module or 'absent: the tftk row is left out'}")
    rows = ["tftk", "tftk-jit"] if module else ["tftk-jit"]
    rows += ["tf"] if args.tf_python else []
    rows += [f"{row} cold" for row in rows if row.startswith("tftk")] if args.cold else []
    for row in rows + ["numba"]:
        if row in ("tftk", "tftk-jit", "numba"):
            measure(sys.executable, row)  # warms Numba's cache and the .pyc files; not counted
    if args.profile:
        measure(sys.executable, rows[0], profile=True)
        return
    results: dict[str, list[dict]] = {row: [] for row in rows}
    floor = []
    for _ in range(args.repeats):
        for row in rows:
            results[row].append(measure(args.tf_python if row == "tf" else sys.executable, row))
        floor.append(measure(sys.executable, "numba")["first_call"])
    print(f"tftk imported from {results[rows[0]][0]['tftk']}")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) after; medians of {args.repeats} fresh processes, seconds")
    print(f"{'':15}{'import':>8}{'build':>8}{'init':>8}{'1st step':>10}{'its CPU':>9}{'2nd step':>10}"
          f"{'to 1st':>8}{'its CPU':>9}  Numba imported")
    medians = {}
    for row, runs in results.items():
        medians[row] = m = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k not in ("numba", "tftk")}
        print(f"{row:15}{m['import']:8.3f}{m['build']:8.3f}{m['init']:8.3f}{m['first_step']:10.3f}"
              f"{m['first_cpu']:9.3f}{m['second_step']:10.3f}{m['to_first']:8.3f}{m['to_first_cpu']:9.3f}"
              f"  {runs[0]['numba']}")
    print(f"{'numba':15}{'':24}{statistics.median(floor):10.3f}   (import Numba and call a one-loop cached kernel)")
    if "tf" in medians:
        for row in rows:
            if row != "tf":
                print(f"{row} / TF: first step {medians[row]['first_step'] / medians['tf']['first_step']:.2f}x "
                      f"(CPU {medians[row]['first_cpu'] / medians['tf']['first_cpu']:.2f}x), "
                      f"to 1st {medians[row]['to_first'] / medians['tf']['to_first']:.2f}x "
                      f"(CPU {medians[row]['to_first_cpu'] / medians['tf']['to_first_cpu']:.2f}x)")
    else:
        print("tf: not run (pass --tf-python)")


if __name__ == "__main__":
    main()
