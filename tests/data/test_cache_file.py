"""Dataset.cache(filename): the file round trip, an interrupted pass resumed, a concurrent writer
refused, and a damaged cache named by file and offset."""

import gc

import numpy as np
import pytest

import tftk as tf
from tftk.data.tfrecord import read_tfrecords

ELEMENTS = [(i, np.arange(i, i + 3, dtype=np.float32) / 2, b"s\0%d" % i, i % 2 == 0) for i in range(6)]


def _pipeline(prefix, calls):
    def count(x):
        calls.append(int(x))
        return x

    ds = tf.data.Dataset.from_tensor_slices(tuple(np.array([e[k] for e in ELEMENTS], dtype=object if k == 2 else None)
                                                  for k in range(4)))
    ds = ds.map(lambda i, v, s, b: (tf.py_func(count, [i], tf.int64), v, s, b)).cache(prefix)
    return ds.make_one_shot_iterator().get_next()


def _drain(sess, nxt, limit=None):
    out = []
    while limit is None or len(out) < limit:
        try:
            i, v, s, b = sess.run(nxt)
        except tf.errors.OutOfRangeError:
            break
        out.append((int(i), v.tolist(), s, bool(b)))
    return out


EXPECTED = [(i, v.tolist(), s, b) for i, v, s, b in ELEMENTS]


def test_round_trip_through_the_file(tmp_path):
    calls = []
    with tf.Graph().as_default():
        with tf.Session() as sess:
            assert _drain(sess, _pipeline(str(tmp_path / "c"), calls)) == EXPECTED
    with tf.Graph().as_default():
        with tf.Session() as sess:
            assert _drain(sess, _pipeline(str(tmp_path / "c"), calls)) == EXPECTED
    assert calls == list(range(6))  # the second pass read the file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.tftk-cache"]


@pytest.mark.parametrize("tail", [b"", b"\x07\x00\x00", b"\x30\x00\x00\x00\x00\x00\x00\x00garbage"],
                         ids=["abandoned", "killed_in_a_header", "killed_in_a_record"])
def test_interrupted_pass_is_resumed(tmp_path, tail):
    calls = []
    with tf.Graph().as_default():
        nxt = _pipeline(str(tmp_path / "c"), calls)
        with tf.Session() as sess:
            assert _drain(sess, nxt, limit=3) == EXPECTED[:3]
        del sess, nxt
        gc.collect()
    partial = tmp_path / "c.tftk-cache.partial"
    with open(partial, "ab") as handle:  # what a process killed while writing leaves behind
        handle.write(tail)
    with tf.Graph().as_default():
        with tf.Session() as sess:
            assert _drain(sess, _pipeline(str(tmp_path / "c"), calls)) == EXPECTED
    assert not partial.exists()
    assert len(list(read_tfrecords(tmp_path / "c.tftk-cache"))) == 6  # the cut record was not kept


def test_second_writer_of_the_same_cache_is_refused(tmp_path):
    calls = []
    with tf.Graph().as_default():
        first, second = _pipeline(str(tmp_path / "c"), calls), _pipeline(str(tmp_path / "c"), calls)
        with tf.Session() as sess:
            sess.run(first)
            with pytest.raises(tf.errors.AlreadyExistsError, match="concurrent caching iterator.*c.tftk-cache.partial"):
                sess.run(second)
            assert _drain(sess, first) == EXPECTED[1:]


def test_damaged_cache_names_the_file_and_offset(tmp_path):
    with tf.Graph().as_default():
        with tf.Session() as sess:
            _drain(sess, _pipeline(str(tmp_path / "c"), []))
    path = tmp_path / "c.tftk-cache"
    offsets = [offset for offset, _ in read_tfrecords(path)]
    data = bytearray(path.read_bytes())
    data[offsets[2] + 20] ^= 1
    path.write_bytes(bytes(data))
    with tf.Graph().as_default():
        with tf.Session() as sess:
            nxt = _pipeline(str(tmp_path / "c"), [])
            assert _drain(sess, nxt, limit=2) == EXPECTED[:2]
            with pytest.raises(tf.errors.DataLossError, match=f"byte {offsets[2]} of .*c.tftk-cache"):
                sess.run(nxt)
