"""Per-op time of one bench_training workload's tftk training step, from traced Session.run calls.

    python bench/profile_step.py [cnn64|deepmnist|lstm|mlp100|mlp1000] [--threads 1] [--steps 20] [--top 25]
    /work/tfvenv/bin/python bench/profile_step.py deepmnist --tensorflow   # the same, in TF's tf.compat.v1

Runs the same TF1 program bench_training.py times, with FULL_TRACE run options, and prints each op's
mean microseconds per step (op type and output shape), largest first, with the fastest step's time (on a
loaded machine the minimum is the closer estimate of the op's own cost). Thread counts are bound through
the environment before numpy loads, as bench_training's workers do. With --tensorflow the program runs
in TensorFlow instead (its Grappler fuses ops, e.g. Conv2D + BiasAdd + Relu into _FusedConv2D, so the
rows differ), for an op-by-op comparison in one Python with TF installed.
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
    parser.add_argument("--tensorflow", action="store_true", help="profile TensorFlow's run of the program")
    args = parser.parse_args()
    for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[key] = str(args.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import numpy as np

    import bench_training
    if args.tensorflow:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
    else:
        import tftk as tf

    data_path = Path(tempfile.mkdtemp()) / "data.npz"
    bench_training.make_data(data_path)
    data = dict(np.load(data_path))
    train_op, _, x, y, batches = bench_training.build_tf1_step(tf, data, args.workload)
    config = tf.ConfigProto(intra_op_parallelism_threads=args.threads, inter_op_parallelism_threads=args.threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        feed = {x: batches[0][0], y: batches[0][1]}
        for _ in range(5):
            sess.run(train_op, feed)
        totals: collections.Counter = collections.Counter()
        fastest: dict[str, float] = {}
        graph = tf.get_default_graph()
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        for _ in range(args.steps):
            metadata = tf.RunMetadata()
            sess.run(train_op, feed, options=options, run_metadata=metadata)
            step: collections.Counter = collections.Counter()
            for node in metadata.step_stats.dev_stats[0].node_stats:
                name = node.node_name.split(":")[0]
                try:
                    op = graph.get_operation_by_name(name)
                except (KeyError, ValueError):  # a node Grappler made (fused ops), or the runtime's _SOURCE
                    step[f"{node.timeline_label.split('=')[-1].split('(')[0].strip() or name:36s} "
                         f"{'':>16s}"] += node.all_end_rel_micros
                    continue
                shape = str(op.outputs[0].shape) if op.outputs else ""
                step[f"{op.type:36s} {shape:>16s}"] += node.all_end_rel_micros
            for key, micros in step.items():
                totals[key] += micros / args.steps
                fastest[key] = min(fastest.get(key, micros), micros)
    print(f"{'TensorFlow' if args.tensorflow else 'tftk'} {args.workload}, {args.threads} thread(s), mean of {args.steps} traced steps, "
          f"load average {os.getloadavg()[0]:.2f}: ops sum to {sum(totals.values()) / 1000:.2f} ms "
          f"(fastest steps' {sum(fastest.values()) / 1000:.2f} ms)")
    print(f"{'mean us':>9s} {'min us':>9s}  op")
    for key, micros in totals.most_common(args.top):
        print(f"{micros:9.0f} {fastest[key]:9.0f}  {key}")


if __name__ == "__main__":
    main()
