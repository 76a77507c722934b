"""Per-op time of one bench_training workload's tftk training step, from traced Session.run calls.

    python bench/profile_step.py [cnn64|deepmnist|lstm|mlp100|mlp1000] [--threads 1] [--steps 20] [--top 25]

Runs the same TF1 program bench_training.py times, with FULL_TRACE run options, and prints each op's
mean microseconds per step (op type and output shape), largest first. Thread counts are bound through
the environment before numpy loads, as bench_training's workers do.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", nargs="?", default="cnn64")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[key] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np

    import bench_training
    import tftk as tf

    data_path = Path(tempfile.mkdtemp()) / "data.npz"
    bench_training.make_data(data_path)
    data = dict(np.load(data_path))
    train_op, _, x, y, batches = bench_training.build_tf1_step(tf, data, args.workload)
    config = tf.ConfigProto(intra_op_parallelism_threads=args.threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: batches[0][0], y: batches[0][1]}
        for _ in range(5):
            sess.run(train_op, feed)
        totals: collections.Counter = collections.Counter()
        graph = tf.get_default_graph()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        for _ in range(args.steps):
            metadata = tf.RunMetadata()
            sess.run(train_op, feed, options=options, run_metadata=metadata)
            for node in metadata.step_stats.dev_stats[0].node_stats:
                op = graph.get_operation_by_name(node.node_name)
                shape = str(op.outputs[0].shape) if op.outputs else ""
                totals[f"{op.type:36s} {shape:>16s}"] += node.all_end_rel_micros / args.steps
    print(f"{args.workload}, {args.threads} thread(s), mean of {args.steps} traced steps, "
          f"load average {os.getloadavg()[0]:.2f}: ops sum to {sum(totals.values()) / 1000:.2f} ms")
    for key, micros in totals.most_common(args.top):
        print(f"{micros:9.0f} us  {key}")


if __name__ == "__main__":
    main()
