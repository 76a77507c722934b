"""ClusterSpec, DeviceSpec and replica_device_setter: the pure placement layer."""

import pytest

import tftk as tf


def test_cluster_spec_lists_jobs_tasks_and_addresses():
    cluster = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["p0:2222", "p1:2222"]})
    assert cluster.jobs == ["worker", "ps"]
    assert (cluster.num_tasks("worker"), cluster.num_tasks("ps")) == (3, 2)
    assert cluster.task_address("ps", 1) == "p1:2222"
    assert cluster.job_tasks("worker") == ["w0:2222", "w1:2222", "w2:2222"]
    assert cluster.as_dict() == {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["p0:2222", "p1:2222"]}
    assert tf.train.ClusterSpec(cluster) == cluster and tf.ClusterSpec is tf.train.ClusterSpec


def test_sparse_jobs_keep_their_task_indices():
    cluster = tf.train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}})
    assert cluster.task_indices("worker") == [1, 3]
    assert cluster.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert cluster.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}}


@pytest.mark.parametrize("jobs, message", [
    ({"worker": ["no-port"]}, "Task 0 of job 'worker' has address 'no-port'; expected 'host:port'"),
    ({"worker": "w0:2222"}, "Tasks of job 'worker' must be a list"),
    ({"": ["w0:2222"]}, "job names must be non-empty strings"),
])
def test_malformed_clusters_name_the_bad_entry(jobs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        tf.train.ClusterSpec(jobs)


def test_lookups_of_missing_jobs_and_tasks_say_what_exists():
    cluster = tf.train.ClusterSpec({"ps": ["p0:1"]})
    with pytest.raises(ValueError, match=r"No such job in cluster: 'worker' \(jobs: ps\)"):
        cluster.num_tasks("worker")
    with pytest.raises(ValueError, match=r"No task with index 2 in job 'ps': it has tasks \[0\]"):
        cluster.task_address("ps", 2)


def test_device_spec_parses_merges_and_prints():
    spec = tf.DeviceSpec.from_string("/job:ps/replica:0/task:1/device:CPU:0")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == ("ps", 0, 1, "CPU", 0)
    assert tf.DeviceSpec.from_string("/gpu:1").to_string() == "/device:GPU:1"
    merged = tf.DeviceSpec(job="worker", task=0).merge_from(tf.DeviceSpec.from_string("/task:3/cpu:0"))
    assert merged.to_string() == "/job:worker/task:3/device:CPU:0"


def test_replica_device_setter_puts_variables_on_ps_tasks_and_the_rest_on_the_worker():
    cluster = tf.train.ClusterSpec({"ps": ["p0:1", "p1:1"], "worker": ["w0:1", "w1:1"]})
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:1", cluster=cluster)):
        v1, v2, v3 = tf.Variable(1.0), tf.Variable(2.0), tf.Variable(3.0)
        total = v1 + v2
        with tf.device("/job:ps/task:1"):
            pinned = tf.Variable(4.0)
    assert [v.device for v in (v1, v2, v3)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert total.device == "/job:worker/task:1"
    assert pinned.device == "/job:ps/task:1"  # an inner scope's fields win over the setter's


def test_replica_device_setter_without_ps_tasks_places_nothing():
    assert tf.train.replica_device_setter(cluster={"worker": ["w0:1"]}) is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    with tf.device(tf.train.replica_device_setter(ps_tasks=0)):
        assert tf.constant(1.0).device == ""


def test_replica_device_setter_with_a_custom_strategy_and_ps_ops():
    setter = tf.train.replica_device_setter(ps_tasks=3, ps_strategy=lambda op: 2, ps_ops=["VariableV2", "Const"])
    with tf.device(setter):
        v = tf.Variable(1.0)
        c = tf.constant(2.0)
        s = v + c
    assert (v.device, c.device, s.device) == ("/job:ps/task:2", "/job:ps/task:2", "/job:worker")


def test_colocate_with_overrides_device_functions_so_slots_follow_their_variable():
    cluster = {"ps": ["p0:1", "p1:1"], "worker": ["w0:1"]}
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        a, b = tf.Variable([1.0]), tf.Variable([2.0])
        global_step = tf.Variable(0)
        opt = tf.train.AdamOptimizer(0.1)
        opt.minimize(tf.reduce_sum(a * b), global_step=global_step)
        with tf.colocate_with(b):
            near_b = tf.constant(1.0)
        sync = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=1)
        sync.minimize(tf.reduce_sum(a), global_step=global_step)
    assert (a.device, b.device, global_step.device) == ("/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0")
    assert [opt.get_slot(a, n).device for n in ("m", "v")] == ["/job:ps/task:0"] * 2
    assert [opt.get_slot(b, n).device for n in ("m", "v")] == ["/job:ps/task:1"] * 2
    assert near_b.device == "/job:ps/task:1"
    assert sync._local_step.device == "/job:worker/task:0"  # each replica's own step
