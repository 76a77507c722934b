"""interleave with num_parallel_calls: the open datasets are read on background threads, in TF's
order (the oracle rows of test_dataset_oracle.py check it against TF), or in arrival order with
deterministic=False; a reader's error reaches the consumer."""

import threading
import time

import numpy as np
import pytest

import tftk as tf


def _drain(ds, convert=int):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(convert(sess.run(nxt)))
            except tf.errors.OutOfRangeError:
                return out


def _sources(threads, delay=0.0):
    def gen(x):
        for i in range(int(x)):
            threads.add(threading.current_thread().name)
            time.sleep(delay * (x % 2))  # odd sources are slow
            yield int(x) * 100 + i
    return lambda x: tf.data.Dataset.from_generator(gen, tf.int64, [], args=(x,))


@pytest.mark.parametrize("parallel, deterministic", [(None, None), (3, None), (3, True)])
def test_parallel_reads_keep_tfs_order(parallel, deterministic):
    threads: set = set()
    ds = tf.data.Dataset.range(1, 6).interleave(_sources(threads), cycle_length=3, block_length=2,
                                                num_parallel_calls=parallel, deterministic=deterministic)
    sequential = _drain(tf.data.Dataset.range(1, 6).interleave(_sources(set()), cycle_length=3, block_length=2))
    assert _drain(ds) == sequential
    on_readers = {name for name in threads if name.startswith("tftk-data-interleave")}
    assert bool(on_readers) == (parallel is not None)


def test_nondeterministic_interleave_takes_what_is_ready():
    ds = tf.data.Dataset.range(1, 5).interleave(_sources(set(), delay=0.2), cycle_length=4, block_length=1,
                                                num_parallel_calls=4, deterministic=False)
    got = _drain(ds)
    expected = [x * 100 + i for x in range(1, 5) for i in range(x)]
    assert sorted(got) == expected
    assert got.index(401) < got.index(300)  # the fast source 4 is not held back by the slow source 3


def test_error_in_a_parallel_reader_reaches_the_consumer(tmp_path):
    good = str(tmp_path / "good.tfrecord")
    with tf.python_io.TFRecordWriter(good) as w:
        w.write(b"x")
    files = np.array([good, str(tmp_path / "missing.tfrecord")], dtype=object)
    ds = tf.data.Dataset.from_tensor_slices(files).interleave(tf.data.TFRecordDataset, cycle_length=2,
                                                              num_parallel_calls=2)
    with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
        _drain(ds, bytes)
