"""The work-sharing pool (`tftk.kernels.work_sharing`): what a shared call costs, and LeNet's convolution
calls on 1 and 2 workers, quiet and beside a busy loop.

Run: .venv/bin/python bench/bench_work_sharing.py [--repeats 21] [--busy 0,1]

Rows: `overhead` is one call of 2 empty pieces (offering the job, waking the helper, waiting for it)
against the same pieces run in a loop on 1 worker; then each LeNet conv call (batch 64, bound as a
plan binds it) on 1 worker (the call whole) and on 2 (cut in pieces), interleaved, with BLAS on one
thread as in a sharing step. Medians of wall and CPU time in microseconds, and the 1/2-worker ratios.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _lenet_calls() -> dict:
    """name -> a no-argument call of LeNet's conv kernels, bound as a plan binds them."""
    import tftk as tf
    from tftk.ops import conv_pool_ops as ops
    rng = np.random.default_rng(0)
    calls = {}
    for layer, (xs, fs) in {"1x16 28x28": ((64, 28, 28, 1), (5, 5, 1, 16)),
                            "16x32 14x14": ((64, 14, 14, 16), (5, 5, 16, 32))}.items():
        graph = tf.Graph()
        with graph.as_default():
            x, w = tf.placeholder(tf.float32, xs), tf.placeholder(tf.float32, fs)
            y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
            dx, dw = tf.gradients(tf.reduce_sum(y * y), [x, w])
        xv, wv = rng.standard_normal(xs, dtype=np.float32), rng.standard_normal(fs, dtype=np.float32)
        dyv = rng.standard_normal(y.shape.as_list(), dtype=np.float32)
        conv = ops._bind_conv2d(y.op, None)
        backprop_input = ops._bind_conv2d_backprop_input(dx.op, None)
        backprop_filter = ops._bind_conv2d_backprop_filter(dw.op, None)
        calls[f"Conv2D {layer}"] = lambda conv=conv, xv=xv, wv=wv: conv(xv, wv)
        if xs[3] > 1:  # LeNet's first layer has no input gradient
            calls[f"Conv2DBackpropInput {layer}"] = \
                lambda f=backprop_input, xs=xs, wv=wv, dyv=dyv: f(np.array(xs), wv, dyv)
        calls[f"Conv2DBackpropFilter {layer}"] = \
            lambda f=backprop_filter, xv=xv, fs=fs, dyv=dyv: f(xv, np.array(fs), dyv)
    return calls


def _timed(call) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def measure(repeats: int) -> None:
    from threadpoolctl import threadpool_limits
    from tftk.kernels import work_sharing
    threadpool_limits(1)
    calls = {"overhead (2 empty pieces)": lambda: work_sharing.run(2, lambda index: None, lambda index, value: None)}
    calls.update(_lenet_calls())
    print(f"{'call':34}{'1 worker':>10}{'2 workers':>11}{'ratio':>7}{'CPU 1':>8}{'CPU 2':>8}{'CPU ratio':>10}"
          f"{'pieces':>8}")
    for name, call in calls.items():
        times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        for workers in (1, 2, 1, 2):  # compile, start the helper
            work_sharing.set_workers(workers)
            call()
        for _ in range(repeats):
            for workers in (1, 2):
                work_sharing.set_workers(workers)
                times[workers].append(_timed(call))
        wall = {w: _median([t[0] for t in v]) * 1e6 for w, v in times.items()}
        cpu = {w: _median([t[1] for t in v]) * 1e6 for w, v in times.items()}
        before = work_sharing.shareable_calls()
        call()
        pieces = "-" if name.startswith("overhead") else ("yes" if work_sharing.shareable_calls() > before else "no")
        print(f"{name:34}{wall[1]:10.1f}{wall[2]:11.1f}{wall[1] / wall[2]:7.2f}{cpu[1]:8.0f}{cpu[2]:8.0f}"
              f"{cpu[1] / cpu[2]:10.2f}{pieces:>8}")
    work_sharing.set_workers(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--busy", default="0,1", help="busy-loop processes beside the measurement, e.g. 0,1")
    args = parser.parse_args()
    for busy in (int(b) for b in args.busy.split(",")):
        loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            time.sleep(0.5 if busy else 0)
            print(f"\nbusy loops {busy}, load average {os.getloadavg()[0]:.2f} (1 min); medians of "
                  f"{args.repeats}, microseconds")
            measure(args.repeats)
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()


if __name__ == "__main__":
    main()
