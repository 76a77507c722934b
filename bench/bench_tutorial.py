"""The deep-MNIST tutorial as a whole program: tftk against TensorFlow, wall time from start to exit.

    python bench/bench_tutorial.py [--steps 2000] [--repeats 2] [--busy 0,1] [--tf-python /path/to/tf/python]

Issue 15 asks that the tutorial's full run (20,000 steps) take no longer in tftk than in TF. A
step's speed is `bench_training.py deepmnist`; this measures what a user waits for: the unmodified
TF1 program below (the tutorial's shape: `input_data.read_data_sets`, two conv + pool layers, a
1024-unit dense layer, dropout, Adam 1e-4, batch 50, a training-accuracy print every 100 steps and
the test accuracy over all 10,000 test images at the end), started as a fresh process with default
threading (every core), import, graph building, compilation and evaluation included.

tftk runs the program through `python -m tftk.compat` (`import tensorflow` gives tftk); TensorFlow
2.21 runs it with `tensorflow` mapped to `tensorflow.compat.v1` and a numpy reader of the same files
standing in for the `input_data` module TF 2 no longer ships. The data are MNIST-format IDX files
written here (no download): the 8x8 digits shipped with tftk, scaled to 28x28 with noise, so the
printed accuracies show both runs learned the same task. Runs alternate between the frameworks;
`--busy K` adds K busy-loop processes (a shared machine). The table gives the median wall time,
the process CPU time, seconds per 1,000 steps once started, and each run's test accuracy.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PROGRAM = '''\
"""A TF1 program of the deep-MNIST tutorial's shape (run unmodified by tftk and by TensorFlow)."""
import argparse
import sys
import time

from tensorflow.examples.tutorials.mnist import input_data
import tensorflow as tf

FLAGS = None


def weight_variable(shape):
  return tf.Variable(tf.truncated_normal(shape, stddev=0.1))


def bias_variable(shape):
  return tf.Variable(tf.constant(0.1, shape=shape))


def conv_pool(x, shape, scope):
  with tf.name_scope(scope):
    h = tf.nn.relu(tf.nn.conv2d(x, weight_variable(shape), strides=[1, 1, 1, 1], padding="SAME")
                   + bias_variable([shape[-1]]))
    return tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def deepnn(x):
  image = tf.reshape(x, [-1, 28, 28, 1])
  h = conv_pool(conv_pool(image, [5, 5, 1, 32], "conv1"), [5, 5, 32, 64], "conv2")
  with tf.name_scope("fc1"):
    h = tf.nn.relu(tf.matmul(tf.reshape(h, [-1, 7 * 7 * 64]), weight_variable([7 * 7 * 64, 1024]))
                   + bias_variable([1024]))
  keep_prob = tf.placeholder(tf.float32)
  h = tf.nn.dropout(h, keep_prob)
  with tf.name_scope("fc2"):
    return tf.matmul(h, weight_variable([1024, 10])) + bias_variable([10]), keep_prob


def main(_):
  mnist = input_data.read_data_sets(FLAGS.data_dir)
  x = tf.placeholder(tf.float32, [None, 784])
  y_ = tf.placeholder(tf.int64, [None])
  y_conv, keep_prob = deepnn(x)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y_conv)
  train_step = tf.train.AdamOptimizer(1e-4).minimize(loss)
  accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y_conv, 1), y_), tf.float32))
  with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    started = time.perf_counter()
    for i in range(FLAGS.steps):
      batch = mnist.train.next_batch(50)
      if i % 100 == 0:
        train_accuracy = accuracy.eval(feed_dict={x: batch[0], y_: batch[1], keep_prob: 1.0})
        print("step %d, training accuracy %g" % (i, train_accuracy))
      train_step.run(feed_dict={x: batch[0], y_: batch[1], keep_prob: 0.5})
    print("training seconds %.3f" % (time.perf_counter() - started))
    print("test accuracy %g" % accuracy.eval(
        feed_dict={x: mnist.test.images, y_: mnist.test.labels, keep_prob: 1.0}))


if __name__ == "__main__":
  parser = argparse.ArgumentParser()
  parser.add_argument("--data_dir", type=str, default="/tmp/tensorflow/mnist/input_data")
  parser.add_argument("--steps", type=int, default=20000)
  FLAGS, unparsed = parser.parse_known_args()
  tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
'''

FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", 60000),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 10000)}


def write_idx(path: Path, array: np.ndarray) -> None:
    """An IDX file (big-endian dimensions after a magic of two zero bytes, uint8 code 8 and the rank)."""
    header = bytes([0, 0, 8, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(header + array.astype(np.uint8).tobytes())


def make_mnist(folder: Path) -> None:
    """MNIST-format files from tftk's 8x8 digits: each image scaled to 28x28 (bilinear), shifted, noised."""
    digits = np.load(Path(__file__).resolve().parent.parent / "tftk" / "datasets" / "digits.npz")
    images, labels = digits["images"].astype(np.float32), digits["labels"]
    grid = np.linspace(0, 7, 24)
    low, frac = np.floor(grid).astype(int).clip(0, 6), grid - np.floor(grid).clip(0, 6)
    rows = images[:, low] * (1 - frac)[None, :, None] + images[:, low + 1] * frac[None, :, None]
    big = rows[:, :, low] * (1 - frac) + rows[:, :, low + 1] * frac  # [n, 24, 24], values 0..16
    rng = np.random.default_rng(0)
    for split, (image_file, label_file, count) in FILES.items():
        pick = rng.integers(0, len(big), count)
        out = np.zeros((count, 28, 28), np.float32)
        shifts = rng.integers(0, 5, (count, 2))
        for dy in range(5):
            for dx in range(5):
                chosen = (shifts[:, 0] == dy) & (shifts[:, 1] == dx)
                out[chosen, dy:dy + 24, dx:dx + 24] = big[pick[chosen]]
        out = out * (255 / 16) + rng.normal(0, 20, out.shape)
        write_idx(folder / image_file, out.clip(0, 255))
        write_idx(folder / label_file, labels[pick])


class _DataSet:
    """TF1's tutorial DataSet for TF's run: [n, 784] float32 in [0, 1], shuffled every epoch."""

    def __init__(self, images: np.ndarray, labels: np.ndarray):
        self.images = images.reshape(len(images), 784).astype(np.float32) / 255.0
        self.labels = labels.astype(np.int64)
        self._order, self._at = np.random.permutation(len(self.images)), 0

    def next_batch(self, size: int):
        if self._at + size > len(self._order):
            self._order, self._at = np.random.permutation(len(self.images)), 0
        index = self._order[self._at:self._at + size]
        self._at += size
        return self.images[index], self.labels[index]


def _read_idx(path: Path) -> np.ndarray:
    with gzip.open(path, "rb") as handle:
        data = handle.read()
    shape = tuple(np.frombuffer(data, ">u4", data[3], offset=4))
    return np.frombuffer(data, np.uint8, offset=4 + 4 * data[3]).reshape(shape)


def read_data_sets(train_dir: str, validation_size: int = 5000):
    """The `input_data.read_data_sets` TF 2 no longer ships, for TF's run of the program."""
    folder = Path(train_dir)
    train = [_read_idx(folder / name) for name in FILES["train"][:2]]
    test = [_read_idx(folder / name) for name in FILES["test"][:2]]
    splits = argparse.Namespace(train=_DataSet(train[0][validation_size:], train[1][validation_size:]),
                                validation=_DataSet(train[0][:validation_size], train[1][:validation_size]),
                                test=_DataSet(*test))
    return splits


def run_under_tensorflow(program: str, argv: list[str]) -> None:
    """Run `program` in this (TensorFlow) Python with `tensorflow` meaning `tensorflow.compat.v1`."""
    import types

    import tensorflow.compat.v1 as v1
    v1.disable_v2_behavior()
    sys.modules["tensorflow"] = v1
    input_data = types.ModuleType("input_data")
    input_data.read_data_sets = read_data_sets
    names = ["tensorflow.examples", "tensorflow.examples.tutorials", "tensorflow.examples.tutorials.mnist"]
    for name in names:
        sys.modules[name] = types.ModuleType(name)
    sys.modules[names[-1]].input_data = input_data
    sys.modules[names[-1] + ".input_data"] = input_data
    import runpy
    sys.argv = [program, *argv]
    runpy.run_path(program, run_name="__main__")


def run_once(framework: str, python: str, program: Path, data_dir: Path, steps: int) -> dict:
    """Start the program in a fresh process; return its wall and CPU seconds and what it printed."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent) + os.pathsep + env.get("PYTHONPATH", "")
    args = ["--data_dir", str(data_dir), "--steps", str(steps)]
    if framework == "tftk":
        command = [python, "-m", "tftk.compat", str(program), *args]
    else:
        command = [python, __file__, "--run-tensorflow", str(program), *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{framework} run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    training = float(re.search(r"training seconds ([\d.]+)", done.stdout).group(1))
    return dict(wall=wall, cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                training=training, accuracy=float(re.search(r"test accuracy ([\d.]+)", done.stdout).group(1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="training steps (the tutorial: 20000)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--busy", default="0", help="busy-loop processes during the runs, e.g. 0,1")
    parser.add_argument("--tf-python", default=os.environ.get("TFTK_TF_PYTHON", sys.executable))
    parser.add_argument("--run-tensorflow", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_tensorflow:
        run_under_tensorflow(args.run_tensorflow[0], args.run_tensorflow[1:])
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_training import busy_loops

    pythons = {"tftk": sys.executable, "tensorflow": args.tf_python}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        make_mnist(folder)
        program = folder / "mnist_deep.py"
        program.write_text(PROGRAM)
        print(f"{args.steps} steps; load average {os.getloadavg()[0]:.2f} before")
        print("  busy  framework      wall s   CPU s  s/1000 steps  test acc  tftk/TF wall")
        for busy in (int(b) for b in args.busy.split(",")):
            loops = busy_loops(busy)
            try:
                runs: dict[str, list[dict]] = {name: [] for name in pythons}
                for _ in range(args.repeats):
                    for name, python in pythons.items():
                        runs[name].append(run_once(name, python, program, folder, args.steps))
            finally:
                for loop in loops:
                    loop.kill()
                    loop.wait()
            medians = {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
                       for name, rs in runs.items()}
            for name, m in medians.items():
                ratio = m["wall"] / medians["tensorflow"]["wall"]
                print(f"  {busy:4d}  {name:12s} {m['wall']:8.1f} {m['cpu']:7.1f} "
                      f"{1000 * m['training'] / args.steps:13.2f} {m['accuracy']:9.4f}  {ratio:11.2f}")
        print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
