"""Op facts are data: toy op types registered in a test module run everywhere the engine runs ops.

Session.run, a traced run (the interpreter back end), a while_loop body (a sub-plan) and a task
of another process (the ps runs `remote` ops for the worker), with no change to tftk itself.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tests.distributed.conftest import local_cluster
from tests.engine.toy_ops import toy_accumulate, toy_affine

ROOT = Path(__file__).resolve().parents[2]


def test_session_run_runs_a_toy_op():
    x = tf.placeholder(tf.float32, [3])
    y = toy_affine(x, 2.0, 1.0)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: [0, 1, 2]}), [1, 3, 5])
    assert y.op.name == "ToyAffine" and y.op.type == "ToyAffine"


def test_a_traced_run_times_and_records_the_toy_op():
    x = tf.placeholder(tf.float32, [2])
    y = toy_affine(toy_affine(x, 3.0, 0.0, name="triple"), 1.0, -1.0, name="less_one")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(y, {x: [1, 2]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
    np.testing.assert_array_equal(got, [2, 5])
    names = [n.node_name for n in metadata.step_stats.dev_stats[0].node_stats]
    assert names.index("triple") < names.index("less_one")


def test_a_while_loop_body_runs_the_toy_op():
    x0 = tf.placeholder(tf.float32, [])
    _, x = tf.while_loop(lambda i, x: i < 4, lambda i, x: (i + 1, toy_affine(x, 2.0, 1.0)), [0, x0])
    with tf.Session() as sess:
        assert sess.run(x, {x0: 0.0}) == 15.0  # 0 -> 1 -> 3 -> 7 -> 15


def test_a_stateful_toy_op_updates_its_variable():
    v = tf.Variable([1.0, 2.0])
    bump = toy_accumulate(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(bump), [3, 4])
        np.testing.assert_array_equal(sess.run(bump), [5, 6])
        np.testing.assert_array_equal(sess.run(v), [5, 6])


@pytest.fixture
def ps_with_toy_ops():
    """A ps task in its own process that has imported the toy ops; a worker server in this one."""
    cluster = local_cluster(ps=1, worker=1)
    code = ("import tests.engine.toy_ops, tftk as tf; "
            f"tf.train.Server({cluster!r}, job_name='ps', task_index=0).join()")
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        yield cluster, worker
    finally:
        worker.stop()
        child.kill()
        child.wait()


def test_a_remote_task_runs_a_toy_op_declared_remote(ps_with_toy_ops):
    cluster, worker = ps_with_toy_ops
    tf.reset_default_graph()
    with tf.device("/job:ps/task:0"):
        v = tf.Variable([1.0, 2.0], name="v")
        bump = toy_accumulate(v, [1.0, 1.0])
        local_only = toy_accumulate(v, [1.0, 1.0], op_type="ToyLocalOnly")
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(bump), [3, 4])
        with pytest.raises(tf.errors.PermissionDeniedError, match="ToyLocalOnly .* does not run on a task"):
            sess.run(local_only)
    with tf.Session(f"grpc://{cluster['ps'][0]}") as sess:  # the update landed on the ps
        np.testing.assert_array_equal(sess.run(v), [3, 4])


def test_the_sub_plan_entry_point_compiles_a_graph_once_and_runs_it_on_arrays():
    """What tf.data's map functions build on: a graph traced with placeholder inputs, compiled
    once through KernelContext.function, called per element with arrays."""
    from tftk.client.executor import KernelContext
    graph = tf.Graph()
    with graph.as_default():
        a, b = tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [])
        out = toy_affine(a * b, 1.0, 1.0)
    function = KernelContext(None).function(graph, [a, b], [out, a])
    for scale in (1.0, 3.0):
        got, echoed = function(np.array([1, 2], np.float32), np.float32(scale))
        np.testing.assert_array_equal(got, [scale + 1, 2 * scale + 1])
        np.testing.assert_array_equal(echoed, [1, 2])
