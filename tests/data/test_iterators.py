"""Iterators as graph ops: initialization, placeholders, re-initialization, handles, end of data,
shuffle semantics, background threads and the errors a user sees."""

import gc
import threading
import time

import numpy as np
import pytest

import tftk as tf


def drain(sess, tensor, feed=None, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(tensor, feed))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("dataset did not end")


def test_initializable_iterator_takes_placeholders_when_initialized():
    n = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(n).map(lambda x: x * 10).make_initializable_iterator()
    x = it.get_next()
    with tf.Session() as s:
        s.run(it.initializer, {n: 3})
        assert drain(s, x) == [0, 10, 20]
        s.run(it.initializer, {n: 2})
        assert drain(s, x) == [0, 10]


def test_uninitialized_iterator_fails_with_failed_precondition():
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    with tf.Session() as s, pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
        s.run(it.get_next())


def test_end_of_data_is_out_of_range_and_stays_there():
    x = tf.data.Dataset.range(1).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(x) == 0
        for _ in range(2):
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                s.run(x)


def test_reinitializable_iterator_switches_datasets():
    train = tf.data.Dataset.range(5)
    val = tf.data.Dataset.range(100, 102)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    x = it.get_next()
    init_train, init_val = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as s:
        s.run(init_train)
        assert s.run(x) == 0
        s.run(init_val)
        assert drain(s, x) == [100, 101]
        s.run(init_train)
        assert drain(s, x) == [0, 1, 2, 3, 4]


def test_make_initializer_checks_types():
    it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    with pytest.raises(TypeError, match="Expected output types"):
        it.make_initializer(tf.data.Dataset.from_tensors(1.0))


def test_feedable_iterator_reads_the_iterator_its_handle_names():
    a = tf.data.Dataset.range(3).repeat().make_one_shot_iterator()
    b = tf.data.Dataset.range(10, 20).make_initializable_iterator()
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, a.output_types, a.output_shapes)
    x = it.get_next()
    with tf.Session() as s:
        ha, hb = s.run([a.string_handle(), b.string_handle()])
        s.run(b.initializer)
        got = [s.run(x, {handle: h}) for h in (ha, hb, ha, hb, ha, ha)]
    assert got == [0, 10, 1, 11, 2, 0]


def test_sessions_hold_separate_iterator_state():
    x = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as s1, tf.Session() as s2:
        assert [s1.run(x), s1.run(x), s2.run(x)] == [0, 1, 0]


def test_nested_structures_and_static_shapes():
    ds = tf.data.Dataset.from_tensor_slices({"img": np.zeros((6, 4, 4), np.float32),
                                             "lab": (np.arange(6), np.ones(6, np.int32))}).batch(4)
    assert ds.output_types == {"img": tf.float32, "lab": (tf.int64, tf.int32)}
    assert ds.output_shapes["img"].as_list() == [None, 4, 4]
    assert ds.output_classes["lab"][0] is tf.Tensor
    el = ds.make_one_shot_iterator().get_next()
    assert el["img"].shape.as_list() == [None, 4, 4]
    dropped = tf.data.Dataset.range(9).batch(4, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [4]
    with tf.Session() as s:
        first = s.run(el)
    assert first["img"].shape == (4, 4, 4) and first["lab"][1].dtype == np.int32


def test_compat_v1_spellings():
    ds = tf.data.Dataset.range(2)
    x = tf.data.make_one_shot_iterator(ds).get_next()
    it = tf.data.make_initializable_iterator(ds)
    with tf.Session() as s:
        s.run(it.initializer)
        assert s.run([x, it.get_next()]) == [0, 0]


# ---- shuffle ---------------------------------------------------------------------------------

def _shuffled(seed, buffer, n=20, epochs=1, reshuffle=None, graph_seed=None):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(n).shuffle(buffer, seed=seed, reshuffle_each_iteration=reshuffle)
        x = ds.repeat(epochs).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            return [int(v) for v in drain(s, x)]


def test_shuffle_is_a_permutation_and_fixed_seeds_replay():
    a = _shuffled(seed=7, buffer=5)
    assert sorted(a) == list(range(20)) and a != list(range(20))
    assert _shuffled(seed=7, buffer=5) == a
    assert _shuffled(seed=8, buffer=5) != a
    assert _shuffled(seed=None, buffer=5, graph_seed=3) == _shuffled(seed=None, buffer=5, graph_seed=3)


def test_shuffle_buffer_bounds_how_far_elements_move():
    order = _shuffled(seed=1, buffer=3, n=50)
    # with a buffer of 3, element i cannot come out before position i - 2
    assert all(pos >= value - 2 for pos, value in enumerate(order))
    assert _shuffled(seed=1, buffer=1) == list(range(20))


def test_reshuffle_each_iteration():
    two = _shuffled(seed=4, buffer=20, n=10, epochs=2)
    assert sorted(two[:10]) == sorted(two[10:]) == list(range(10))
    assert two[:10] != two[10:]
    same = _shuffled(seed=4, buffer=20, n=10, epochs=2, reshuffle=False)
    assert same[:10] == same[10:]


# ---- threads ---------------------------------------------------------------------------------

def test_parallel_map_runs_on_several_threads_and_keeps_order():
    seen, lock, running, most_at_once = set(), threading.Lock(), [0], [0]

    def slow(x):
        with lock:
            seen.add(threading.get_ident())
            running[0] += 1
            most_at_once[0] = max(most_at_once[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return x

    from tftk.ops.script_ops import py_func
    ds = tf.data.Dataset.range(16).map(lambda x: py_func(slow, [x], tf.int64), num_parallel_calls=4)
    x = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        got = drain(s, x)
    assert got == list(range(16))
    assert len(seen) >= 2 and threading.get_ident() not in seen
    assert most_at_once[0] >= 2  # calls overlapped (counted, not timed: a loaded machine stays correct)


def test_prefetch_produces_ahead_on_a_background_thread():
    produced = []

    def gen():
        for i in range(5):
            produced.append(i)
            yield i

    x = tf.data.Dataset.from_generator(gen, tf.int64, []).prefetch(3).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(x) == 0
        deadline = time.time() + 2
        while len(produced) < 4 and time.time() < deadline:
            time.sleep(0.01)
        assert len(produced) >= 4  # the consumer took one; the thread filled the buffer of 3 ahead
        assert drain(s, x) == [1, 2, 3, 4]


# ---- errors ----------------------------------------------------------------------------------

def test_map_function_that_fails_names_the_transformation_and_element():
    ds = tf.data.Dataset.from_tensor_slices(np.array([4, 4, 3])).map(lambda n: tf.reshape(tf.range(n), [2, 2]))
    x = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        s.run(x), s.run(x)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Dataset.map\(\) failed on element 2"):
            s.run(x)


def test_map_function_must_return_tensors_and_filter_a_bool():
    with pytest.raises(TypeError, match="Dataset.map"):
        tf.data.Dataset.range(3).map(lambda x: (x, None))
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tf.data.Dataset.range(3).flat_map(lambda x: x)


def test_batch_of_unequal_shapes_says_which_component():
    ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.zeros(tf.reshape(tf.cast(x, tf.int32), [1]))).batch(2)
    with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError,
                                          match="Cannot batch tensors with different shapes in component 0"):
        s.run(ds.make_one_shot_iterator().get_next())


def test_generator_yielding_the_wrong_shape():
    ds = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [1, 2, 3]]), tf.int32, [2])
    x = ds.make_one_shot_iterator().get_next()
    with tf.Session() as s:
        s.run(x)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            s.run(x)


def test_corrupt_tfrecord_names_file_and_offset(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as w:
        w.write(b"good")
        w.write(b"bad!")
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 0xFF  # a payload byte of the second record
    open(path, "wb").write(bytes(data))
    x = tf.data.TFRecordDataset(path).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert s.run(x) == b"good"
        with pytest.raises(tf.errors.DataLossError, match=r"corrupted record at byte 20 of .*r.tfrecord"):
            s.run(x)


def test_missing_file_is_not_found():
    x = tf.data.TFRecordDataset("/nonexistent/x.tfrecord").make_one_shot_iterator().get_next()
    with tf.Session() as s, pytest.raises(tf.errors.NotFoundError, match="/nonexistent/x.tfrecord"):
        s.run(x)


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_tfrecord_compression_round_trip(tmp_path, compression):
    path = str(tmp_path / "c.tfrecord")
    options = tf.python_io.TFRecordOptions(compression)
    records = [b"x" * i for i in range(0, 300, 37)]
    with tf.python_io.TFRecordWriter(path, options) as w:
        for r in records:
            w.write(r)
    assert list(tf.python_io.tf_record_iterator(path, options)) == records
    x = tf.data.TFRecordDataset(path, compression_type=compression).make_one_shot_iterator().get_next()
    with tf.Session() as s:
        assert drain(s, x) == records


def test_sparse_elements_through_reinitializable_and_feedable_iterators():
    recs = [tf.train.Example(features=tf.train.Features(feature={"v": tf.train.Feature(
        int64_list=tf.train.Int64List(value=list(range(i))))})).SerializeToString() for i in range(4)]
    ds = tf.data.Dataset.from_tensor_slices(recs).map(
        lambda r: tf.parse_single_example(r, {"v": tf.VarLenFeature(tf.int64)})["v"]).batch(2)
    assert ds.output_classes is tf.SparseTensor and ds.output_shapes.as_list() == [None, None]
    it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes, output_classes=ds.output_classes)
    x = it.get_next()
    assert isinstance(x, tf.SparseTensor)
    with tf.Session() as s:
        s.run(it.make_initializer(ds))
        first = s.run(x)
    assert first.indices.tolist() == [[1, 0]] and first.dense_shape.tolist() == [2, 1]
    with pytest.raises(TypeError, match="padded_batch"):
        tf.data.Dataset.from_tensor_slices(recs).map(
            lambda r: tf.parse_single_example(r, {"v": tf.VarLenFeature(tf.int64)})).padded_batch(2)


def test_file_cache_is_written_by_a_complete_pass_and_read_by_later_sessions(tmp_path):
    calls = []

    def count(x):
        calls.append(1)
        return x

    prefix = str(tmp_path / "cache")

    def pipeline():
        ds = tf.data.Dataset.range(5).map(lambda x: (tf.py_func(count, [x], tf.int64), tf.as_string(x)))
        return ds.cache(prefix).make_one_shot_iterator().get_next()

    with tf.Graph().as_default():
        x = pipeline()
        with tf.Session() as s:
            s.run(x)  # a partial pass writes no cache; its partial file stays, to be resumed
        assert not (tmp_path / "cache.tftk-cache").exists()
        del s
        gc.collect()
        assert [p.name for p in tmp_path.iterdir()] == ["cache.tftk-cache.partial"]
        with tf.Session() as s:
            first = drain(s, x)
    assert (tmp_path / "cache.tftk-cache").exists() and len(calls) == 6
    with tf.Graph().as_default():
        x = pipeline()
        with tf.Session() as s:
            again = drain(s, x)
    assert len(calls) == 6  # read from the file, the map function did not run
    assert [(int(a), b) for a, b in again] == [(int(a), b) for a, b in first] == \
        [(i, str(i).encode()) for i in range(5)]


def test_queue_based_tfrecord_reader_reads_gzip_records(tmp_path):
    path = str(tmp_path / "r.tfrecord.gz")
    options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for payload in (b"one", b"two"):
            writer.write(payload)
    _, value = tf.TFRecordReader(options=options).read(tf.train.string_input_producer([path], num_epochs=1))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = [sess.run(value), sess.run(value)]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(value)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert got == [b"one", b"two"]
