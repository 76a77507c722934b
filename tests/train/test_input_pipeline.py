"""Queue-based input pipelines: filename producers, readers, decoders and batching, end to end."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def _run_pipeline(fetch, init_locals=True):
    """Everything `fetch` yields until the producers run out (OutOfRangeError)."""
    results = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if init_locals:
            sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                results.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    return results


def test_cifar_style_fixed_length_records_decoded_and_batched_in_order(tmp_path):
    # two files of 3 records: 1 label byte + a 2x2x1 image, as CIFAR-10's binaries (smaller)
    files = []
    for f in range(2):
        path = tmp_path / f"data_batch_{f}.bin"
        path.write_bytes(bytes(b for r in range(3) for b in [f * 3 + r] + [10 * (f * 3 + r) + k for k in range(4)]))
        files.append(str(path))
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.FixedLengthRecordReader(record_bytes=5)
    key, value = reader.read(queue)
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record[0], tf.int32)
    image = tf.reshape(tf.cast(record[1:], tf.float32), [2, 2, 1])
    labels, images = tf.train.batch([label, image], batch_size=2, capacity=6)
    batches = _run_pipeline([labels, images])
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    assert batches[2][1][1].reshape(-1).tolist() == [50.0, 51.0, 52.0, 53.0]
    assert batches[0][1].shape == (2, 2, 2, 1)


def test_reader_keys_counts_and_text_lines_with_a_header(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("x,y,name\n1,2.5,a\n3,,b\r\n")
    queue = tf.train.string_input_producer([str(path)], num_epochs=1, shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    key, value = reader.read(queue)
    x, y, name = tf.decode_csv(value, record_defaults=[[0], [-1.0], [""]])
    rows = _run_pipeline([key, x, y, name])
    assert rows == [[f"{path}:2".encode(), 1, 2.5, b"a"], [f"{path}:3".encode(), 3, -1.0, b"b"]]


def test_decode_csv_errors_name_the_record_and_field():
    line = tf.placeholder(tf.string, [None])
    columns = tf.decode_csv(line, record_defaults=[tf.constant([], tf.int32), [0.0]])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(columns[1], {line: ["1,2", "3,4.5"]}), [2.0, 4.5])
        with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 is required but missing in record 1"):
            sess.run(columns, {line: ["1,2", ",3"]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 2 fields but have 3 in record 0"):
            sess.run(columns, {line: ["1,2,3"]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Field 0 in record 0 is not a valid int32: 'x'"):
            sess.run(columns, {line: ["x,2"]})


def test_decode_raw_byte_order_and_unequal_sizes():
    data = tf.placeholder(tf.string, [None])
    little, big = tf.decode_raw(data, tf.int16), tf.decode_raw(data, tf.int16, little_endian=False)
    with tf.Session() as sess:
        out = sess.run([little, big], {data: [b"\x01\x00\x00\x01", b"\xff\xff\x02\x00"]})
        assert out[0].tolist() == [[1, 256], [-1, 2]] and out[1].tolist() == [[256, 1], [-1, 512]]
        with pytest.raises(tf.errors.InvalidArgumentError, match="requires input strings to all be the same size"):
            sess.run(little, {data: [b"\x01\x00", b"\x01"]})


def test_whole_file_and_tfrecord_readers(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"alpha")
    records = tmp_path / "r.tfrecords"
    with tf.python_io.TFRecordWriter(str(records)) as writer:
        for payload in (b"one", b"two", b"three"):
            writer.write(payload)
    assert list(tf.python_io.tf_record_iterator(str(records))) == [b"one", b"two", b"three"]
    whole = tf.WholeFileReader().read(tf.train.string_input_producer([str(tmp_path / "a.txt")], num_epochs=1))
    assert _run_pipeline(whole) == [(f"{tmp_path / 'a.txt'}".encode(), b"alpha")]


def test_tfrecord_reader_counts_and_epochs(tmp_path):
    records = tmp_path / "r.tfrecords"
    with tf.python_io.TFRecordWriter(str(records)) as writer:
        for payload in (b"one", b"two", b"three"):
            writer.write(payload)
    reader = tf.TFRecordReader()
    _, value = reader.read(tf.train.string_input_producer([str(records)], num_epochs=2))
    count = reader.num_records_produced()
    assert _run_pipeline(value) == [b"one", b"two", b"three"] * 2
    with tf.Session() as sess:
        assert sess.run(count) == 0  # a new session has a new reader


def test_missing_file_fails_naming_it(tmp_path):
    queue = tf.train.string_input_producer([str(tmp_path / "absent.bin")])
    _, value = tf.WholeFileReader().read(queue)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        with pytest.raises(tf.errors.NotFoundError, match="absent.bin; No such file or directory"):
            sess.run(value)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)


def test_shuffle_batch_mixes_and_keeps_every_example_once():
    index = tf.train.range_input_producer(20, num_epochs=1, shuffle=False)
    batch = tf.train.shuffle_batch([index], batch_size=5, capacity=20, min_after_dequeue=5, seed=3,
                                   allow_smaller_final_batch=True)
    seen = np.concatenate([b[0] for b in _run_pipeline([batch])])  # batch([t]) is a tensor, as in TF
    assert sorted(seen.tolist()) == list(range(20)) and seen.tolist() != list(range(20))


def test_slice_input_producer_keeps_rows_together_and_epochs_end():
    images = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
    labels = tf.constant(np.arange(6, dtype=np.int32))
    image, label = tf.train.slice_input_producer([images, labels], num_epochs=2, seed=1)
    rows = _run_pipeline([image, label])
    assert len(rows) == 12
    assert all(img.tolist() == [2.0 * lab, 2.0 * lab + 1] for img, lab in rows)
    assert sorted(int(lab) for _, lab in rows) == sorted(list(range(6)) * 2)


def test_batch_needs_static_shapes_and_readers_need_a_queue():
    unknown = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="All shapes must be fully defined to batch"):
        tf.train.batch([unknown], batch_size=2)
    with pytest.raises(TypeError, match="expects a queue of filenames"):
        tf.TextLineReader().read(["a.csv"])
    with pytest.raises(ValueError, match="requires a non-null input tensor"):
        tf.train.string_input_producer(tf.constant([], dtype=tf.string))


def test_count_up_to_raises_out_of_range_at_the_limit():
    v = tf.Variable(0)
    step = v.count_up_to(2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(step), sess.run(step)] == [0, 1]
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
            sess.run(step)


def test_producers_take_more_inputs_than_their_queue_capacity():
    index = tf.train.range_input_producer(40, num_epochs=1, shuffle=False, capacity=32)
    assert [int(i) for i in _run_pipeline(index)] == list(range(40))
