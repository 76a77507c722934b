"""batch_join, shuffle_batch_join and the maybe_* batchers against real TF: every example drained
through the queue runners (multiset compared, since threads interleave), output structure and
static shapes, and the keep_input checks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf, run_in_tftk

# Two sources of rows (each readable once), x in [0, 10) and [100, 106).
_SOURCES = ("a = tf.train.limit_epochs(tf.constant(inputs['a']), num_epochs=1)\n"
            "b = tf.train.limit_epochs(tf.constant(inputs['b']), num_epochs=1)\n")
_DRAIN = ("flat = batch['x'] if isinstance(batch, dict) else (batch[0] if isinstance(batch, list) else batch)\n"
          "with tf.Session() as sess:\n"
          "    sess.run(tf.local_variables_initializer())\n"
          "    coord = tf.train.Coordinator()\n"
          "    threads = tf.train.start_queue_runners(sess, coord)\n"
          "    got = []\n"
          "    try:\n"
          "        while True:\n"
          "            got.append(sess.run(flat))\n"
          "    except tf.errors.OutOfRangeError:\n"
          "        pass\n"
          "    coord.request_stop()\n"
          "    coord.join(threads)\n"
          "outputs = {'values': np.sort(np.concatenate(got)), 'kind': np.array(type(batch).__name__ if isinstance(batch, (dict, list)) else 'tensor'),\n"
          "           'shape': np.array(str(flat.shape))}\n")
EXPRESSIONS = {
    "batch_join_many": "tf.train.batch_join([[a], [b]], 4, enqueue_many=True, allow_smaller_final_batch=True)",
    "batch_join_dict": "tf.train.batch_join([{'x': a, 'y': a * 2}, {'x': b, 'y': b}], 3, enqueue_many=True, "
                       "allow_smaller_final_batch=True)",
    "batch_join_pairs": "tf.train.batch_join([[a, a], [b, b + 1]], 5, enqueue_many=True, allow_smaller_final_batch=True)",
    "shuffle_batch_join": "tf.train.shuffle_batch_join([[a], [b]], 4, capacity=20, min_after_dequeue=2, seed=3, "
                          "enqueue_many=True, allow_smaller_final_batch=True)",
    "maybe_batch_vector_keep": "tf.train.maybe_batch([a], tf.constant(inputs['keep_a']), 2, enqueue_many=True, "
                               "allow_smaller_final_batch=True)",
    "maybe_batch_scalar_keep": "tf.train.maybe_batch([a], tf.reduce_sum(a) > 0, 3, enqueue_many=True, "
                               "allow_smaller_final_batch=True)",
    "maybe_batch_single_examples": "tf.train.maybe_batch([tf.train.limit_epochs(tf.constant(7), 4)], "
                                   "tf.constant(True), 2, allow_smaller_final_batch=True)",
    "maybe_batch_join": "tf.train.maybe_batch_join([[a[:6]], [b]], tf.constant(inputs['keep_b']), 3, enqueue_many=True, "
                        "allow_smaller_final_batch=True)",
    "maybe_shuffle_batch": "tf.train.maybe_shuffle_batch([b], 2, 10, 1, tf.constant(inputs['keep_b']), seed=1, enqueue_many=True, "
                           "allow_smaller_final_batch=True)",
    "maybe_shuffle_batch_join": "tf.train.maybe_shuffle_batch_join([[a], [b]], 4, 30, 2, tf.constant(True), "
                                "seed=2, enqueue_many=True, allow_smaller_final_batch=True)",
}
INPUTS = {"a": np.arange(10, dtype=np.int64), "b": np.arange(100, 106, dtype=np.int64),
          "keep_a": np.arange(10) % 3 != 1, "keep_b": np.array([True, False, False, True, True, False])}
CASES = {name: (_SOURCES + f"batch = {expr}\n" + _DRAIN, INPUTS) for name, expr in EXPRESSIONS.items()}

ERROR_EXPRESSIONS = {
    "vector_keep_without_enqueue_many": "tf.train.maybe_batch([a[0]], a > 3, 2)",
    "matrix_keep": "tf.train.maybe_batch([a], tf.ones([2, 2], tf.bool), 2, enqueue_many=True)",
    "unknown_rank_keep": "tf.train.maybe_batch([a], tf.placeholder(tf.bool), 2, enqueue_many=True)",
}
ERROR_CASES = {name: (_SOURCES + f"{expr}\noutputs = {{}}\n", INPUTS) for name, expr in ERROR_EXPRESSIONS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf({**CASES, **ERROR_CASES})


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_keep_input_errors_match_tensorflow(oracle, name):
    expected, got = oracle[name], run_in_tftk(*ERROR_CASES[name])
    assert expected.error == got.error == "ValueError"
    assert got.message == expected.message
