"""SparseTensor ops: gradients w.r.t. values (float64 finite differences) and errors."""

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tests.gradient_check import GradientCase, check_gradient

IDX = np.array([[0, 1], [1, 0], [2, 3], [0, 3]], np.int64)
RNG = np.random.default_rng(29)


def sp(values):
    return tf.SparseTensor(IDX, values, [3, 4])


GRADIENT_CASES = [
    GradientCase("sparse_dense_matmul", lambda v, m: tf.sparse.sparse_dense_matmul(sp(v), m),
                 [RNG.normal(size=4), RNG.normal(size=(4, 2))]),
    GradientCase("sparse_add_merged", lambda v, w: tf.sparse.add(
        tf.sparse.reorder(sp(v)), tf.SparseTensor([[0, 1], [2, 2]], w, [3, 4])).values * tf.ones([5], tf.float64),
                 [RNG.normal(size=4), RNG.normal(size=2)]),
    GradientCase("sparse_concat_slice", lambda v: tf.sparse.slice(tf.sparse.concat(1, [sp(v), sp(v * 2.0)]),
                                                                  [0, 2], [3, 4]).values * tf.ones([4], tf.float64),
                 [RNG.normal(size=4)]),
    GradientCase("sparse_fill_empty_rows_reshape",
                 lambda v: tf.reshape(tf.sparse.to_dense(tf.sparse.reshape(tf.sparse.fill_empty_rows(
                     tf.SparseTensor([[1, 0], [3, 2]], v, [5, 3]), 0.5)[0], [3, 5])), [3, 5]), [RNG.normal(size=2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


@pytest.mark.parametrize("build, message", [
    (lambda: tf.sparse.reshape(sp(np.ones(4)), [5, -1]), "cannot reshape a SparseTensor of 12 entries"),
    (lambda: tf.sparse.reshape(sp(np.ones(4)), [-1, -1]), "only one output dimension may be -1"),
])
def test_run_time_errors(build, message):
    with tf.Graph().as_default(), tf.Session() as s, pytest.raises(InvalidArgumentError, match=message):
        s.run(build().indices)


def test_sparse_ops_refuse_dense_input():
    with pytest.raises(TypeError, match="expected a SparseTensor, got Tensor"):
        tf.sparse.reorder(tf.ones([2, 2]))
