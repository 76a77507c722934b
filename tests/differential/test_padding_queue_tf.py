"""tf.PaddingFIFOQueue and tf.train.batch(dynamic_pad=True) against real TensorFlow: components that
vary in size come out of dequeue_many padded with zeros (empty strings) to the batch's largest, along
every dimension declared None; the errors for shapes of unknown rank and for a short closed queue."""

import pytest

from tests.tf_oracle import assert_same_outputs, require_tf, run_in_tf, run_in_tftk

QUEUE = """
q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string, tf.float32], shapes=[[None], [None], [2, None]])
items = [([1, 2, 3], ['a'], [[1.0], [2.0]]), ([4], ['b', 'cc', 'd'], [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]),
         ([], [], np.zeros((2, 0), np.float32))]
with tf.Session() as sess:
    for item in items:
        sess.run(q.enqueue(item))
    ints, strings, floats = sess.run(q.dequeue_many(2))
    left = sess.run(q.size())
    sess.run(q.close())
    last = sess.run(q.dequeue_up_to(5))
outputs = {'ints': ints, 'strings': strings.astype(bytes), 'floats': floats, 'left': left,
           'last_ints': last[0], 'last_floats': last[2]}
"""

BATCH = """
length = tf.placeholder_with_default(3, [])
queue_in = tf.FIFOQueue(5, [tf.int32], shapes=[[]])
n = queue_in.dequeue()
example = {'seq': tf.range(n), 'label': n * 10, 'grid': tf.ones([n, 2]) * tf.cast(n, tf.float32)}
batch = tf.train.batch(example, batch_size=3, dynamic_pad=True)
with tf.Session() as sess:
    sess.run(queue_in.enqueue_many([[2, 4, 1]]))
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    got = sess.run(batch)
    coord.request_stop()
    sess.run(queue_in.close(cancel_pending_enqueues=True))
    coord.join(threads, stop_grace_period_secs=5)
outputs = {'seq': got['seq'], 'label': got['label'], 'grid': got['grid'], 'shape': np.array(batch['seq'].shape.as_list(), dtype=object).astype(str)}
"""

UNKNOWN_RANK = "q = tf.PaddingFIFOQueue(3, [tf.int32], shapes=None)\noutputs = {}\n"
UNKNOWN_RANK_SHAPE = "q = tf.PaddingFIFOQueue(3, [tf.int32], shapes=[tf.TensorShape(None)])\noutputs = {}\n"
SHORT = """
q = tf.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]])
with tf.Session() as sess:
    sess.run(q.enqueue([[1, 2]]))
    sess.run(q.close())
    sess.run(q.dequeue_many(2))
outputs = {}
"""
CASES = {"queue": QUEUE, "train_batch": BATCH, "unknown_rank": UNKNOWN_RANK, "unknown_rank_shape": UNKNOWN_RANK_SHAPE,
         "short_closed_queue": SHORT}


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    return run_in_tf({name: (source, {}) for name, source in CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_padding_queue_equals_tensorflow(tf_results, name):
    expected, got = tf_results[name], run_in_tftk(CASES[name], {})
    assert got.error == expected.error, (got.message, expected.message)
    if expected.error is None:
        assert_same_outputs(expected, got)
