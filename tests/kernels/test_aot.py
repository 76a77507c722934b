"""The ahead-of-time kernel module: which calls it takes, the same bits as Numba, and Numba when it is absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tftk.kernels import aot
from tftk.kernels import jit

_C = np.zeros((3, 4), np.float32)


@pytest.mark.parametrize("value, key", [
    (_C, (np.dtype("<f4"), 2)),
    (np.zeros((2, 3, 4, 5), np.float32), (np.dtype("<f4"), 4)),
    (np.zeros(7, np.int64), (np.dtype("<i8"), 1)),
    (np.asfortranarray(_C), None),                 # not C-contiguous
    (_C[:, ::2], None),                            # strided view
    (np.zeros(3, ">f4"), (np.dtype(">f4"), 1)),   # foreign byte order: never a compiled key
    (np.broadcast_to(np.float32(1), (3,)), None),  # read-only
    (np.zeros((2, 2), np.float32).view(np.matrix), None),  # an ndarray subclass
    (True, "|b1"), (np.bool_(False), "|b1"),
    (3, "<i8"), (np.int64(3), "<i8"), (np.int32(3), "<i4"),
    (0.5, "<f8"), (np.float64(0.5), "<f8"), (np.float32(0.5), "<f4"),
    ("text", None), (None, None),
])
def test_signature_key_of_each_kind_of_argument(value, key):
    assert aot.signature_key((value,)) == (key,)


@pytest.mark.parametrize("kernel_name", sorted(aot.SIGNATURES))
def test_every_listed_kernel_is_a_kernel_of_its_module(kernel_name):
    import importlib

    importlib.import_module(kernel_name.split(":")[0])
    assert isinstance(jit.registered(kernel_name), jit.Kernel)


def test_a_folder_without_the_module_gives_no_kernels(tmp_path):
    assert aot.load(tmp_path, aot.module_name()) == {}


@pytest.mark.parametrize("signature", [s for signatures in aot.SIGNATURES.values() for s in signatures])
def test_arg_keys_read_each_listed_signature_as_numba_does(signature):
    from tftk.kernels import aot_build

    aot_build._check_keys(signature)  # raises when aot.arg_keys and Numba disagree


@pytest.mark.parametrize("signature, keys", [
    ("void(f4[:, ::1], i8, b1)", ((np.dtype("<f4"), 2), "<i8", "|b1")),
    ("void(u8[::1], f4[:, :, :, ::1], f4)", ((np.dtype("<u8"), 1), (np.dtype("<f4"), 4), "<f4")),
    ("void()", ()),
])
def test_arg_keys_of_a_signature(signature, keys):
    assert aot.arg_keys(signature) == keys


def _axpy(a, x, y):  # what the generated caller wraps (its parameters are read, it is never run)
    return a * x + y


def test_a_kernel_called_through_the_module_pickles_by_reference(monkeypatch):
    import pickle

    from tftk.kernels import elementwise

    kernel = jit.registered("tftk.kernels.elementwise:_relu_grad")
    monkeypatch.setattr(elementwise, "_relu_grad", kernel)  # as before its first call
    monkeypatch.setattr(kernel, "_call", kernel._first_call)
    monkeypatch.setattr(aot, "exports", lambda name: {((np.dtype("<f4"), 2),) * 3: lambda g, y, out: None})
    g = np.ones((2, 2), np.float32)
    kernel(g, g, g)
    generated = elementwise._relu_grad
    assert generated is not kernel and generated.__module__ == "tftk.kernels.elementwise"
    assert pickle.loads(pickle.dumps(generated)) is generated


@pytest.mark.parametrize("args, runs", [
    ((np.float32(2), np.ones(3, np.float32), np.ones(3, np.float32)), "scalar f4"),
    ((2, np.ones(3, np.float32), np.ones(3, np.float32)), "scalar i8"),
    ((np.int64(2), np.ones(3, np.float32), np.ones(3, np.float32)), "scalar i8"),
    ((True, np.ones(3, np.float32), np.ones(3, np.float32)), "fallback"),   # bool is not an i8 here
    ((2.0, np.ones(3, np.float32), np.ones(3, np.float32)), "fallback"),    # nor a float
    ((2, np.ones(3, np.float64), np.ones(3, np.float32)), "fallback"),      # another dtype
    ((2, np.ones((3, 1), np.float32), np.ones(3, np.float32)), "fallback"),  # another rank
    ((2, np.ones(6, np.float32)[::2], np.ones(3, np.float32)), "fallback"),  # not contiguous
    ((2, np.ones(3, np.float32), np.broadcast_to(np.float32(1), (3,))), "fallback"),  # read-only
    ((2, np.ones(3, np.float32), np.ones(3, np.float32).view(np.recarray)), "fallback"),  # a subclass
    ((2, np.ones(3, np.float32), [1.0, 2.0, 3.0]), "fallback"),
    ((2, np.ones(3, np.float32), np.ones(3, np.dtype("<f4", metadata={"m": 1}))), "keyed f4"),  # equal, not the same
])
def test_the_generated_caller_runs_the_version_the_argument_types_match(args, runs):
    def version(name):
        return lambda *a: (name, a)

    versions = {("<f4", (np.dtype("<f4"), 1), (np.dtype("<f4"), 1)): version("scalar f4"),
                ("<i8", (np.dtype("<f4"), 1), (np.dtype("<f4"), 1)): version("scalar i8")}
    call = aot.caller(_axpy, versions, version("fallback"))
    ran, passed = call(*args)
    assert ran == {"keyed f4": "scalar i8"}.get(runs, runs)
    assert all(p is a for p, a in zip(passed, args)) and len(passed) == 3
    assert call(a=args[0], x=args[1], y=args[2])[0] == ran  # by keyword, as Numba's dispatcher takes them


_TRAIN = r"""
import json, sys
import numpy as np
import tftk as tf
from tests.formats.deep_mnist_model import build

def lenet(x, y):
    # LeNet-like: bias_add + ReLU rows, sparse softmax cross-entropy, plain SGD, a random_normal bias
    h = tf.reshape(x, [-1, 28, 28, 1])
    for i, (cin, cout) in enumerate([(1, 4), (4, 8)]):
        w = tf.Variable(tf.truncated_normal([5, 5, cin, cout], stddev=0.1))
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), tf.Variable(tf.zeros([cout]))))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    h = tf.reshape(h, [-1, 7 * 7 * 8])
    z = tf.matmul(h, tf.Variable(tf.truncated_normal([392, 16], stddev=0.1)))
    h = tf.nn.relu(z + tf.Variable(tf.random_normal([16], stddev=0.1)))  # z is read again: bias + ReLU into a new array
    logits = tf.matmul(h, tf.Variable(tf.truncated_normal([16, 10], stddev=0.1)))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)) + 1e-3 * tf.reduce_mean(z)
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss), loss

def linear_rnn(x, y):
    # 4 steps of h = x_t @ wx + h @ wh + b: the backward steps share one transposed copy of wh
    wx = tf.Variable(tf.truncated_normal([196, 16], stddev=0.1))
    wh = tf.Variable(tf.truncated_normal([16, 16], stddev=0.1))
    b = tf.Variable(tf.zeros([16]))
    h = tf.zeros([8, 16])
    for x_t in tf.split(x, 4, axis=1):
        h = tf.matmul(x_t, wx) + tf.matmul(h, wh) + b
    logits = tf.matmul(h, tf.Variable(tf.truncated_normal([16, 10], stddev=0.1)))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    return tf.train.GradientDescentOptimizer(0.1).minimize(loss), loss

rng = np.random.RandomState(0)
xs = rng.rand(8, 784).astype(np.float32)
labels = rng.randint(0, 10, 8)
values = {}
with tf.Graph().as_default():
    tf.set_random_seed(1)
    x, y_, keep_prob, train_step, accuracy = build(tf)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train_step, {x: xs, y_: np.eye(10, dtype=np.float32)[labels], keep_prob: 0.5})
        values.update({v.name: sess.run(v).tobytes().hex() for v in tf.global_variables()})
for seed, batch, model, prefix in [(2, None, lenet, "lenet/"), (3, 8, linear_rnn, "linear_rnn/")]:
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [batch, 784])
        y = tf.placeholder(tf.int32, [batch])
        step, loss = model(x, y)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step, {x: xs, y: labels})
            values.update({prefix + v.name: sess.run(v).tobytes().hex() for v in tf.global_variables()})
from tftk.kernels import aot, jit
dispatched = sorted(name for name in aot.SIGNATURES if jit.registered(name)._dispatcher is not None)
print(json.dumps({"numba": "numba" in sys.modules, "dispatched": dispatched, "values": values}))
"""


def _train(kernel_dir, aot_on: bool) -> dict:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "TFTK_KERNEL_DIR": str(kernel_dir), "TFTK_AOT_KERNELS": "1" if aot_on else "0",
           "PYTHONPATH": root}
    done = subprocess.run([sys.executable, "-c", _TRAIN], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler: the ahead-of-time module cannot be built here")
    folder = tmp_path_factory.mktemp("aot")
    done = subprocess.run([sys.executable, "-m", "tftk.kernels.aot_build", "--dir", str(folder)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.slow
def test_training_through_the_module_gives_numbas_bits_without_importing_numba(built):
    through_module = _train(built, aot_on=True)
    through_numba = _train(built, aot_on=False)
    assert through_module["numba"] is False and through_module["dispatched"] == []
    assert through_numba["numba"] is True
    assert through_numba["dispatched"] == sorted(aot.SIGNATURES)  # every listed kernel ran
    assert through_module["values"] == through_numba["values"]


@pytest.mark.slow
def test_a_module_built_from_other_sources_is_not_loaded(built, tmp_path):
    name = aot.module_name()
    for path in built.iterdir():  # the same files under another build id: what an edited kernel leaves
        shutil.copy(path, tmp_path / path.name.replace(name, "tftk_kernels_0123456789abcdef0123"))
    assert aot.load(built, name)  # the real one loads
    stale = _train(tmp_path, aot_on=True)
    assert stale["numba"] is True and stale["dispatched"] == sorted(aot.SIGNATURES)


@pytest.mark.slow
def test_a_build_without_a_compiler_says_so_and_writes_nothing(tmp_path):
    env = {**os.environ, "CC": str(tmp_path / "no-such-compiler")}
    done = subprocess.run([sys.executable, "-m", "tftk.kernels.aot_build", "--dir", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "could not build the ahead-of-time kernels" in done.stderr
    assert not (tmp_path / "out").exists()
