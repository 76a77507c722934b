"""Map (and filter) vectorisation (data/vectorize.py): a function over a whole chunk gives exactly
the elements the function gives one by one, which ops vectorise, and errors still name the element."""

import numpy as np
import pytest

import tftk as tf
import tftk.data.vectorize as vectorize_module


def _records():
    return [tf.train.Example(features=tf.train.Features(feature={
        "img": tf.train.Feature(float_list=tf.train.FloatList(value=[i + k / 4 for k in range(4)])),
        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i - 3])),
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n%d" % i]))})).SerializeToString()
        for i in range(11)]


def _parse(r):
    return tf.parse_single_example(r, {"img": tf.FixedLenFeature([2, 2], tf.float32),
                                       "y": tf.FixedLenFeature([], tf.int64),
                                       "s": tf.FixedLenFeature([], tf.string)})


CASES = {  # name -> (dataset, whether its (last) map vectorises)
    "parse_strings": (lambda: tf.data.Dataset.from_tensor_slices(_records()).map(_parse), True),
    "reshape_scale_cast": (lambda: tf.data.Dataset.from_tensor_slices(_records()).map(_parse).map(
        lambda d: (tf.reshape(d["img"], [4, 1]) * 2.0 - 1.0, tf.cast(d["y"], tf.float32) / 3.0)), True),
    "broadcast_captured": (lambda: tf.data.Dataset.from_tensor_slices(np.arange(24.).reshape(6, 2, 2)).map(
        lambda x: tf.maximum(x, tf.constant([1., 7.], tf.float64)) + tf.constant(0.5, tf.float64)), True),
    "comparisons": (lambda: tf.data.Dataset.range(9).map(lambda x: (tf.equal(x % 3, 0), tf.logical_not(x > 4))),
                    True),
    "reshape_minus_one": (lambda: tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(3, 4)).map(
        lambda x: tf.reshape(x, [2, -1])), True),
    "filter": (lambda: tf.data.Dataset.range(20).filter(lambda x: tf.logical_and(x % 3 > 0, x < 15)), True),
    "filter_parsed": (lambda: tf.data.Dataset.from_tensor_slices(_records()).map(_parse).filter(
        lambda d: tf.greater(d["y"], 0)), True),
    "filter_random_per_element": (lambda: tf.data.Dataset.range(20).filter(
        lambda x: tf.random_uniform([], seed=2) < 2.0), False),
    "random_stays_per_element": (lambda: tf.data.Dataset.range(5).map(
        lambda x: tf.cast(x, tf.float32) + tf.random_uniform([], seed=1) * 0), False),
    "sparse_stays_per_element": (lambda: tf.data.Dataset.from_tensor_slices(_records()).map(
        lambda r: tf.parse_single_example(r, {"y": tf.VarLenFeature(tf.int64)})["y"]), False),
    "reduction_stays_per_element": (lambda: tf.data.Dataset.from_tensor_slices(np.arange(6.).reshape(3, 2)).map(
        tf.reduce_sum), False),
}


def _drain(build, batch=None):
    with tf.Graph().as_default():
        ds = build()
        vectorized = ds.vectorized
        if batch:
            ds = ds.batch(batch)
        nxt = ds.make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            while True:
                try:
                    out.append(sess.run(nxt))
                except tf.errors.OutOfRangeError:
                    return vectorized, out


def _same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, tf.SparseTensorValue):
        return all(np.array_equal(x, y) for x, y in zip(a, b))
    return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)


@pytest.mark.parametrize("batch", [None, 4], ids=["elements", "map_and_batch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vectorised_map_equals_per_element_map(monkeypatch, name, batch):
    build, expect_vectorized = CASES[name]
    vectorized, got = _drain(build, batch)
    assert vectorized == expect_vectorized
    monkeypatch.setattr(vectorize_module, "vectorize", lambda function: None)
    _, expected = _drain(build, batch)
    assert len(got) == len(expected) and all(_same(a, b) for a, b in zip(got, expected))


def test_failing_filter_names_the_element_and_the_elements_before_it_arrive():
    ds = tf.data.Dataset.range(10).map(lambda x: tf.reshape(tf.fill([1], x), [])).filter(
        lambda x: tf.reshape(tf.fill(tf.reshape(tf.cast(x // 6, tf.int32) + 1, [1]), True), []))
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [int(sess.run(nxt)) for _ in range(6)] == list(range(6))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset.filter.* failed on element 6"):
            sess.run(nxt)


@pytest.mark.parametrize("batch", [None, 3])
def test_failing_element_is_named_and_the_elements_before_it_arrive(batch):
    records = _records()
    records[7] = tf.train.Example().SerializeToString()  # no "y": required
    ds = tf.data.Dataset.from_tensor_slices(records).map(lambda r: tf.parse_single_example(
        r, {"y": tf.FixedLenFeature([], tf.int64)})["y"])
    assert ds.vectorized
    nxt = (ds.batch(batch) if batch else ds).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        before = [sess.run(nxt).tolist() for _ in range(7 // (batch or 1))]
        with pytest.raises(tf.errors.InvalidArgumentError, match="failed on element 7 of its input.*Feature: y"):
            sess.run(nxt)
    expected = list(range(-3, 4))
    assert before == ([expected[i:i + batch] for i in range(0, 6, batch)] if batch else expected)
