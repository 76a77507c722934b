"""tf.data.AUTOTUNE: TF's value, accepted wherever a parallelism is, results equal to TF's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

_DRAIN = ("it = tf.data.make_one_shot_iterator(ds)\n"
          "nxt = it.get_next()\n"
          "got = []\n"
          "with tf.Session() as sess:\n"
          "    try:\n"
          "        while True:\n"
          "            got.append(sess.run(nxt))\n"
          "    except tf.errors.OutOfRangeError:\n"
          "        pass\n"
          "outputs = {'values': np.array(got), 'autotune': np.array(tf.data.AUTOTUNE),\n"
          "           'same_as_experimental': np.array(tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE)}\n")
PIPELINES = {
    "map_autotune": "tf.data.Dataset.range(7).map(lambda x: x * 3, num_parallel_calls=tf.data.AUTOTUNE)",
    "prefetch_autotune": "tf.data.Dataset.range(5).map(lambda x: x + 1).prefetch(tf.data.AUTOTUNE)",
    "interleave_autotune": "tf.data.Dataset.range(3).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(2), "
                           "cycle_length=1, num_parallel_calls=tf.data.AUTOTUNE)",
}
CASES = {name: (f"ds = {expr}\n" + _DRAIN, {}) for name, expr in PIPELINES.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))
