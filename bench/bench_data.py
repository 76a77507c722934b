"""tf.data throughput: tftk against real TensorFlow on the same TFRecord files, and the digits
ConvNet's training steps/s fed by tf.data against feed_dict.

Run: .venv/bin/python bench/bench_data.py [--examples N] [--repeats R] [--steps S]
     (TFTK_TF_PYTHON names the TensorFlow venv's python; without it the TF column is skipped)

1. TFRecord -> parse_single_example -> map (reshape, scale) -> shuffle -> batch -> prefetch over N
   examples in 4 files written once by tftk; examples/s for each library, repetitions interleaved
   (tftk, TF, tftk, TF, ...) so both see the same machine load; medians reported. TF runs the
   same pipeline source in its own process and times only the drain (not its import). One
   untimed tftk drain first, so Numba's kernels are compiled (or loaded from its cache) before.
2. The ConvNet of configs/digits_convnet*.yaml: seconds for S training steps with batches from
   the numpy DataSet through feed_dict vs from the TFRecord pipeline; one untimed run of each
   first, then interleaved, medians.

The machine's load average is printed before and after: compare ratios, not absolute rates.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PIPELINE = '''
def pipeline(tf, files, batch):
    def parse(record):
        ex = tf.parse_single_example(record, {"image": tf.FixedLenFeature([64], tf.float32),
                                              "label": tf.FixedLenFeature([], tf.int64)})
        return tf.reshape(ex["image"], [8, 8, 1]) / 16.0, tf.cast(ex["label"], tf.int32)
    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=2).shuffle(1000, seed=1)
    return ds.batch(batch).prefetch(2)

def drain(tf, files, batch):
    nxt = pipeline(tf, files, batch).make_one_shot_iterator().get_next()
    n = 0
    with tf.Session() as s:
        start = time.perf_counter()
        while True:
            try:
                n += len(s.run(nxt)[1])
            except tf.errors.OutOfRangeError:
                return n, time.perf_counter() - start
'''

TF_SCRIPT = '''
import json, sys, time
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
''' + PIPELINE + '''
files, batch = json.loads(sys.argv[1]), int(sys.argv[2])
with tf.Graph().as_default():
    print(json.dumps(drain(tf, files, batch)))
'''


def write_files(folder: str, examples: int) -> list[str]:
    from models.record_input import write_example_records
    rng = np.random.default_rng(0)
    images = rng.integers(0, 17, (examples, 64)).astype(np.float32)
    labels = rng.integers(0, 10, examples)
    files = []
    for k, part in enumerate(np.array_split(np.arange(examples), 4)):
        path = os.path.join(folder, f"part-{k}.tfrecord")
        write_example_records(path, images[part], labels[part])
        files.append(path)
    return files


def tftk_rate(files: list[str], batch: int) -> float:
    import tftk as tf
    scope: dict = {"time": time}
    exec(PIPELINE, scope)
    with tf.Graph().as_default():
        n, secs = scope["drain"](tf, files, batch)
    return n / secs


def tf_rate(python: str, files: list[str], batch: int) -> float:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([python, "-c", TF_SCRIPT, json.dumps(files), str(batch)], capture_output=True,
                         text=True, env=env, check=True).stdout
    n, secs = json.loads(out.strip().splitlines()[-1])
    return n / secs


def convnet_seconds(records: bool, steps: int, folder: str) -> float:
    from models import make_model, model_schema
    from tftk.config import resolve_config
    name = "digits_convnet_tfrecord.yaml" if records else "digits_convnet.yaml"
    run = tempfile.mkdtemp(dir=folder)
    overrides = [f"result_dir={run}", "save_every=0", "log_every=1000000", "random_seed=1"]
    if records:
        overrides.append(f"model.train_records={folder}/digits-train.tfrecord")
    model = make_model(resolve_config(ROOT / "configs" / name, overrides, model_schema))
    model.log = lambda line: None
    model.learn_from_epoch(0)  # first step: plan building and kernel compilation are not timed
    start = time.perf_counter()
    for step in range(1, steps + 1):
        model.learn_from_epoch(step)
    seconds = time.perf_counter() - start
    model.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    python = os.environ.get("TFTK_TF_PYTHON")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="tftk-bench-data-") as folder:
        files = write_files(folder, args.examples)
        tftk_rate(files, args.batch)  # compile / load the kernels
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(tftk_rate(files, args.batch))
            if python:
                theirs.append(tf_rate(python, files, args.batch))
        print(f"TFRecord -> parse -> map -> shuffle -> batch({args.batch}) -> prefetch, {args.examples} examples:")
        print(f"  tftk: {statistics.median(ours):10.0f} examples/s   (runs: {', '.join(f'{r:.0f}' for r in ours)})")
        if theirs:
            print(f"  TF:   {statistics.median(theirs):10.0f} examples/s   (runs: {', '.join(f'{r:.0f}' for r in theirs)})")
            print(f"  tftk / TF = {statistics.median(ours) / statistics.median(theirs):.2f}")
        feed, data = [], []
        convnet_seconds(False, 20, folder)
        convnet_seconds(True, 20, folder)
        for _ in range(args.repeats):
            feed.append(convnet_seconds(False, args.steps, folder))
            data.append(convnet_seconds(True, args.steps, folder))
        print(f"digits ConvNet, {args.steps} training steps (batch 50):")
        print(f"  feed_dict: {args.steps / statistics.median(feed):8.1f} steps/s")
        print(f"  tf.data:   {args.steps / statistics.median(data):8.1f} steps/s   "
              f"(tf.data / feed_dict = {statistics.median(feed) / statistics.median(data):.2f})")
        print(f"  runs (s): feed_dict {', '.join(f'{x:.2f}' for x in feed)}; tf.data {', '.join(f'{x:.2f}' for x in data)}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
