"""tf.train.basic_train_loop against real TF: steps run in the supervisor's session until it stops."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

SNIPPET = ("import tempfile\n"
           "total = tf.Variable(0, name='total')\n"
           "add = total.assign_add(inputs['step'])\n"
           "sv = tf.train.Supervisor(logdir=tempfile.mkdtemp(), save_summaries_secs=0, save_model_secs=0)\n"
           "seen = []\n"
           "def step(sess, limit, scale=1):\n"
           "    seen.append(sess.run(add) * scale)\n"
           "    if len(seen) >= limit:\n"
           "        sv.request_stop()\n"
           "tf.train.basic_train_loop(sv, step, args=(4,), kwargs={'scale': 10})\n"
           "outputs = {'seen': np.array(seen), 'stopped': np.array(sv.should_stop())}\n")
CASES = {"loop_until_request_stop": (SNIPPET, {"step": np.int32(3)})}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(oracle, name):
    assert_same_outputs(*both_succeeded(oracle, CASES, name))
