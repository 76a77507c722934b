"""The allocator setting (tftk.client.allocator): set once by the first Session, freed step buffers
stay in the process (no fresh page faults each step), the step's values unchanged."""

import os

import pytest

from tests.engine.test_config import run_python

pytestmark = pytest.mark.skipif(not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"),
                                reason="the setting applies to glibc's malloc only")

# A step-like loop: twenty 1 MB arrays allocated and freed ten times after one warm-up round; the
# page faults of those ten rounds, the return values of the first and a second call of the setting,
# and the result of a small training graph (to compare with and without the setting).
PROGRAM = """
    import json, resource
    import numpy as np
    import tftk as tf
    from tftk.client import allocator
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    w = tf.Variable(tf.ones([4, 2]))
    loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2)
    step = tf.train.AdamOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(step)
        values = sess.run(w).tolist()
    def burst():
        arrays = [np.ones((256, 1024), np.float32) for _ in range(20)]
        del arrays
    burst()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        burst()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    print(json.dumps({"faults": faults, "again": allocator.keep_freed_buffers(), "values": values}))
"""


@pytest.fixture(scope="module")
def runs():
    """The program with the setting (the default) and with TFTK_MALLOC_TUNING=0."""
    return {tuning: run_python(f"    import os; os.environ['TFTK_MALLOC_TUNING'] = '{tuning}'" + PROGRAM)
            for tuning in ("1", "0")}


@pytest.mark.parametrize("tuning, few_faults", [("1", True), ("0", False)])
def test_freed_buffers_stay_in_the_process_only_with_the_setting(runs, tuning, few_faults):
    # 200 MB allocated in 10 rounds: 51,200 pages when each round maps fresh memory, ~0 when reused
    assert (runs[tuning]["faults"] < 1000) is few_faults


@pytest.mark.parametrize("tuning", ["1", "0"])
def test_the_setting_is_applied_once(runs, tuning):
    assert runs[tuning]["again"] is False  # the Session already made the one call


def test_the_setting_leaves_the_values_unchanged(runs):
    assert runs["1"]["values"] == runs["0"]["values"]
