"""Training-step throughput: tftk vs PyTorch eager vs TensorFlow (tf.compat.v1) vs hand-written numpy.

    python bench/bench_training.py [--repeats 9] [--threads 1,2] [--busy 0,1] [--tf-python /path/to/python]
                                   [--workloads mlp100,mlp1000,cnn64,deepmnist,lstm] [--cold-cache] [--no-aot]

Each framework runs in its own worker process (so thread settings and imports don't interfere)
with the same initial weights and batches; the coordinator asks the workers for timings in
interleaved rounds and prints medians, ratios against every reference, and the numpy BLAS floor.
`--busy K` starts K busy-loop processes for the measurement (a machine shared with other work: the
step must degrade as TF's does); every (threads, busy) pair is measured and a summary table of
tftk/TF ratios ends the output, in wall time and in process CPU time (on a loaded machine a 1-thread
worker's wall time mostly measures its waits for a core; its CPU time is the steadier figure).
The CNN speed table (issue 15):

    TFTK_TF_PYTHON=/path/to/tf/python python bench/bench_training.py --workloads cnn64,deepmnist \
        --threads 1,2 --no-torch

Workloads: the MLP (784-128-32-10, SGD), LeNet (`cnn64`: conv 5x5 1->16 and 16->32, SGD, batch 64),
the deep-MNIST tutorial's model (`deepmnist`: conv 5x5 1->32 and 32->64 SAME + ReLU + max-pool 2,
fc 3136x1024 + ReLU, dropout 0.5, fc 1024x10, Adam 1e-4, batch 50) and the MNIST-as-sequence LSTM
(`lstm`: 28 steps of 28 inputs, BasicLSTMCell(128) through static_rnn, dense 128x10, Adam 1e-3,
batch 128).
PyTorch and TensorFlow are optional (`pip install tftk[bench]`; TensorFlow needs its own
environment with numpy<2, passed as --tf-python). Missing references are reported and skipped.
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

import numpy as np

WORKLOADS = {
    "mlp100": dict(kind="mlp", batch=100),
    "mlp1000": dict(kind="mlp", batch=1000),
    "cnn64": dict(kind="cnn", batch=64),
    "deepmnist": dict(kind="deep", batch=50),
    "lstm": dict(kind="lstm", batch=128),
}
DEEP_SHAPES = {"deep_c1": (5, 5, 1, 32), "deep_c2": (5, 5, 32, 64), "deep_f1": (7 * 7 * 64, 1024),
               "deep_f2": (1024, 10)}
LSTM_UNITS, LSTM_STEPS = 128, 28
MLP_SIZES = (784, 128, 32, 10)
LR = 0.05
N_BATCHES = 4


# ---- shared data ------------------------------------------------------------------------------

def make_data(path: Path) -> None:
    """Initial weights and batches every framework starts from."""
    rng = np.random.default_rng(0)
    arrays: dict[str, np.ndarray] = {}
    for i, (a, b) in enumerate(zip(MLP_SIZES[:-1], MLP_SIZES[1:])):
        arrays[f"mlp_w{i}"] = (rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32)
        arrays[f"mlp_b{i}"] = np.zeros(b, np.float32)
    for name, shape in {"cnn_c1": (5, 5, 1, 16), "cnn_c2": (5, 5, 16, 32),
                        "cnn_f1": (7 * 7 * 32, 128), "cnn_f2": (128, 10)}.items():
        fan_in = int(np.prod(shape[:-1]))
        arrays[name] = (rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(np.float32)
        arrays[name + "_b"] = np.zeros(shape[-1], np.float32)
    for name, shape in DEEP_SHAPES.items():
        arrays[name] = (rng.standard_normal(shape) * 0.1).clip(-0.2, 0.2).astype(np.float32)
        arrays[name + "_b"] = np.full(shape[-1], 0.1, np.float32)
    arrays["lstm_kernel"] = (rng.standard_normal((28 + LSTM_UNITS, 4 * LSTM_UNITS)) * 0.08).astype(np.float32)
    arrays["lstm_bias"] = np.zeros(4 * LSTM_UNITS, np.float32)
    arrays["lstm_out"] = (rng.standard_normal((LSTM_UNITS, 10)) * 0.1).astype(np.float32)
    arrays["lstm_out_b"] = np.zeros(10, np.float32)
    for batch in (50, 64, 100, 128, 1000):
        arrays[f"x{batch}"] = rng.random((N_BATCHES, batch, 784), dtype=np.float32)
        arrays[f"y{batch}"] = rng.integers(0, 10, (N_BATCHES, batch)).astype(np.int32)
    np.savez(path, **arrays)


# ---- the TF1 program, run unchanged by tftk and by TensorFlow ------------------------------------

def build_tf1_step(tf, data, workload):
    """Return (train_op, loss, x, y, batches) for `workload`, written against the TF1 API."""
    spec = WORKLOADS[workload]
    batch = spec["batch"]
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int32, [None])
    optimizer = tf.train.GradientDescentOptimizer(LR)
    if spec["kind"] == "mlp":
        h = x
        for i in range(3):
            w = tf.Variable(data[f"mlp_w{i}"])
            b = tf.Variable(data[f"mlp_b{i}"])
            h = tf.matmul(h, w) + b
            if i < 2:
                h = tf.nn.relu(h)
        logits = h
    elif spec["kind"] == "cnn":
        logits = _tf1_convnet(tf, data, x, "cnn", 32, 128)
    elif spec["kind"] == "deep":
        logits = _tf1_convnet(tf, data, x, "deep", 64, 1024, keep_prob=0.5)
        optimizer = tf.train.AdamOptimizer(1e-4)
    else:
        logits = _tf1_lstm(tf, data, x)
        optimizer = tf.train.AdamOptimizer(1e-3)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    train_op = optimizer.minimize(loss)
    batches = [(data[f"x{batch}"][i], data[f"y{batch}"][i]) for i in range(N_BATCHES)]
    return train_op, loss, x, y, batches


def _tf1_convnet(tf, data, x, prefix, channels, hidden, keep_prob=None):
    """Two conv 5x5 SAME + ReLU + max-pool 2 layers, a ReLU dense layer, optional dropout, 10 logits."""
    h = tf.reshape(x, [-1, 28, 28, 1])
    for name in (f"{prefix}_c1", f"{prefix}_c2"):
        k = tf.Variable(data[name])
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, k, [1, 1, 1, 1], "SAME"), tf.Variable(data[name + "_b"])))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.reshape(h, [-1, 7 * 7 * channels])
    h = tf.nn.relu(tf.matmul(h, tf.Variable(data[f"{prefix}_f1"])) + tf.Variable(data[f"{prefix}_f1_b"]))
    if keep_prob is not None:
        h = tf.nn.dropout(h, keep_prob)
    return tf.matmul(h, tf.Variable(data[f"{prefix}_f2"])) + tf.Variable(data[f"{prefix}_f2_b"])


def _tf1_lstm(tf, data, x):
    """MNIST as a sequence: 28 rows of 28 pixels through BasicLSTMCell(128) by static_rnn, dense 10.

    TF 2.21 with Keras 3 has no `tf.nn.rnn_cell.BasicLSTMCell` (it needs the tf_keras package), so
    there the cell is written out with the ops BasicLSTMCell builds (concat, matmul, bias_add, split,
    sigmoid/tanh, c = c*sigmoid(f + 1) + sigmoid(i)*tanh(j), h = tanh(c)*sigmoid(o)) in the loop
    static_rnn unrolls: the same graph, op for op.
    """
    steps = tf.unstack(tf.reshape(x, [-1, LSTM_STEPS, 28]), LSTM_STEPS, 1)
    try:
        cell = tf.nn.rnn_cell.BasicLSTMCell(LSTM_UNITS)
    except AttributeError:
        cell = None
    if cell is not None:
        init = {"kernel": data["lstm_kernel"], "bias": data["lstm_bias"]}
        with tf.variable_scope("rnn", custom_getter=lambda getter, name, *a, **k: getter(
                name, *a, **dict(k, initializer=tf.constant_initializer(init[name.split("/")[-1]])))):
            outputs, _ = tf.nn.static_rnn(cell, steps, dtype=tf.float32)
        last = outputs[-1]
    else:
        kernel, bias = tf.Variable(data["lstm_kernel"]), tf.Variable(data["lstm_bias"])
        c = h = tf.zeros([tf.shape(x)[0], LSTM_UNITS])
        for step in steps:
            gates = tf.nn.bias_add(tf.matmul(tf.concat([step, h], 1), kernel), bias)
            i, j, f, o = tf.split(gates, 4, axis=1)
            c = c * tf.sigmoid(f + 1.0) + tf.sigmoid(i) * tf.tanh(j)
            h = tf.tanh(c) * tf.sigmoid(o)
        last = h
    return tf.matmul(last, tf.Variable(data["lstm_out"])) + tf.Variable(data["lstm_out_b"])


# ---- workers ------------------------------------------------------------------------------------

def worker_tf1(module_name: str, data_path: str, workload: str, threads: int):
    if module_name == "tensorflow":
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
    else:
        import tftk as tf
    data = dict(np.load(data_path))
    graph = tf.Graph()
    with graph.as_default():
        train_op, loss, x, y, batches = build_tf1_step(tf, data, workload)
        init = tf.global_variables_initializer()
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    sess = tf.Session(graph=graph, config=config)
    sess.run(init)
    feeds = [{x: bx, y: by} for bx, by in batches]

    def step(i):
        sess.run(train_op, feeds[i % N_BATCHES])

    def final_loss():
        return float(sess.run(loss, feeds[0]))
    return step, final_loss


def worker_torch(data_path: str, workload: str, threads: int):
    import torch
    torch.set_num_threads(threads)
    data = dict(np.load(data_path))
    spec = WORKLOADS[workload]
    batch = spec["batch"]
    t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
    if spec["kind"] == "mlp":
        layers = []
        for i in range(3):
            lin = torch.nn.Linear(*data[f"mlp_w{i}"].shape)
            with torch.no_grad():
                lin.weight.copy_(t(data[f"mlp_w{i}"].T))
                lin.bias.copy_(t(data[f"mlp_b{i}"]))
            layers += [lin] + ([torch.nn.ReLU()] if i < 2 else [])
        model = torch.nn.Sequential(*layers)
        reshape = lambda a: a  # noqa: E731
    elif spec["kind"] == "lstm":
        model = _TorchLSTM(data, t)
        reshape = lambda a: a.reshape(-1, LSTM_STEPS, 28)  # noqa: E731
    else:
        prefix, channels, keep = ("cnn", 32, None) if spec["kind"] == "cnn" else ("deep", 64, 0.5)
        model = _torch_convnet(data, t, prefix, channels, keep)
        reshape = lambda a: a.reshape(-1, 1, 28, 28)  # noqa: E731
    params = model.parameters()
    opt = torch.optim.SGD(params, lr=LR) if spec["kind"] in ("mlp", "cnn") else \
        torch.optim.Adam(params, lr=1e-4 if spec["kind"] == "deep" else 1e-3, eps=1e-8)
    batches = [(reshape(t(data[f"x{batch}"][i])), t(data[f"y{batch}"][i]).long()) for i in range(N_BATCHES)]
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(i):
        bx, by = batches[i % N_BATCHES]
        opt.zero_grad(set_to_none=True)
        loss_fn(model(bx), by).backward()
        opt.step()

    def final_loss():
        with torch.no_grad():
            return float(loss_fn(model.eval()(batches[0][0]), batches[0][1]))
    return step, final_loss


def _torch_convnet(data, t, prefix, channels, keep_prob):
    """bench's convnet in PyTorch with the same weights (NCHW, so f1's rows are permuted to match)."""
    import torch
    c_in, c_mid = data[f"{prefix}_c1"].shape[3], data[f"{prefix}_c2"].shape[3]
    hidden = data[f"{prefix}_f1"].shape[1]
    c1, c2 = torch.nn.Conv2d(1, c_in, 5, padding=2), torch.nn.Conv2d(c_in, c_mid, 5, padding=2)
    f1, f2 = torch.nn.Linear(7 * 7 * channels, hidden), torch.nn.Linear(hidden, 10)
    with torch.no_grad():
        c1.weight.copy_(t(data[f"{prefix}_c1"].transpose(3, 2, 0, 1)))
        c2.weight.copy_(t(data[f"{prefix}_c2"].transpose(3, 2, 0, 1)))
        # our flatten is NHWC; permute f1's rows so both models compute the same function
        f1.weight.copy_(t(data[f"{prefix}_f1"].reshape(7, 7, channels, hidden).transpose(3, 2, 0, 1)
                          .reshape(hidden, -1)))
        f2.weight.copy_(t(data[f"{prefix}_f2"].T))
        for layer, name in ((c1, "c1"), (c2, "c2"), (f1, "f1"), (f2, "f2")):
            layer.bias.copy_(t(data[f"{prefix}_{name}_b"]))
    drop = [torch.nn.Dropout(1 - keep_prob)] if keep_prob is not None else []
    return torch.nn.Sequential(c1, torch.nn.ReLU(), torch.nn.MaxPool2d(2), c2, torch.nn.ReLU(),
                               torch.nn.MaxPool2d(2), torch.nn.Flatten(), f1, torch.nn.ReLU(), *drop, f2)


def _TorchLSTM(data, t):
    """torch.nn.LSTM (cuDNN-style fused cell, gates i, f, g, o) loaded with bench's BasicLSTMCell weights."""
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(28, LSTM_UNITS, batch_first=True)
            self.out = torch.nn.Linear(LSTM_UNITS, 10)
            n = LSTM_UNITS
            k, b = data["lstm_kernel"], data["lstm_bias"].copy()
            i, j, f, o = (slice(g * n, (g + 1) * n) for g in range(4))
            order = np.concatenate([np.arange(4 * n)[s] for s in (i, f, j, o)])
            b[f] += 1.0  # BasicLSTMCell's forget_bias
            with torch.no_grad():
                self.lstm.weight_ih_l0.copy_(t(k[:28, order].T))
                self.lstm.weight_hh_l0.copy_(t(k[28:, order].T))
                self.lstm.bias_ih_l0.copy_(t(b[order]))
                self.lstm.bias_hh_l0.zero_()
                self.out.weight.copy_(t(data["lstm_out"].T))
                self.out.bias.copy_(t(data["lstm_out_b"]))

        def forward(self, x):
            return self.out(self.lstm(x)[0][:, -1])
    return Model()


def worker_numpy(data_path: str, workload: str, threads: int):
    """The MLP step written by hand in numpy: the reference a careful user would write."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(threads)
    data = dict(np.load(data_path))
    batch = WORKLOADS[workload]["batch"]
    ws = [data[f"mlp_w{i}"].copy() for i in range(3)]
    bs = [data[f"mlp_b{i}"].copy() for i in range(3)]
    batches = [(data[f"x{batch}"][i], data[f"y{batch}"][i]) for i in range(N_BATCHES)]

    def forward(bx):
        h1 = np.maximum(bx @ ws[0] + bs[0], 0)
        h2 = np.maximum(h1 @ ws[1] + bs[1], 0)
        return h1, h2, h2 @ ws[2] + bs[2]

    def step(i):
        bx, by = batches[i % N_BATCHES]
        h1, h2, z = forward(bx)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(by)), by] -= 1
        g = p / len(by)
        gw2, gb2 = h2.T @ g, g.sum(0)
        g = (g @ ws[2].T) * (h2 > 0)
        gw1, gb1 = h1.T @ g, g.sum(0)
        g = (g @ ws[1].T) * (h1 > 0)
        gw0, gb0 = bx.T @ g, g.sum(0)
        for w, gw in zip(ws + bs, (gw0, gw1, gw2, gb0, gb1, gb2)):
            w -= LR * gw

    def final_loss():
        bx, by = batches[0]
        z = forward(bx)[2]
        z = z - z.max(axis=1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(len(by)), by]))
    return step, final_loss


def worker_matmul_floor(data_path: str, workload: str, threads: int):
    """Only the 8 matrix products of the MLP step: the BLAS floor no framework can beat."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(threads)
    data = dict(np.load(data_path))
    batch = WORKLOADS[workload]["batch"]
    w = [data[f"mlp_w{i}"] for i in range(3)]
    x = data[f"x{batch}"][0]
    h1, h2 = x @ w[0], (x @ w[0]) @ w[1]
    g2 = np.ones((batch, 10), np.float32)

    def step(i):
        a = x @ w[0]
        b = a @ w[1]
        b @ w[2]
        g1 = g2 @ w[2].T
        g0 = g1 @ w[1].T
        h2.T @ g2
        h1.T @ g1
        x.T @ g0
    return step, lambda: float("nan")


WARM_UP_SECONDS = 3.0


def warm_up(step) -> None:
    """Run `step(i)` for WARM_UP_SECONDS (at least 5 steps) before anything is timed: tftk's thread
    policy spends a plan's first multi-thread steps measuring its ways of running them (two timed
    runs, then each way and one thread a few steps each: `tftk.client.threads`), and a benchmark of
    a few dozen steps would time those. Every framework gets the same warm-up."""
    start, i = time.perf_counter(), 0
    while i < 5 or time.perf_counter() - start < WARM_UP_SECONDS:
        step(i)
        i += 1


def serve(framework: str, data_path: str, workload: str, threads: int) -> None:
    """Worker loop: build once, then answer 'N' with the seconds N steps took."""
    if framework == "tftk":
        step, final_loss = worker_tf1("tftk", data_path, workload, threads)
    elif framework == "tensorflow":
        step, final_loss = worker_tf1("tensorflow", data_path, workload, threads)
    elif framework == "torch":
        step, final_loss = worker_torch(data_path, workload, threads)
    elif framework == "numpy":
        step, final_loss = worker_numpy(data_path, workload, threads)
    else:
        step, final_loss = worker_matmul_floor(data_path, workload, threads)
    built = _status_mb("VmRSS")
    start, cpu = time.perf_counter(), time.process_time()
    step(0)
    first, first_cpu = time.perf_counter() - start, time.process_time() - cpu
    warm_up(step)
    steady = _reset_peak_rss()
    print(json.dumps({"ready": True, "first_step": first, "first_cpu": first_cpu}), flush=True)
    counter = 0
    for line in sys.stdin:
        n = int(line)
        if n == 0:
            print(json.dumps({"loss": final_loss(), "work_mb": max(_status_mb("VmHWM"), steady) - built,
                              "peak_mb": _peak_rss_mb()}), flush=True)
            continue
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            step(counter)
            counter += 1
        print(json.dumps({"seconds": (time.perf_counter() - start) / n,
                          "cpu_seconds": (time.process_time() - cpu) / n}), flush=True)


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak_rss() -> float:
    """Reset the peak-RSS counter (Linux clear_refs) and return the current RSS in MB."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_mb("VmRSS")


def _peak_rss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- coordinator --------------------------------------------------------------------------------

def _env(threads: int) -> dict:
    env = dict(os.environ)
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[key] = str(threads)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start_worker(python: str, framework: str, data_path: Path, workload: str, threads: int,
                 numba_cache: str | None = None, aot: bool = True):
    env = _env(threads)
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache
    if not aot:
        env["TFTK_AOT_KERNELS"] = "0"
    proc = subprocess.Popen([python, __file__, "--serve", framework, str(data_path), workload, str(threads)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        return None, None
    return proc, json.loads(line)


# A pause before each timed request: a framework's threads keep spinning for a while after its steps
# (TF's pool, OpenBLAS's workers), and tftk reads the run queue before a step (`tftk.client.threads`):
# asked right after TF's round, tftk saw TF's spinning threads as another process's work and ran its
# 2-thread rounds on one thread (the 2-layer LSTM at 56 ms instead of 38-40). Interleaved rounds must
# not measure each other.
GAP_SECONDS = 0.4
# A round's length: tftk's first sample of other processes' CPU time in a round spans the other
# framework's round before it (its 2 busy cores), so its first steps of a round may run on one
# thread; at 0.15-0.2 s rounds that was most of the round (the 2-layer LSTM: 48 ms a step where
# the settled 2-thread step takes 35-37).
ROUND_SECONDS = 1.0


def ask(proc, n: int) -> dict:
    if n > 0:
        time.sleep(GAP_SECONDS)
    proc.stdin.write(f"{n}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def available(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def busy_loops(k: int) -> list:
    """k processes that spin on a core each until killed: another job sharing the machine."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", default="2", help="thread counts to measure, e.g. 1,2")
    parser.add_argument("--busy", default="0", help="busy-loop processes during the measurement, e.g. 0,1")
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON", sys.executable),
                        help="a Python with TensorFlow installed (default: $TFTK_TF_PYTHON, else this one)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out even when installed")
    parser.add_argument("--cold-cache", action="store_true",
                        help="start tftk's workers with an empty Numba cache: 'first step' is then a fresh "
                             "install's, not a later process's (kernels loaded); the ahead-of-time kernel "
                             "module is used when built (python -m tftk.kernels.aot_build at install)")
    parser.add_argument("--no-aot", action="store_true",
                        help="tftk's workers leave the ahead-of-time kernel module unused (TFTK_AOT_KERNELS=0): "
                             "with --cold-cache, a fresh install without a C compiler (every kernel compiled)")
    args = parser.parse_args()
    frameworks = {"tftk": sys.executable, "numpy": sys.executable, "floor": sys.executable}
    if not args.no_torch and available(sys.executable, "torch"):
        frameworks["torch"] = sys.executable
    elif not args.no_torch:
        print("PyTorch not installed: skipped (pip install tftk[bench])")
    if available(args.tf_python, "tensorflow"):
        frameworks["tensorflow"] = args.tf_python
    else:
        print("TensorFlow not found: skipped (pass --tf-python with a Python that has it)")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        data_path = Path(tmp) / "data.npz"
        make_data(data_path)
        for threads in (int(t) for t in args.threads.split(",")):
            for busy in (int(b) for b in args.busy.split(",")):
                print(f"\nthreads={threads}, busy={busy}, load average {os.getloadavg()[0]:.2f} before: "
                      f"medians of {args.repeats} interleaved rounds, ms per training step")
                for workload in args.workloads.split(","):
                    med = run_workload(workload, frameworks, data_path, args, threads, busy)
                    summary.append((workload, threads, busy, med))
    print(f"\nsummary (ms per step, wall and CPU; ratio = tftk / TensorFlow), load average "
          f"{os.getloadavg()[0]:.2f} after")
    print(f"  {'workload':<11}{'threads':>8}{'busy':>6}{'tftk':>10}{'TF':>10}{'ratio':>8}"
          f"{'tftk CPU':>10}{'TF CPU':>10}{'CPU ratio':>10}{'torch':>10}")
    nan = (float("nan"), float("nan"))
    for workload, threads, busy, med in summary:
        (ours, ours_cpu), (tf_ms, tf_cpu) = med["tftk"], med.get("tensorflow", nan)
        print(f"  {workload:<11}{threads:>8}{busy:>6}{ours:>10.2f}{tf_ms:>10.2f}{ours / tf_ms:>8.2f}"
              f"{ours_cpu:>10.2f}{tf_cpu:>10.2f}{ours_cpu / tf_cpu:>10.2f}{med.get('torch', nan)[0]:>10.2f}")


def run_workload(workload: str, frameworks: dict, data_path: Path, args, threads: int, busy: int) -> dict:
    """Measure every framework on `workload` in interleaved rounds; print and return the medians (ms)."""
    names = [n for n in frameworks if not (WORKLOADS[workload]["kind"] != "mlp" and n in ("numpy", "floor"))]
    workers, first = {}, {}
    for name in names:
        cold = tempfile.mkdtemp(prefix="numba-cold-") if args.cold_cache and name == "tftk" else None
        proc, hello = start_worker(frameworks[name], name, data_path, workload, threads, cold,
                                   aot=not (args.no_aot and name == "tftk"))
        if proc is not None:
            workers[name], first[name] = proc, (hello["first_step"], hello["first_cpu"])
    spinners = busy_loops(busy)
    try:
        # steps per round: aim for ROUND_SECONDS per worker per round (every worker runs the probe steps,
        # so all end after the same steps and the "loss after" column compares like with like)
        probe = {name: ask(proc, 3)["seconds"] for name, proc in workers.items()}["tftk"]
        n = max(3, int(ROUND_SECONDS / max(probe, 1e-5)))
        times: dict[str, list[float]] = {name: [] for name in workers}
        cpu_times: dict[str, list[float]] = {name: [] for name in workers}
        for _ in range(args.repeats):
            for name, proc in workers.items():
                answer = ask(proc, n)
                times[name].append(answer["seconds"])
                cpu_times[name].append(answer["cpu_seconds"])
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    finals = {name: ask(proc, 0) for name, proc in workers.items()}
    for proc in workers.values():
        proc.stdin.close()
        proc.wait()
    med = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    cpu = {name: statistics.median(t) * 1e3 for name, t in cpu_times.items()}
    print(f"\n{workload}: {n} steps per round")
    print(f"  {'framework':<12}{'ms/step':>10}{'tftk / it':>12}{'CPU ms':>9}{'tftk / it':>11}{'first step':>12}"
          f"{'its CPU':>10}{'loss after':>12}{'work MB':>9}{'peak MB':>9}")
    for name in med:
        ratio = med["tftk"] / med[name]
        loss = "" if np.isnan(finals[name]["loss"]) else f"{finals[name]['loss']:.4f}"
        print(f"  {name:<12}{med[name]:>10.3f}{ratio:>11.2f}x{cpu[name]:>9.2f}{cpu['tftk'] / cpu[name]:>10.2f}x"
              f"{first[name][0] * 1e3:>10.0f}ms{first[name][1] * 1e3:>8.0f}ms{loss:>12}"
              f"{finals[name]['work_mb']:>9.1f}{finals[name]['peak_mb']:>9.0f}")
    print("  CPU ms: process CPU time per step, all its threads (on a loaded machine the 1-thread CPU ratio\n"
          "  is the steadier figure); work MB: RSS growth from the built model to the end (tftk's includes\n"
          "  loading Numba's runtime and compiled kernels, ~120 MB); peak MB: the whole process")
    return {name: (med[name], cpu[name]) for name in med}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
