"""tf.sparse.* / tf.sparse_* ops against real TensorFlow: indices, values, shapes and value gradients."""

import numpy as np
import pytest

from tests.differential.op_tables import compare
from tests.tf_oracle import run_in_tf, run_in_tftk

A = {"ai": np.array([[0, 1], [1, 0], [2, 3], [0, 3]], np.int64), "av": np.array([1.5, -2.0, 3.0, 0.5]),
     "bi": np.array([[0, 1], [2, 2], [1, 0]], np.int64), "bv": np.array([4.0, 5.0, 2.0]),
     "d": np.arange(12, dtype=np.float64).reshape(3, 4) / 7.0, "m": np.arange(8, dtype=np.float64).reshape(4, 2) - 3}

SNIPPET = """
av, bv, d, m = (tf.constant(inputs[k]) for k in ('av', 'bv', 'd', 'm'))
a = tf.SparseTensor(inputs['ai'], av, [3, 4])
b = tf.SparseTensor(inputs['bi'], bv, [3, 4])
y = {expr}
parts = [y.indices, y.values, y.dense_shape] if isinstance(y, tf.SparseTensor) else [y]
floats = [t for t in [av, bv, d, m]]
fetch = {{'out%d' % i: p for i, p in enumerate(parts)}}
if {grad}:
    value = y.values if isinstance(y, tf.SparseTensor) else y
    grads = tf.gradients(tf.reduce_sum(value * tf.sin(value + 0.5)), floats)
    fetch.update({{'d%d' % i: tf.convert_to_tensor(g) for i, g in enumerate(grads) if g is not None}})
with tf.Session() as s:
    outputs = s.run(fetch)
"""

ROWS = [
    ("reorder", "tf.sparse.reorder(a)", True),
    ("to_dense_after_reorder", "tf.sparse.to_dense(tf.sparse.reorder(a))", True),
    ("from_dense", "tf.sparse.from_dense(d - 0.5 * tf.round(d))", True),
    ("retain", "tf.sparse.retain(a, tf.constant([True, False, True, False]))", True),
    # TF's SparseAdd merges sorted inputs (unsorted ones give it duplicate entries): both reordered here.
    ("add_sparse_sparse", "tf.sparse.add(tf.sparse.reorder(a), tf.sparse.reorder(b))", True),
    ("add_thresh", "tf.sparse_add(tf.sparse.reorder(a), tf.sparse.reorder(b), thresh=2.0)", True),
    ("add_sparse_dense", "tf.sparse.add(a, d)", True),
    ("sparse_dense_matmul", "tf.sparse.sparse_dense_matmul(a, m)", True),
    ("sparse_tensor_dense_matmul_adjoint", "tf.sparse_tensor_dense_matmul(a, d, adjoint_a=True)", True),
    ("reduce_sum_all", "tf.sparse.reduce_sum(a)", True),
    ("reduce_sum_axis", "tf.sparse.reduce_sum(a, axis=1, keepdims=True)", True),
    ("reduce_sum_sparse", "tf.sparse.reduce_sum_sparse(a, axis=0)", False),  # TF: no gradient
    ("reduce_max", "tf.sparse_reduce_max(tf.SparseTensor([[0, 0], [1, 2]], [-7.0, 4.0], [3, 3]), 1)", False),
    ("concat_axis1", "tf.sparse.concat(1, [tf.sparse.reorder(a), b])", True),
    ("concat_axis0", "tf.sparse_concat(0, [b, tf.sparse.reorder(a)])", True),
    ("concat_expand", "tf.sparse.concat(0, [b, tf.SparseTensor([[0, 5]], bv[:1], [1, 6])], expand_nonconcat_dim=True)",
     False),
    ("slice", "tf.sparse.slice(tf.sparse.reorder(a), [0, 1], [2, 3])", True),
    ("slice_clipped", "tf.sparse.slice(b, [1, 1], [5, 5])", True),
    ("split_axis1", "tf.sparse.split(sp_input=tf.sparse.reorder(a), num_split=3, axis=1)[0]", False),  # TF: no gradient
    ("fill_empty_rows", "tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [3, 2]], bv[:2], [5, 3]), -1.0)[0]", True),
    ("fill_empty_rows_indicator",
     "tf.cast(tf.sparse.fill_empty_rows(tf.SparseTensor([[1, 0], [3, 2]], bv[:2], [5, 3]), -1.0)[1], tf.float64)", False),
    ("reshape", "tf.sparse.reshape(tf.sparse.reorder(a), [2, -1, 2])", True),
    ("transpose", "tf.sparse.transpose(a)", True),
    ("expand_dims", "tf.sparse.expand_dims(b, 1)", True),
    ("eye", "tf.sparse.eye(3, 4, dtype=tf.float64)", False),
    ("reset_shape", "tf.sparse.reset_shape(b)", False),
    ("to_indicator", "tf.cast(tf.sparse.to_indicator(tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [3, 1, 2], [3, 2]), 5),"
                     " tf.int32)", False),
]

CASES = {name: (SNIPPET.format(expr=expr, grad=grad), A) for name, expr, grad in ROWS}
CASES["to_dense_unsorted_fails"] = ("with tf.Session() as s:\n    s.run(tf.sparse.to_dense(tf.SparseTensor("
                                    "[[1, 0], [0, 0]], [1.0, 2.0], [2, 2])))\noutputs = {}\n", {})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
