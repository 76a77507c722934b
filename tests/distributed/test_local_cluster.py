"""tf.test.create_local_cluster: in-process worker and ps servers that run a ps-placed variable."""

import numpy as np
import pytest

import tftk as tf


@pytest.mark.parametrize("num_workers, num_ps", [(1, 1), (2, 2)])
def test_a_worker_session_updates_variables_on_the_ps_tasks(num_workers, num_ps):
    workers, ps_servers = tf.test.create_local_cluster(num_workers, num_ps)
    try:
        assert (len(workers), len(ps_servers)) == (num_workers, num_ps)
        with tf.Graph().as_default():
            variables = []
            for i in range(num_ps):
                with tf.device(f"/job:ps/task:{i}"):
                    variables.append(tf.Variable(np.float32(i + 1), name=f"v{i}"))
            with tf.device("/job:worker/task:0"):
                bumped = [v.assign_add(10.0) for v in variables]
            with tf.Session(workers[0].target) as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(bumped)
                assert sess.run(variables) == [np.float32(i + 11) for i in range(num_ps)]
            # the values live on the ps tasks: a session on another worker sees them
            with tf.Session(workers[-1].target) as sess:
                assert sess.run(variables) == [np.float32(i + 11) for i in range(num_ps)]
    finally:
        for server in workers + ps_servers:
            server.stop()


@pytest.mark.parametrize("num_workers, num_ps", [(0, 1), (1, -1)])
def test_bad_sizes_are_refused(num_workers, num_ps):
    with pytest.raises(ValueError, match="num_workers >= 1 and num_ps >= 0"):
        tf.test.create_local_cluster(num_workers, num_ps)
