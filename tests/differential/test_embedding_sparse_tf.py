"""embedding_lookup_sparse (each combiner, with and without weights, partitioned params) against real TF,
values and gradients w.r.t. the params."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(1313)
SP = ("ids = tf.SparseTensor([[0, 0], [0, 1], [0, 3], [2, 0], [3, 1]], tf.constant([3, 1, 3, 0, 4], tf.int64), [5, 4])\n"
      "wts = tf.SparseTensor(ids.indices, tf.constant([0.5, 2.0, 1.0, 3.0, -1.0], tf.float64), ids.dense_shape)\n")


def row(name: str, call: str) -> Row:
    body = ("p = tf.constant(inputs['p'])\n" + SP + f"y = {call}\n"
            "fetch = {'y': y, 'dp': tf.convert_to_tensor(tf.gradients(tf.reduce_sum(y * tf.sin(y)), p)[0])}\n")
    return Row(name, body, {"p": RNG.uniform(-1, 1, (6, 3))})


ROWS = [
    row("mean", "tf.nn.embedding_lookup_sparse(p, ids, None)"),
    row("sum", "tf.nn.embedding_lookup_sparse(p, ids, None, combiner='sum')"),
    row("sqrtn", "tf.nn.embedding_lookup_sparse(p, ids, None, combiner='sqrtn')"),
    row("weighted_mean", "tf.nn.embedding_lookup_sparse(p, ids, wts, combiner='mean')"),
    row("weighted_sum", "tf.nn.embedding_lookup_sparse(p, ids, wts, combiner='sum')"),
    row("weighted_sqrtn", "tf.nn.embedding_lookup_sparse(p, ids, wts, combiner='sqrtn')"),
    Row("partitioned", "a, b = tf.constant(inputs['a']), tf.constant(inputs['b'])\n" + SP +
        "y = tf.nn.embedding_lookup_sparse([a, b], ids, wts, partition_strategy='div', combiner='sum')\n"
        "g = tf.gradients(tf.reduce_sum(y * tf.sin(y)), [a, b])\n"
        "fetch = {'y': y, 'da': tf.convert_to_tensor(g[0]), 'db': tf.convert_to_tensor(g[1])}\n",
        {"a": RNG.uniform(-1, 1, (3, 3)), "b": RNG.uniform(-1, 1, (3, 3))}),
    Row("bad_combiner", SP + "tf.nn.embedding_lookup_sparse(tf.zeros([5, 2]), ids, None, combiner='max')\nfetch = {}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("embedding_sparse", ROWS)
