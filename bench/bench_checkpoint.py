"""Save + restore of a 100 MB model (4 float32 variables of 25 MB): tftk's V2 Saver vs TensorFlow's.

Run: python bench/bench_checkpoint.py [--mb 100] [--repeats 3] [--tf-python /work/tfvenv/bin/python]
Each repetition saves then restores in a fresh folder; tftk and TF repetitions are interleaved so
both see the same machine load; medians are reported. TF runs in its own venv (it needs its own
numpy), timing inside its process, so its import time is not counted. Both write TF's V2 format.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


# The measured program, run unchanged with tf = tensorflow.compat.v1 (in TF's venv) and tf = tftk.
MEASURE = r"""
import time
import numpy as np


def measure(tf, folder, elements, repeats):
    with tf.Graph().as_default():
        variables = [tf.Variable(np.random.default_rng(i).standard_normal(elements, dtype=np.float32), name=f"v{i}")
                     for i in range(4)]
        saver = tf.train.Saver(variables)
        times = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for r in range(repeats):
                start = time.perf_counter()
                prefix = saver.save(sess, f"{folder}/model.ckpt-{r}", write_meta_graph=False)
                middle = time.perf_counter()
                saver.restore(sess, prefix)
                times.append([middle - start, time.perf_counter() - middle])
    return times
"""

TF_SCRIPT = MEASURE + r"""
import json, sys
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
print(json.dumps(measure(tf, sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
"""


def tftk_times(folder: str, elements: int, repeats: int) -> list[list[float]]:
    import tftk
    scope: dict = {}
    exec(compile(MEASURE, "bench_checkpoint.MEASURE", "exec"), scope)
    return scope["measure"](tftk, folder, elements, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON", "/work/tfvenv/bin/python"))
    args = parser.parse_args()
    elements = args.mb * (1 << 20) // 16  # 4 variables of 4-byte floats
    tftk_runs, tf_runs = [], []
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-") as folder:
        tftk_times(folder, 1 << 16, 1)  # warm the CRC kernel's compilation cache
        for r in range(args.repeats):
            tftk_runs += tftk_times(f"{folder}/a{r}", elements, 1)
            os.makedirs(f"{folder}/b{r}")
            out = subprocess.run([args.tf_python, "-c", TF_SCRIPT, f"{folder}/b{r}", str(elements), "1"],
                                 capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
            if out.returncode != 0:
                sys.exit(f"TensorFlow run failed:\n{out.stderr[-2000:]}")
            tf_runs += json.loads(out.stdout.strip().splitlines()[-1])
    for label, index in (("save", 0), ("restore", 1)):
        ours = statistics.median(t[index] for t in tftk_runs)
        theirs = statistics.median(t[index] for t in tf_runs)
        print(f"{label:8s} {args.mb} MB: tftk {ours:.3f} s, TF {theirs:.3f} s, ratio tftk/TF {ours / theirs:.2f}")
    total_ours = statistics.median(sum(t) for t in tftk_runs)
    total_theirs = statistics.median(sum(t) for t in tf_runs)
    print(f"save+restore: tftk {total_ours:.3f} s, TF {total_theirs:.3f} s, ratio {total_ours / total_theirs:.2f}")


if __name__ == "__main__":
    main()
