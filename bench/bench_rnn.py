"""RNN training steps, tftk against real TensorFlow (tf.compat.v1) measured in the same run.

    python bench/bench_rnn.py [--tf-python /work/tfvenv/bin/python] [--threads 1,2] [--busy 0,1]
                              [--cells basic_lstm,lstm_peep_proj,gru,multi_lstm] [--modes static,dynamic]
                              [--repeats 7] [--any-batch]

One row per cell x mode (static_rnn / dynamic_rnn) x threads x busy: the median ms of one training
step in each framework and the ratio tftk / TF, and the ratio of the CPU time the two processes
spent per step (all their threads): on a loaded machine the wall ratio measures the CPU share each
got as much as its kernels, the CPU ratio only the work done. The model is the MNIST-as-sequence one (28 steps of
28 inputs, batch 128, 128 units, the last output through a dense 128x10, softmax cross-entropy,
Adam 1e-3); the same TF1 program runs in both. TF 2.21 ships the TF1 cells only as
`tensorflow.python.keras.layers.legacy_rnn.rnn_cell_impl` (its `tf.nn.rnn_cell` needs Keras 2),
which is where the TF worker takes them from. Cells:

- basic_lstm:      BasicLSTMCell(128)
- lstm_peep_proj:  LSTMCell(128, use_peepholes=True, num_proj=64, cell_clip=3.0)
- gru:             GRUCell(128)
- multi_lstm:      MultiRNNCell([BasicLSTMCell(128), BasicLSTMCell(128)])

and a row for the While loop's own cost per iteration, `loop_overhead/dynamic`: a `tf.scan` of 1000
steps whose body is one multiply-add on a 4-vector, trained (forward and back-propagation through
the loop) with SGD, so its ms per step are the microseconds one iteration costs.

Each framework runs in one worker process per thread count (all graphs built once, each in its
own Session); the coordinator asks the workers for timings in interleaved rounds, so load on the
shared machine falls on both alike. `--busy K` adds K busy-loop processes (contention). The
machine's `uptime` is printed before and after.

The batch's size is in the graph (placeholders of [128, ...]) unless `--any-batch` asks for TF1
tutorials' `[None, ...]` placeholders: tftk can then run a static_rnn step's per-example work on two
slices of the batch, one per thread (`tftk.client.rows`), which a graph holding the size (its
reshapes to [128, 28, 28]) does not allow.
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_training import GAP_SECONDS, ROUND_SECONDS, _env, available, busy_loops, warm_up  # noqa: E402

CELLS = ("basic_lstm", "lstm_peep_proj", "gru", "multi_lstm")
MODES = ("static", "dynamic")
STEPS, DEPTH, UNITS, BATCH, PROJ = 28, 28, 128, 128, 64
LOOP_ROW, LOOP_STEPS = "loop_overhead/dynamic", 1000
N_BATCHES = 4


def make_cell(cells, kind: str):
    """One of the benchmarked cells from the module `cells` (tftk's tf.nn.rnn_cell or TF's legacy one)."""
    if kind == "basic_lstm":
        return cells.BasicLSTMCell(UNITS)
    if kind == "lstm_peep_proj":
        return cells.LSTMCell(UNITS, use_peepholes=True, num_proj=PROJ, cell_clip=3.0)
    if kind == "gru":
        return cells.GRUCell(UNITS)
    if kind == "multi_lstm":
        return cells.MultiRNNCell([cells.BasicLSTMCell(UNITS), cells.BasicLSTMCell(UNITS)])
    raise ValueError(f"unknown cell {kind!r}: choose from {', '.join(CELLS)}")


def build_step(tf, cells, kind: str, mode: str, any_batch: bool = False):
    """The TF1 training step of one row: returns (train_op, feeds), feeds a few feed_dicts to cycle.
    `any_batch`: the placeholders leave the batch's size open ([None, ...])."""
    tf.set_random_seed(0)
    rng = np.random.default_rng(0)
    if kind == "loop_overhead":
        x = tf.placeholder(tf.float32, [LOOP_STEPS, 4])
        # |w| < 1 keeps the recurrence bounded (a <= 2) and the loss's minimum keeps it there: with w = 1
        # and the loss sum(out), the first update made w about -100 and every later step computed with
        # inf and NaN (numpy's overflow warnings in tftk's worker)
        w = tf.Variable(tf.fill([4], 0.5))
        out = tf.scan(lambda a, e: a * w + e, x, initializer=tf.zeros([4]))
        train_op = tf.train.GradientDescentOptimizer(1e-6).minimize(tf.reduce_mean(tf.square(out)))
        return train_op, [{x: rng.random((LOOP_STEPS, 4), dtype=np.float32)} for _ in range(N_BATCHES)]
    batch = None if any_batch else BATCH
    x = tf.placeholder(tf.float32, [batch, STEPS * DEPTH])
    y = tf.placeholder(tf.int32, [batch])
    cell = make_cell(cells, kind)
    sequence = tf.reshape(x, [-1 if any_batch else BATCH, STEPS, DEPTH])
    if mode == "static":
        outputs, _ = tf.nn.static_rnn(cell, tf.unstack(sequence, STEPS, 1), dtype=tf.float32)
        last = outputs[-1]
    else:
        outputs, _ = tf.nn.dynamic_rnn(cell, sequence, dtype=tf.float32)
        last = outputs[:, -1]
    size = last.shape.as_list()[1]
    w = tf.Variable(tf.random_normal([size, 10], stddev=0.1, seed=1))
    logits = tf.matmul(last, w) + tf.Variable(tf.zeros([10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    feeds = [{x: rng.random((BATCH, STEPS * DEPTH), dtype=np.float32), y: rng.integers(0, 10, BATCH).astype(np.int32)}
             for _ in range(N_BATCHES)]
    return tf.train.AdamOptimizer(1e-3).minimize(loss), feeds


def worker(framework: str, rows: list[str], threads: int, any_batch: bool) -> None:
    """Build every row's graph and session, then answer 'ROW N' with the seconds one step took."""
    if framework == "tensorflow":
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        tf.get_logger().setLevel("ERROR")
        from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as cells
    else:
        import tftk as tf
        cells = tf.nn.rnn_cell
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    steps = {}
    for row in rows:
        graph = tf.Graph()
        with graph.as_default():
            train_op, feeds = build_step(tf, cells, *row.split("/"), any_batch=any_batch)
            init = tf.global_variables_initializer()
        sess = tf.Session(graph=graph, config=config)
        sess.run(init)
        start = time.perf_counter()
        sess.run(train_op, feeds[0])
        first = time.perf_counter() - start
        warm_up(lambda i: sess.run(train_op, feeds[i % N_BATCHES]))
        steps[row] = (sess, train_op, feeds, first)
    print(json.dumps({"ready": True, "first": {row: s[3] for row, s in steps.items()}}), flush=True)
    for line in sys.stdin:
        row, n = line.split()
        sess, train_op, feeds, _ = steps[row]
        start, cpu = time.perf_counter(), time.process_time()
        for i in range(int(n)):
            sess.run(train_op, feeds[i % N_BATCHES])
        print(json.dumps({"seconds": (time.perf_counter() - start) / int(n),
                          "cpu": (time.process_time() - cpu) / int(n)}), flush=True)


def start(python: str, framework: str, rows: list[str], threads: int, any_batch: bool):
    proc = subprocess.Popen([python, __file__, "--serve", framework, ",".join(rows), str(threads), str(int(any_batch))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_env(threads))
    hello = proc.stdout.readline()
    if not hello:
        raise SystemExit(f"the {framework} worker failed to start (its error is above)")
    return proc


def ask_row(proc, row: str, n: int) -> dict:
    """Time n steps of `row` in a worker: {"seconds": wall per step, "cpu": process CPU per step}; after
    bench_training's pause (GAP_SECONDS: the other framework's threads stop spinning)."""
    time.sleep(GAP_SECONDS)
    proc.stdin.write(f"{row} {n}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON", "/work/tfvenv/bin/python"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--busy", default="0,1", help="busy-loop processes during the measurement")
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--no-loop", action="store_true", help="leave out the loop_overhead row")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=ROUND_SECONDS, help="time per worker per round")
    parser.add_argument("--any-batch", action="store_true", help="[None, ...] placeholders (module docstring)")
    args = parser.parse_args()
    if not available(args.tf_python, "tensorflow"):
        raise SystemExit(f"no TensorFlow at {args.tf_python}: pass --tf-python")
    rows = [f"{cell}/{mode}" for cell in args.cells.split(",") for mode in args.modes.split(",")]
    rows += [] if args.no_loop else [LOOP_ROW]
    print(f"uptime before: {uptime()}")
    table = []
    for threads in (int(t) for t in args.threads.split(",")):
        workers = {"tftk": start(sys.executable, "tftk", rows, threads, args.any_batch),
                   "tensorflow": start(args.tf_python, "tensorflow", rows, threads, args.any_batch)}
        try:
            for busy in (int(b) for b in args.busy.split(",")):
                spinners = busy_loops(busy)
                try:
                    for row in rows:
                        probe = max(ask_row(p, row, 2)["seconds"] for p in workers.values())
                        n = max(2, int(args.seconds / probe))
                        times = {name: [] for name in workers}
                        for _ in range(args.repeats):
                            for name, proc in workers.items():
                                times[name].append(ask_row(proc, row, n))
                        med = {name: statistics.median(t["seconds"] for t in ts) * 1e3 for name, ts in times.items()}
                        cpu = {name: statistics.median(t["cpu"] for t in ts) for name, ts in times.items()}
                        table.append((row, threads, busy, med["tftk"], med["tensorflow"], cpu["tftk"] / cpu["tensorflow"]))
                        print(f"  {row:<24}{threads:>3} thr {busy:>2} busy  tftk {med['tftk']:8.2f} ms"
                              f"  TF {med['tensorflow']:8.2f} ms  ratio {med['tftk'] / med['tensorflow']:.2f}"
                              f"  CPU ratio {table[-1][5]:.2f}", flush=True)
                finally:
                    for spinner in spinners:
                        spinner.kill()
                        spinner.wait()
        finally:
            for proc in workers.values():
                proc.stdin.close()
                proc.wait()
    print(f"uptime after: {uptime()}")
    print(f"\nms per training step, median of {args.repeats} interleaved rounds (ratio = tftk / TF)")
    print(f"| {'cell/mode':<24} | threads | busy | {'tftk':>8} | {'TF':>8} | ratio | CPU ratio |")
    print(f"|{'-' * 26}|---------|------|{'-' * 10}|{'-' * 10}|-------|-----------|")
    for row, threads, busy, ours, theirs, cpu in table:
        print(f"| {row:<24} | {threads:>7} | {busy:>4} | {ours:8.2f} | {theirs:8.2f} | {ours / theirs:5.2f} | {cpu:9.2f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        worker(sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]), sys.argv[5] == "1")
    else:
        main()
