"""embedding_lookup: seed 000's example, seed 003's mod/div partitions, max_norm, sparse gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tests.nn import run
from tftk.api import nn
from tftk.framework.errors import InvalidArgumentError
from tftk.ops.embedding_ops import partition_assignments


def test_seed_000_example():
    mat = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9]).reshape((3, -1))
    res = nn.embedding_lookup(mat, [[1, 2], [0, 1]])
    np.testing.assert_array_equal(run(res), [[[4, 5, 6], [7, 8, 9]], [[1, 2, 3], [4, 5, 6]]])
    assert res.shape.as_list() == [2, 2, 3]


@pytest.mark.parametrize("strategy,layout", [("mod", [[0, 3], [1, 4], [2]]), ("div", [[0, 1], [2, 3], [4]])])
def test_seed_003_partitions_of_five_ids_over_three_shards(strategy, layout):
    part, row = partition_assignments(np.arange(5), [len(p) for p in layout], strategy)
    assert [[i for i in range(5) if part[i] == p] for p in range(3)] == layout
    assert all(layout[p][r] == i for i, (p, r) in enumerate(zip(part, row)))
    emb = 3
    shards = [tf.constant(np.array([[float(i)] * emb for i in ids])) for ids in layout]
    ids = np.array([[4, 0], [2, 3], [1, 1]])
    out = nn.embedding_lookup(shards, ids, partition_strategy=strategy)
    assert out.shape.as_list() == [3, 2, emb]  # shape(ids) + shape(params)[1:]
    np.testing.assert_array_equal(run(out), np.repeat(ids[..., None], emb, -1).astype(float))


def test_div_with_uneven_shards_of_ten_ids_over_four():
    sizes = [3, 3, 2, 2]
    part, row = partition_assignments(np.arange(10), sizes, "div")
    np.testing.assert_array_equal(part, [0, 0, 0, 1, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(row, [0, 1, 2, 0, 1, 2, 0, 1, 0, 1])


def test_gradient_is_indexed_slices_per_partition_with_only_the_looked_up_rows():
    a = tf.Variable(np.zeros((2, 2)))
    b = tf.Variable(np.zeros((2, 2)))
    ids = tf.placeholder(tf.int32, [None])
    loss = tf.reduce_sum(nn.embedding_lookup([a, b], ids) * np.array([1.0, 2.0]))
    ga, gb = tf.gradients(loss, [a, b])
    assert isinstance(ga, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([ga, gb], {ids: [3, 0, 3]})
    np.testing.assert_array_equal(va.indices, [0])  # id 0 -> shard 0 row 0
    np.testing.assert_array_equal(va.values, [[1.0, 2.0]])
    np.testing.assert_array_equal(vb.indices, [1, 1])  # id 3 -> shard 1 row 1, twice
    np.testing.assert_array_equal(vb.dense_shape, [2, 2])
    dense = tf.convert_to_tensor(gb)  # densified only where a consumer needs a Tensor
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(dense, {ids: [3, 0, 3]}), [[0, 0], [2.0, 4.0]])


def test_max_norm_clips_only_long_rows():
    params = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = run(nn.embedding_lookup(params, [0, 1, 2], max_norm=1.0))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]], rtol=1e-12)
    assert np.array_equal(out[1], params[1])  # short rows are untouched, bit for bit


def test_errors():
    with pytest.raises(ValueError, match='partition_strategy must be "mod" or "div"'):
        nn.embedding_lookup(np.zeros((3, 2)), [0], partition_strategy="hash")
    with pytest.raises(ValueError, match="share every dimension but the first"):
        nn.embedding_lookup([np.zeros((3, 2)), np.zeros((3, 4))], [0])
    with pytest.raises(TypeError, match="ids must be int32 or int64"):
        nn.embedding_lookup(np.zeros((3, 2)), [0.5])
    with pytest.raises(InvalidArgumentError, match=r"id 3 is not in \[0, 3\)"):
        run(nn.embedding_lookup(np.zeros((3, 2)), [0, 3]))


SPARSE_INCOMING = [  # lookups whose incoming gradient is itself sparse (an IndexedSlices from gather)
    GradientCase("lookup_then_gather", lambda p: tf.gather(nn.embedding_lookup(p, [1, 3, 3, 5]), [0, 2, 2]),
                 [np.arange(12.0).reshape(6, 2) / 7.0]),
    GradientCase("lookup_of_lookup", lambda p: nn.embedding_lookup(nn.embedding_lookup(p, [4, 0, 4]), [2, 2, 1]),
                 [np.arange(10.0).reshape(5, 2) / 3.0]),
]


@pytest.mark.parametrize("case", SPARSE_INCOMING, ids=repr)
def test_gradient_through_a_lookup_that_receives_sparse_gradients(case):
    check_gradient(case)
