"""sparse_softmax (values and gradient), sparse_maximum/minimum and sparse_mask against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

IDX = [[0, 0], [0, 2], [1, 1], [2, 0], [2, 1], [2, 3]]
SP = "tf.SparseTensor({idx}, v, [3, 4])"

ROWS = [
    Row("sparse_softmax", "v = tf.constant(inputs['v'])\ns = tf.sparse_softmax(" + SP.format(idx=IDX) + ")\n"
        "fetch = {'i': s.indices, 'v': s.values, 'd': tf.gradients(tf.reduce_sum(s.values * tf.sin(s.values + 0.5)), v)[0]}\n",
        {"v": np.array([0.5, -1.0, 2.0, 0.1, 0.3, -0.7])}),
    Row("sparse_softmax_3d", "v = tf.constant(inputs['v'])\n"
        "s = tf.sparse.softmax(tf.SparseTensor([[0, 0, 1], [0, 0, 3], [1, 2, 0]], v, [2, 3, 4]))\nfetch = {'v': s.values}\n",
        {"v": np.array([1.0, 2.0, 3.0], np.float32)}),
    Row("sparse_maximum", "a = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], tf.constant([3.0, -2.0, 5.0]), [3, 3])\n"
        "b = tf.SparseTensor([[0, 0], [1, 0], [2, 1]], tf.constant([1.0, -4.0, 7.0]), [3, 3])\n"
        "m, n = tf.sparse_maximum(a, b), tf.sparse.minimum(a, b)\n"
        "fetch = {'mi': m.indices, 'mv': m.values, 'ni': n.indices, 'nv': n.values, 'x': tf.sparse.maximum(a, b).values}\n"),
    Row("sparse_maximum_shape_mismatch", "a = tf.SparseTensor([[0, 0]], tf.constant([3.0]), [3, 3])\n"
        "b = tf.SparseTensor([[0, 0]], tf.constant([1.0]), [2, 3])\nfetch = {'v': tf.sparse_minimum(a, b).values}\n"),
    Row("sparse_mask", "a = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), tf.constant([12, 26, 45]), "
        "tf.constant([50, 2]))\nm = tf.sparse_mask(a, [12, 45])\nk = tf.sparse.mask(a, tf.constant([26]))\n"
        "fetch = {'v': m.values, 'i': m.indices, 's': m.dense_shape, 'kv': k.values}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("sparse_elementwise", ROWS)
