"""An iterator's position through tf.train.Saver (make_saveable_from_iterator): a restored iterator
hands out exactly the elements the saved one would have handed out next."""

import numpy as np
import pytest

import tftk as tf


def _records(folder):
    paths = []
    for f in range(3):
        path = str(folder / f"part-{f}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as w:
            for i in range(20):
                w.write(tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[f * 100 + i, i / 2])),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})).SerializeToString())
        paths.append(path)
    return paths


def _parse(record):
    d = tf.parse_single_example(record, {"x": tf.FixedLenFeature([2], tf.float32),
                                         "y": tf.FixedLenFeature([], tf.int64)})
    return d["x"] * 2.0, d["y"]


PIPELINES = {  # name -> (dataset builder taking the records folder, needs a fed placeholder)
    "shuffle_unseeded_repeat": lambda d: tf.data.Dataset.range(50).shuffle(16).repeat(3).batch(4),
    "shuffle_seeded_no_reshuffle": lambda d: tf.data.Dataset.range(40).shuffle(
        8, seed=3, reshuffle_each_iteration=False).repeat(2),
    "parallel_map_prefetch": lambda d: tf.data.Dataset.range(100).map(
        lambda x: (x * 3, tf.as_string(x)), num_parallel_calls=3).prefetch(5),
    "records_parse_shuffle_batch": lambda d: tf.data.TFRecordDataset(_records(d)).map(
        _parse, num_parallel_calls=2).shuffle(10).repeat().batch(7).prefetch(2),
    "interleave_parallel_files": lambda d: tf.data.Dataset.from_tensor_slices(_records(d)).interleave(
        tf.data.TFRecordDataset, cycle_length=2, block_length=3, num_parallel_calls=2).map(_parse),
    "list_files_unseeded": lambda d: (_records(d), tf.data.Dataset.list_files(str(d / "*.tfrecord")).flat_map(
        tf.data.TFRecordDataset))[1],
    "filter_padded_batch": lambda d: tf.data.Dataset.range(60).filter(lambda x: x % 3 > 0).map(
        lambda x: tf.fill(tf.reshape(tf.cast(x % 4 + 1, tf.int32), [1]), x)).padded_batch(3, [None]),
}


def _build(name, folder, initializable):
    graph = tf.Graph()
    with graph.as_default():
        dataset = PIPELINES[name](folder)
        if initializable:
            count = tf.placeholder(tf.int64, [])
            dataset = dataset.take(count)
            iterator = dataset.make_initializable_iterator()
        else:
            count, iterator = None, dataset.make_one_shot_iterator()
        nxt = iterator.get_next()
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, tf.data.experimental.make_saveable_from_iterator(iterator))
        saver = tf.train.Saver()
    return graph, iterator, count, nxt, saver


def _flat(value):
    return [np.asarray(v).tolist() for v in (value if isinstance(value, tuple) else (value,))]


@pytest.mark.parametrize("initializable", [False, True], ids=["one_shot", "initializable"])
@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_restored_iterator_continues_with_the_next_element(tmp_path, name, initializable):
    graph, iterator, count, nxt, saver = _build(name, tmp_path, initializable)
    with tf.Session(graph=graph) as sess:
        if initializable:
            sess.run(iterator.initializer, {count: 45})
        for _ in range(7):
            sess.run(nxt)
        path = saver.save(sess, str(tmp_path / "ckpt" / "model"))
        expected = [_flat(sess.run(nxt)) for _ in range(5)]
        rewound = None
        saver.restore(sess, path)  # the same session goes back to the saved position
        rewound = [_flat(sess.run(nxt)) for _ in range(5)]
    graph, iterator, count, nxt, saver = _build(name, tmp_path, initializable)
    with tf.Session(graph=graph) as sess:  # a new process would do the same: nothing is initialized
        saver.restore(sess, path)
        restored = [_flat(sess.run(nxt)) for _ in range(5)]
    assert restored == expected and rewound == expected


def test_restored_position_at_the_end_stays_at_the_end(tmp_path):
    graph, _, _, nxt, saver = _build("parallel_map_prefetch", tmp_path, False)
    with tf.Session(graph=graph) as sess:
        for _ in range(100):
            sess.run(nxt)
        path = saver.save(sess, str(tmp_path / "model"))
    graph, _, _, nxt, saver = _build("parallel_map_prefetch", tmp_path, False)
    with tf.Session(graph=graph) as sess:
        saver.restore(sess, path)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)


def _write(path, count):
    with tf.python_io.TFRecordWriter(path) as w:
        for i in range(count):
            w.write(b"record %d" % i)


def _saved_position(tmp_path, records, position):
    """A checkpoint of an iterator over `records` records of a file, `position` elements in."""
    path = str(tmp_path / "data.tfrecord")
    _write(path, records)
    with tf.Graph().as_default():
        it = tf.data.TFRecordDataset(path).make_one_shot_iterator()
        nxt = it.get_next()
        saver = tf.train.Saver({"position": tf.data.experimental.make_saveable_from_iterator(it)})
        with tf.Session() as sess:
            for _ in range(position):
                sess.run(nxt)
            return path, saver.save(sess, str(tmp_path / "model"))


@pytest.mark.parametrize("scope, records_now, message", [
    ("", 10, "is at element 30, past the end of its dataset"),  # the file shrank since
    ("other", 40, "does not describe an iterator of this graph"),  # saved from another graph's iterator
])
def test_state_that_does_not_fit_is_a_clear_error(tmp_path, scope, records_now, message):
    path, checkpoint = _saved_position(tmp_path, 40, 30)
    _write(path, records_now)
    with tf.Graph().as_default(), tf.name_scope(scope or None):
        it = tf.data.TFRecordDataset(path).make_one_shot_iterator()
        nxt = it.get_next()
        saver = tf.train.Saver({"position": tf.data.experimental.make_saveable_from_iterator(it)})
        with tf.Session() as sess:
            saver.restore(sess, checkpoint)
            with pytest.raises(tf.errors.DataLossError, match=message):
                sess.run(nxt)


def test_saveable_of_a_string_handle_iterator_is_refused():
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, tf.int64, [])
    with pytest.raises(ValueError, match="from_string_handle has no state of its own"):
        tf.data.experimental.make_saveable_from_iterator(it)


def test_without_the_collection_the_default_saver_leaves_the_iterator_out(tmp_path):
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(5).make_one_shot_iterator()
        tf.data.experimental.make_saveable_from_iterator(it)
        v = tf.Variable(1.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "model"))
    assert [name for name, _ in tf.train.list_variables(path)] == ["Variable"]
    assert tf.contrib.data.make_saveable_from_iterator is tf.data.experimental.make_saveable_from_iterator
