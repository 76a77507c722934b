"""The examples of seeds 000 and 003 for the core ops, with the outputs printed there.

Seed 000 uses pre-1.0 spellings (tf.concat(dim, values), tf.split(dim, num, value), tf.pack);
these tests use the TF 1.x argument order of the same calls.
"""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.ops import array_ops, gather_ops, sequence_ops, slicing_ops, sparse_ops
from tftk.ops.control_flow_ops import case, cond, group, tuple as tf_tuple


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


def test_concat(sess):
    t1, t2 = [[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]
    assert sess.run(tf.concat([t1, t2], 0)).tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
    assert sess.run(tf.concat([t1, t2], 1)).tolist() == [[1, 2, 3, 7, 8, 9], [4, 5, 6, 10, 11, 12]]


def test_squeeze_shapes(sess):
    t = tf.zeros([1, 2, 1, 3, 1, 1])
    assert tf.squeeze(t).shape.as_list() == [2, 3]
    assert tf.squeeze(t, [2, 4]).shape.as_list() == [1, 2, 3, 1]
    assert sess.run(tf.shape(tf.squeeze(t, [2, 4]))).tolist() == [1, 2, 3, 1]


def test_split_5x30_into_three(sess):
    value = tf.zeros([5, 30])
    split0, split1, split2 = array_ops.split(value, 3, 1)
    assert sess.run(tf.shape(split0)).tolist() == [5, 10]
    assert split2.shape.as_list() == [5, 10]


@pytest.mark.parametrize("shape,axis,expected", [
    ([2], 0, [1, 2]), ([2], 1, [2, 1]), ([2], -1, [2, 1]),
    ([2, 3, 5], 0, [1, 2, 3, 5]), ([2, 3, 5], 2, [2, 3, 1, 5]), ([2, 3, 5], 3, [2, 3, 5, 1]),
])
def test_expand_dims_shapes(sess, shape, axis, expected):
    out = tf.expand_dims(tf.zeros(shape), axis)
    assert sess.run(tf.shape(out)).tolist() == expected


def test_slice_examples(sess):
    assert sess.run(slicing_ops.slice([[1, 2, 3], [4, 5, 6]], [1, 0], [1, 2])).tolist() == [[4, 5]]
    y = np.arange(24).reshape([2, 3, 4])
    assert sess.run(slicing_ops.slice(y, [1, 0, 0], [1, 2, 3])).tolist() == [[[12, 13, 14], [16, 17, 18]]]
    a = np.array([[1, 2, 3, 4, 5], [4, 5, 6, 7, 8], [9, 10, 11, 12, 13]])
    assert sess.run(slicing_ops.slice(a, [1, 2], [-1, 2])).tolist() == [[6, 7], [11, 12]]


def test_stack_examples(sess):
    x, y, z = [1, 4], [2, 5], [3, 6]
    assert sess.run(tf.stack([x, y, z])).tolist() == [[1, 4], [2, 5], [3, 6]]
    assert sess.run(tf.stack([x, y, z], axis=1)).tolist() == [[1, 2, 3], [4, 5, 6]]


def test_gather_example(sess):
    temp = sequence_ops.range(0, 10) * 10 + tf.constant(1, shape=[10])
    temp2 = gather_ops.gather(temp, [1, 5, 9])
    assert sess.run(temp).tolist() == [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]
    assert sess.run(temp2).tolist() == [11, 51, 91]


def test_segment_sum_example(sess):
    c = tf.constant([[9, 29, 30, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    y = tf.segment_sum(c, tf.constant([0, 0, 1]))
    assert sess.run(y).tolist() == [[13, 32, 32, 5], [5, 6, 7, 8]]


@pytest.mark.parametrize("axis,values,shape", [
    (1, [[4.0], [6.0]], (2, 1)),
    (0, [[4.0, 4.0, 6.0]], (1, 3)),
])
def test_reduce_max_keepdims_2x3(sess, axis, values, shape):
    x = tf.constant([[1, 4, 3], [4, 2, 6]], dtype=tf.float32)
    y = tf.reduce_max(x, axis=axis, keepdims=True)
    assert x.shape == (2, 3)
    assert sess.run(y).tolist() == values
    assert y.shape == shape


@pytest.mark.parametrize("axis,values,shape", [
    (0, [[[22, 33, 44], [55, 66, 77]]], (1, 2, 3)),
    (1, [[[4, 5, 6]], [[55, 66, 77]]], (2, 1, 3)),
    (2, [[[3], [6]], [[44], [77]]], (2, 2, 1)),
])
def test_reduce_max_keepdims_2x2x3(sess, axis, values, shape):
    x = tf.constant([[[1, 2, 3], [4, 5, 6]], [[22, 33, 44], [55, 66, 77]]], dtype=tf.float32)
    y = tf.reduce_max(x, axis=axis, keepdims=True)
    assert sess.run(y).tolist() == values
    assert y.shape == shape


def test_sparse_to_dense_one_hot_labels(sess):
    batch_size = 6
    label = tf.expand_dims(tf.constant([0, 2, 3, 6, 7, 9]), 1)
    index = tf.expand_dims(sequence_ops.range(0, batch_size), 1)
    concated = tf.concat([index, label], 1)
    assert sess.run(concated).tolist() == [[0, 0], [1, 2], [2, 3], [3, 6], [4, 7], [5, 9]]
    onehot = sparse_ops.sparse_to_dense(concated, tf.stack([batch_size, 10]), 1.0, 0.0)
    expected = np.zeros((6, 10), np.float32)
    expected[np.arange(6), [0, 2, 3, 6, 7, 9]] = 1.0
    assert onehot.shape == (6, 10)
    np.testing.assert_array_equal(sess.run(onehot), expected)


def test_group_and_tuple(sess):
    w = tf.Variable(1)
    mul = tf.multiply(w, 2)
    add = tf.add(w, 2)
    grouped = group(mul, add)
    tupled = tf_tuple([mul, add])
    sess.run(tf.global_variables_initializer())
    assert sess.run(grouped) is None
    assert sess.run(tupled) == [2, 3]


def test_cond_example(sess):
    x, y, z = tf.constant(2.0), tf.constant(5.0), tf.constant(3.0)
    result = cond(x < y, lambda: tf.add(x, z), lambda: tf.square(y))
    assert sess.run(result) == 5.0
    assert sess.run(result, {x: 7.0}) == 25.0


@pytest.mark.parametrize("pairs_as_dict", [False, True])
def test_case_example(sess, pairs_as_dict):
    x = tf.placeholder(tf.int32, [])
    pairs = [(tf.equal(x, 1), lambda: tf.constant(10)), (tf.equal(x, 2), lambda: tf.constant(20))]
    result = case(dict(pairs) if pairs_as_dict else pairs, default=lambda: tf.constant(-1))
    assert [sess.run(result, {x: v}) for v in (1, 2, 3)] == [10, 20, -1]


def test_gradients_of_unrelated_variable(sess):
    w1 = tf.Variable([[1, 2]])
    w2 = tf.Variable([[3, 4]])
    res = tf.matmul(w1, [[2], [1]])
    sess.run(tf.global_variables_initializer())
    grads = tf.gradients(res, [w1, w2])
    assert grads[1] is None
    with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
        sess.run(grads)
    re = sess.run(tf.gradients(res, [w1]))
    assert len(re) == 1 and re[0].dtype == np.int32
    assert re[0].tolist() == [[2, 1]]
