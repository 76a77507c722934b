"""The names a TF1 program's own objects get, recorded the same way under TF and under tftk.

`trace(tf)` wraps the `tf` module: every function or class the program calls through it (at any
depth: `tf.nn.relu`, `tf.train.AdamOptimizer`) records what it returned, so the program's view
of the graph, each tensor, op and variable it was handed, is listed in call order as
(API name, graph name). Programs are the three TF1 MNIST tutorials written against `tf`; the
runner `tf_named_nodes.py` records them in TensorFlow, `test_named_nodes_tf.py` in tftk.
Neither module imports a framework: the one to trace is passed in.
"""

from __future__ import annotations

import types


class _Traced:
    """A module (or namespace) whose callables record their results in `log`."""

    def __init__(self, target, path: str, log: list) -> None:
        self._target, self._path, self._log = target, path, log

    def __getattr__(self, name: str):
        value = getattr(self._target, name)
        path = f"{self._path}.{name}"
        if isinstance(value, types.ModuleType) or type(value).__name__ in ("_LazyModule", "LazyLoader",
                                                                              "TFModuleWrapper", "_Namespace"):
            return _Traced(value, path, self._log)
        if callable(value) and not isinstance(value, type) or isinstance(value, type) and name[:1].isupper():
            return self._recording(value, path)
        return value

    def _recording(self, fn, path: str):
        def call(*args, **kwargs):
            result = fn(*args, **kwargs)
            _record(path, result, self._log)
            return result
        return call


def _graph_name(value) -> str | None:
    """The graph name of a tensor, op or variable; None for anything else."""
    for attribute in ("op",):  # tensors and variables: their op's name, plus the output index
        inner = getattr(value, attribute, None)
        if inner is not None and hasattr(inner, "node_def") and hasattr(value, "value_index"):
            return value.name
    if hasattr(value, "node_def") and hasattr(value, "type"):
        return value.name
    if hasattr(value, "initializer") and hasattr(value, "op"):
        return value.op.name
    return None


def _record(path: str, result, log: list) -> None:
    items = result if isinstance(result, (list, tuple)) else [result]
    for item in items:
        name = _graph_name(item)
        if name is not None:
            log.append((path, name))


def trace(tf):
    """(`tf` wrapped so calls are recorded, the list they are recorded in)."""
    log: list = []
    return _Traced(tf, "tf", log), log


def mnist_softmax(tf):
    """TF1's mnist_softmax.py, graph part."""
    x = tf.placeholder(tf.float32, [None, 784])
    W = tf.Variable(tf.zeros([784, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.matmul(x, W) + b
    y_ = tf.placeholder(tf.float32, [None, 10])
    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
    tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    tf.reduce_mean(tf.cast(correct_prediction, tf.float32))


def mnist_deep(tf):
    """TF1's mnist_deep.py (the deep-MNIST tutorial), graph part."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "formats"))
    from deep_mnist_model import build
    build(tf)


def mnist_with_summaries(tf):
    """TF1's mnist_with_summaries.py, graph part (its name scopes, summaries and explicit names)."""
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, 784], name="x-input")
        y_ = tf.placeholder(tf.int64, [None], name="y-input")
    with tf.name_scope("input_reshape"):
        tf.summary.image("input", tf.reshape(x, [-1, 28, 28, 1]), 10)

    def variable_summaries(var):
        with tf.name_scope("summaries"):
            mean = tf.reduce_mean(var)
            tf.summary.scalar("mean", mean)
            with tf.name_scope("stddev"):
                stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
            tf.summary.scalar("stddev", stddev)
            tf.summary.scalar("max", tf.reduce_max(var))
            tf.summary.scalar("min", tf.reduce_min(var))
            tf.summary.histogram("histogram", var)

    def nn_layer(input_tensor, input_dim, output_dim, layer_name, act=tf.nn.relu):
        with tf.name_scope(layer_name):
            with tf.name_scope("weights"):
                weights = tf.Variable(tf.truncated_normal([input_dim, output_dim], stddev=0.1))
                variable_summaries(weights)
            with tf.name_scope("biases"):
                biases = tf.Variable(tf.constant(0.1, shape=[output_dim]))
                variable_summaries(biases)
            with tf.name_scope("Wx_plus_b"):
                preactivate = tf.matmul(input_tensor, weights) + biases
                tf.summary.histogram("pre_activations", preactivate)
            activations = act(preactivate, name="activation")
            tf.summary.histogram("activations", activations)
            return activations

    hidden1 = nn_layer(x, 784, 500, "layer1")
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar("dropout_keep_probability", keep_prob)
        dropped = tf.nn.dropout(hidden1, keep_prob)
    y = nn_layer(dropped, 500, 10, "layer2", act=tf.identity)
    with tf.name_scope("cross_entropy"):
        with tf.name_scope("total"):
            cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
    tf.summary.scalar("cross_entropy", cross_entropy)
    with tf.name_scope("train"):
        tf.train.AdamOptimizer(0.001).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        with tf.name_scope("correct_prediction"):
            correct_prediction = tf.equal(tf.argmax(y, 1), y_)
        with tf.name_scope("accuracy"):
            accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    tf.summary.scalar("accuracy", accuracy)
    tf.summary.merge_all()


PROGRAMS = {"mnist_softmax": mnist_softmax, "mnist_deep": mnist_deep, "mnist_with_summaries": mnist_with_summaries}


def record(tf, name: str) -> dict:
    """Run program `name` with `tf` in a fresh graph: {"calls": [(api, name)], "variables": the global
    variables' names (a checkpoint's keys), "nodes": all op names}."""
    traced, log = trace(tf)
    with tf.Graph().as_default() as graph:
        PROGRAMS[name](traced)
        return {"calls": log, "variables": [v.op.name for v in tf.global_variables()],
                "nodes": [op.name for op in graph.get_operations()]}
