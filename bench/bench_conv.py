"""Times tftk's conv2d (+ both gradients) and max pooling on the LeNet and deep-MNIST layers against TF's.

    python bench/bench_conv.py [--reps 20] [--threads 1,2] [--busy 0,1] [--tf-python /path/to/python]

Layers, float32, 5x5 SAME convolutions and 2x2 max pooling: LeNet (batch 64) 28x28x1->16 and
14x14x16->32; deep-MNIST (batch 50) 28x28x1->32 and 14x14x32->64. TensorFlow (tf.compat.v1, its own
Python given by --tf-python) runs the same ops on the same arrays in a worker process, each op fetched
alone by Session.run (which adds ~0.1 ms of session overhead to TF's small pooling ops). Every
repetition runs every case once in each framework (interleaved, so a noisy neighbour hits both alike),
after a warm-up that also compiles the kernels; medians are reported, with tftk/TF ratios, GFLOP/s and
numpy matmul's GFLOP/s as the BLAS reference, in wall time and in process CPU time (on a loaded machine
the 1-thread CPU ratio is the steadier figure). `--busy K` runs K busy-loop processes during the
measurement (a machine shared with other work).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

LAYERS = {  # name: (batch, size, in channels, out channels)
    "lenet1": (64, 28, 1, 16), "lenet2": (64, 14, 16, 32),
    "deep1": (50, 28, 1, 32), "deep2": (50, 14, 32, 64),
}


def _arrays(rng: np.random.Generator) -> dict[str, dict[str, np.ndarray]]:
    out = {}
    for name, (n, size, cin, cout) in LAYERS.items():
        out[name] = {"x": rng.standard_normal((n, size, size, cin)).astype(np.float32),
                     "w": rng.standard_normal((5, 5, cin, cout)).astype(np.float32),
                     "dy": rng.standard_normal((n, size, size, cout)).astype(np.float32),
                     "dpool": rng.standard_normal((n, size // 2, size // 2, cout)).astype(np.float32)}
    return out


def _flops(name: str) -> float:
    n, size, cin, cout = LAYERS[name]
    return 2.0 * n * size * size * 25 * cin * cout


def tftk_cases(arrays: dict) -> list[tuple[str, float, Callable[[], object]]]:
    """(case, floating-point operations, call) for every timed tftk kernel."""
    from tftk.kernels.conv import conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv_output_size
    from tftk.kernels.pool import max_pool, max_pool_grad
    cases = []
    for name, a in arrays.items():
        x, w, dy, dpool = a["x"], a["w"], a["dy"], a["dpool"]
        pad = conv_output_size(x.shape[1], 5, 1, 1, "SAME")[1:]
        pads, one = (pad, pad), (1, 1)
        _, arg = max_pool(dy, (2, 2), (2, 2))
        cases += [
            (f"{name} forward", _flops(name), lambda x=x, w=w, p=pads: conv2d(x, w, one, p, one)),
            (f"{name} backprop_input", _flops(name),
             lambda dy=dy, w=w, s=x.shape, p=pads: conv2d_backprop_input(dy, w, s, one, p, one)),
            (f"{name} backprop_filter", _flops(name),
             lambda x=x, dy=dy, s=w.shape, p=pads: conv2d_backprop_filter(x, dy, s, one, p, one)),
            (f"{name} max_pool", 0.0, lambda a=dy: max_pool(a, (2, 2), (2, 2))),
            (f"{name} max_pool_grad", 0.0, lambda d=dpool, a=arg, s=dy.shape: max_pool_grad(d, a, s)),
        ]
    return cases


def tf_cases(arrays: dict, threads: int) -> list[tuple[str, float, Callable[[], object]]]:
    """The same cases as TF1 graph ops, each run alone by a Session with `threads` intra-op threads."""
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()
    graph = tf.Graph()
    fetches = []
    with graph.as_default():
        for name, a in arrays.items():
            # variables, not constants: Grappler would fold a constant-input op into its result
            x, w, dy, dpool = (tf.Variable(a[k]) for k in ("x", "w", "dy", "dpool"))
            pooled = tf.nn.max_pool(dy, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
            fetches += [
                (f"{name} forward", _flops(name), tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME").op),
                (f"{name} backprop_input", _flops(name),
                 tf.nn.conv2d_backprop_input(a["x"].shape, w, dy, [1, 1, 1, 1], "SAME").op),
                (f"{name} backprop_filter", _flops(name),
                 tf.nn.conv2d_backprop_filter(x, a["w"].shape, dy, [1, 1, 1, 1], "SAME").op),
                (f"{name} max_pool", 0.0, pooled.op),
                (f"{name} max_pool_grad", 0.0, tf.gradients(pooled, dy, grad_ys=dpool)[0].op),
            ]
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=1)
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    return [(case, flops, lambda op=op: sess.run(op)) for case, flops, op in fetches]


def _time_round(cases: list) -> list[list[float]]:
    """[wall seconds, process CPU seconds] of one call of each case."""
    times = []
    for _, _, call in cases:
        start, cpu = time.perf_counter(), time.process_time()
        call()
        times.append([time.perf_counter() - start, time.process_time() - cpu])
    return times


def serve(framework: str, threads: int) -> None:
    """Worker loop: build the cases, warm up, then answer each line with one round's times."""
    arrays = _arrays(np.random.default_rng(0))
    cases = tftk_cases(arrays) if framework == "tftk" else tf_cases(arrays, threads)
    for _ in range(3):
        _time_round(cases)
    print(json.dumps({"cases": [c for c, _, _ in cases], "flops": [f for _, f, _ in cases]}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(_time_round(cases)), flush=True)


def _worker(python: str, framework: str, threads: int):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", OMP_WAIT_POLICY="PASSIVE")
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[key] = str(threads)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.pathsep + \
        env.get("PYTHONPATH", "")
    proc = subprocess.Popen([python, os.path.abspath(__file__), "--serve", framework, str(threads)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        return None, None
    return proc, json.loads(line)


def _ask(proc) -> list[list[float]]:
    proc.stdin.write("\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def _matmul_rate(threads: int) -> float:
    from threadpoolctl import threadpool_limits
    a = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
    with threadpool_limits(threads, user_api="blas"):
        a @ a
        best = min(_timed(lambda: a @ a) for _ in range(5))
    return 2.0 * 1024 ** 3 / best / 1e9


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(threads: int, busy: int, reps: int, tf_python: str | None) -> None:
    workers = {"tftk": _worker(sys.executable, "tftk", threads)}
    if tf_python:
        proc, hello = _worker(tf_python, "tf", threads)
        if proc is None:
            print(f"TensorFlow could not be started with {tf_python}: its column is left out")
        else:
            workers["tf"] = (proc, hello)
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        times: dict[str, list[list[float]]] = {name: [] for name in workers}
        for _ in range(reps):
            for name, (proc, _) in workers.items():
                times[name].append(_ask(proc))
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        for proc, _ in workers.values():
            proc.stdin.close()
            proc.wait()
    cases, flops = workers["tftk"][1]["cases"], workers["tftk"][1]["flops"]
    both = {name: np.median(np.array(t), axis=0) for name, t in times.items()}  # [case, wall/CPU]
    med = {name: m[:, 0] for name, m in both.items()}
    cpu = {name: m[:, 1] for name, m in both.items()}
    print(f"\nthreads={threads}, busy={busy}, load average {os.getloadavg()[0]:.2f} after: medians of {reps} rounds")
    print(f"  {'case':28s} {'tftk ms':>9s} {'TF ms':>9s} {'tftk/TF':>8s} {'GFLOP/s':>8s} {'CPU ms':>8s} {'TF CPU':>8s} "
          f"{'CPU ratio':>9s}")
    nan = np.full(len(cases), np.nan)
    for i, (case, f) in enumerate(zip(cases, flops)):
        tf_ms, tf_cpu = med.get("tf", nan)[i] * 1e3, cpu.get("tf", nan)[i] * 1e3
        rate = f"{f / med['tftk'][i] / 1e9:8.1f}" if f else " " * 8
        print(f"  {case:28s} {med['tftk'][i] * 1e3:9.3f} {tf_ms:9.3f} {med['tftk'][i] * 1e3 / tf_ms:8.2f} {rate} "
              f"{cpu['tftk'][i] * 1e3:8.3f} {tf_cpu:8.3f} {cpu['tftk'][i] * 1e3 / tf_cpu:9.2f}")
    conv = [i for i, f in enumerate(flops) if f]
    total_tftk = sum(med["tftk"][i] for i in range(len(cases)))
    rate = sum(flops[i] for i in conv) / sum(med["tftk"][i] for i in conv) / 1e9
    line = f"  all cases: tftk {total_tftk * 1e3:.2f} ms"
    if "tf" in med:
        total_tf = sum(med["tf"][i] for i in range(len(cases)))
        line += f", TF {total_tf * 1e3:.2f} ms, ratio {total_tftk / total_tf:.2f}"
    print(line + f"; tftk convolutions at {rate:.1f} GFLOP/s, numpy matmul 1024^3 at {_matmul_rate(threads):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--busy", default="0")
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON"),
                        help="a Python with TensorFlow installed (default: $TFTK_TF_PYTHON)")
    args = parser.parse_args()
    for threads in (int(t) for t in args.threads.split(",")):
        for busy in (int(b) for b in args.busy.split(",")):
            measure(threads, busy, args.reps, args.tf_python)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        main()
