"""Servers and sessions on grpc:// targets: variables live on their task, updates run there."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tftk as tf
from tests.distributed.conftest import free_port, local_cluster


def _outputs_of(workers: list, timeout: float = 120) -> list[str]:
    """Each worker process's stdout; all are killed if one outlives the timeout."""
    try:
        return [w.communicate(timeout=timeout)[0] for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()


def _train_adagrad(target: str = "", cluster=None, steps: int = 20):
    """w -> w - lr * grad / sqrt(accum) on loss w^2, variables on the ps when a cluster is given."""
    tf.reset_default_graph()
    setter = tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster) if cluster else None
    with tf.device(setter):
        w = tf.Variable([1.0, -2.0])
        step = tf.Variable(0)
        train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(tf.square(w)), global_step=step)
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            sess.run(train)
        return sess.run([w, step])


def test_local_server_target_and_variables_that_outlive_sessions(servers):
    server = servers({"local": [f"localhost:{free_port()}"]}, "local", 0)
    assert server.target.startswith("grpc://localhost:") and server.server_def.job_name == "local"
    counter = tf.Variable(0)
    bump = counter.assign_add(5)
    with tf.Session(server.target) as sess:
        sess.run(counter.initializer)
        sess.run(bump)
    with tf.Session(server.target) as sess:  # a new session on the same server sees the variable
        assert sess.run(bump) == 10
    with tf.Session() as sess:  # an in-process session has its own, uninitialised copy
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value Variable"):
            sess.run(counter)


@pytest.fixture
def local_server():
    server = tf.train.Server.create_local_server()
    yield server
    server.stop()


def test_create_local_server_picks_a_free_port(local_server):
    assert not local_server.target.endswith(":0")
    with tf.Session(local_server.target) as sess:
        assert sess.run(tf.constant(3.0) * 2) == 6.0


def test_training_with_variables_on_a_ps_process_equals_the_local_run(servers, spawn_task):
    cluster = local_cluster(ps=1, worker=1)
    spawn_task(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    remote_w, remote_step = _train_adagrad(worker.target, cluster)
    local_w, local_step = _train_adagrad()
    np.testing.assert_array_equal(remote_w, local_w)
    assert remote_step == local_step == 20
    assert remote_w.dtype == np.float32 and remote_w.shape == (2,)


def test_adam_over_two_ps_tasks_equals_the_local_run(servers, spawn_task):
    def train(target="", cluster=None):
        tf.reset_default_graph()
        setter = tf.train.replica_device_setter(cluster=cluster) if cluster else None
        with tf.device(setter):
            a, b = tf.Variable([1.0, 2.0]), tf.Variable([[0.5], [-1.0]])
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.reshape(a, [1, 2]), b) - 3.0))
            train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(10):
                sess.run(train_op)
            return sess.run([a, b])

    cluster = local_cluster(ps=2, worker=1)
    spawn_task(cluster, "ps", 0)
    spawn_task(cluster, "ps", 1)
    worker = servers(cluster, "worker", 0)
    remote, local = train(worker.target, cluster), train()
    for r, l in zip(remote, local):
        np.testing.assert_array_equal(r, l)


def test_two_worker_processes_share_the_ps_variables_and_lose_no_update(spawn_task, tmp_path):
    cluster = local_cluster(ps=1, worker=2)
    spawn_task(cluster, "ps", 0)
    worker_program = textwrap.dedent(f"""
        import sys, tftk as tf
        task = int(sys.argv[1])
        server = tf.train.Server({cluster!r}, job_name="worker", task_index=task)
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task,
                                                      cluster=server.server_def.cluster)):
            total = tf.Variable(0, name="total")
            bump = total.assign_add(1)
        sv = tf.train.Supervisor(is_chief=(task == 0), logdir=None, init_op=tf.global_variables_initializer(),
                                 recovery_wait_secs=0.05, summary_op=None, saver=None)
        sess = sv.prepare_or_wait_for_session(server.target)
        for _ in range(200):
            sess.run(bump)
        print("done")
    """)
    script = tmp_path / "worker.py"
    script.write_text(worker_program)
    workers = [subprocess.Popen([sys.executable, str(script), str(t)], stdout=subprocess.PIPE, text=True)
               for t in (1, 0)]  # the non-chief starts first and waits for the chief's initialisation
    outputs = _outputs_of(workers)
    assert [w.returncode for w in workers] == [0, 0] and outputs == ["done\n", "done\n"]
    with tf.device("/job:ps/task:0"):
        total = tf.Variable(0, name="total")
    with tf.Session(f"grpc://{cluster['ps'][0]}") as sess:
        assert sess.run(total) == 400  # every assign_add ran on the ps, under the variable's lock


def test_saver_round_trip_of_variables_on_another_task(servers, spawn_task, tmp_path):
    cluster = local_cluster(ps=1, worker=1)
    spawn_task(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    saver = tf.train.Saver()
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        path = saver.save(sess, str(tmp_path / "model.ckpt"))
        sess.run(w.assign(tf.zeros([2, 2])))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), [[1.0, 2.0], [3.0, 4.0]])
    assert tf.train.load_variable(path, "Variable").tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_uninitialised_variable_on_another_task_fails_naming_it(servers, spawn_task):
    cluster = local_cluster(ps=1, worker=1)
    spawn_task(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(1.0, name="weights")
    with tf.Session(worker.target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights"):
            sess.run(w + 1.0)
        assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"weights"]
        sess.run(w.initializer)
        value = tf.placeholder(tf.float32, None)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"bad_assign: Assign requires shapes of both "
                                                                  r"tensors to match.*\(on task localhost:"):
            sess.run(tf.assign(w, value, name="bad_assign"), {value: [1.0, 2.0]})


def test_unreachable_task_fails_with_the_address_after_the_timeout():
    port = free_port()
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    with pytest.raises(tf.errors.UnavailableError, match=f"Cannot reach task localhost:{port}.*Start its "
                                                          "tf.train.Server first"):
        tf.Session(f"grpc://localhost:{port}", config=config)


def test_bad_targets_jobs_and_placements_are_named(servers):
    with pytest.raises(ValueError, match="Session target 'http://x:1' is not understood"):
        tf.Session("http://x:1")
    cluster = {"worker": [f"localhost:{free_port()}", f"localhost:{free_port()}"]}
    with pytest.raises(ValueError, match=r"Job 'local' is not in the cluster \(jobs: worker\)"):
        tf.train.Server(cluster, job_name="local", task_index=0)
    with pytest.raises(ValueError, match="Pass task_index: the cluster has several tasks of job 'worker'"):
        tf.train.Server(cluster, job_name="worker")
    server = servers(cluster, "worker", 0)
    with pytest.raises(tf.errors.UnavailableError, match="cannot listen on"):
        tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(1.0, name="w")
    with tf.Session(server.target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot place w on /job:ps/task:0: the "
                                                                  r"cluster has no job 'ps' \(jobs: worker\)"):
            sess.run(w.initializer)


def test_non_chief_gives_up_when_the_model_never_becomes_ready(servers):
    server = servers({"worker": [f"localhost:{free_port()}"]}, "worker", 0)
    tf.Variable(1.0, name="never_initialised")
    sv = tf.train.Supervisor(is_chief=False, logdir=None, recovery_wait_secs=0.01, summary_op=None, saver=None)
    with pytest.raises(tf.errors.DeadlineExceededError, match="variables not initialized: never_initialised"):
        sv.prepare_or_wait_for_session(server.target, max_wait_secs=0.05)


def test_sync_replicas_average_the_gradients_of_two_worker_processes(spawn_task, tmp_path):
    cluster = local_cluster(ps=1, worker=2)
    spawn_task(cluster, "ps", 0)
    worker_program = textwrap.dedent(f"""
        import sys, time, tftk as tf
        task = int(sys.argv[1])
        is_chief = task == 0
        server = tf.train.Server({cluster!r}, job_name="worker", task_index=task)
        with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task,
                                                      cluster=server.server_def.cluster)):
            w = tf.Variable(1.0, name="w")
            global_step = tf.Variable(0, name="global_step")
            target = tf.constant(0.0 if is_chief else 3.0)
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.25), replicas_to_aggregate=2,
                                                 total_num_replicas=2)
            train = opt.minimize(tf.square(w - target), global_step=global_step)
        init_tokens = opt.get_init_tokens_op()
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=None, init_op=tf.global_variables_initializer(),
                                 recovery_wait_secs=0.05, summary_op=None, saver=None, global_step=global_step)
        sess = sv.prepare_or_wait_for_session(server.target)
        if is_chief:
            sess.run(opt.chief_init_op)
            sv.start_queue_runners(sess, [opt.get_chief_queue_runner()])
            sess.run(init_tokens)
        sess.run(train)  # each replica's gradient at w = 1, then one of the two init tokens
        if is_chief:
            deadline = time.monotonic() + 60
            while sess.run(global_step) < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            print(sess.run([global_step, w]))
        sv.stop()
    """)
    script = tmp_path / "sync_worker.py"
    script.write_text(worker_program)
    workers = [subprocess.Popen([sys.executable, str(script), str(t)], stdout=subprocess.PIPE, text=True)
               for t in (1, 0)]
    outputs = _outputs_of(workers)
    assert [w.returncode for w in workers] == [0, 0]
    # one update from the mean of 2 * (1 - 0) and 2 * (1 - 3): w = 1 - 0.25 * (-1) = 1.25
    assert outputs == ["", "[np.int32(1), np.float32(1.25)]\n"]


def test_monitored_training_session_of_a_non_chief_uses_the_chiefs_initialisation(servers):
    server = servers({"worker": [f"localhost:{free_port()}"]}, "worker", 0)
    replicas = [tf.Graph(), tf.Graph()]  # the same program built twice, as two workers would
    for graph in replicas:
        with graph.as_default():
            tf.Variable(tf.random_normal([3]), name="w")
    with replicas[0].as_default(), tf.train.MonitoredTrainingSession(master=server.target, is_chief=True) as chief:
        initial = chief.run("w:0")
        with replicas[1].as_default(), \
                tf.train.MonitoredTrainingSession(master=server.target, is_chief=False) as worker:
            np.testing.assert_array_equal(worker.run("w:0"), initial)  # not re-initialised


def test_a_stopped_server_ends_its_connections():
    from tftk.distributed.remote import Channel
    server = tf.train.Server.create_local_server()
    channel = Channel(server.target[len("grpc://"):])
    assert channel.call("describe")[0]["job"] == "local"
    server.stop()
    with pytest.raises(tf.errors.UnavailableError, match="Lost the connection to task localhost:"):
        channel.call("describe")


def test_a_dead_ps_task_fails_the_run_naming_it(servers, spawn_task):
    cluster = local_cluster(ps=1, worker=1)
    ps = spawn_task(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(1.0, name="w")
    with tf.Session(worker.target) as sess:
        sess.run(w.initializer)
        ps.kill()
        ps.wait()
        with pytest.raises(tf.errors.UnavailableError, match=f"Lost the connection to task {cluster['ps'][0]}"):
            sess.run(w)


def test_a_task_runs_only_state_updates_for_other_processes(local_server):
    from tftk.distributed.remote import Channel
    channel = Channel(local_server.target[len("grpc://"):])
    try:
        reader_read = {"type": "ReaderReadV2", "name": "steal", "attrs": {"reader_kind": "WholeFile"},
                       "inputs": [{"dtype": "string", "shape": [], "variable": "r"},
                                  {"dtype": "string", "shape": [], "variable": "q"}],
                       "outputs": [{"dtype": "string", "shape": []}, {"dtype": "string", "shape": []}]}
        with pytest.raises(tf.errors.PermissionDeniedError, match="ReaderReadV2 \\(steal\\) does not run on a "
                                                                  "task for other processes"):
            channel.call("register_op", key="k", op=reader_read)
        assert channel.call("describe")[0]["job"] == "local"  # the connection stays usable
    finally:
        channel.close()


def test_a_malformed_message_ends_only_that_connection(local_server):
    import socket
    import struct
    from tftk.distributed.remote import Channel
    address = local_server.target[len("grpc://"):]
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as raw:
        head = b'{"method": "write", "name": "v", "arrays": [{"dtype": "<f4", "shape": [-5]}]}'
        raw.sendall(struct.pack("<Q", len(head)) + head)
        assert raw.recv(1) == b""  # the server hung up instead of allocating
    channel = Channel(address)
    assert channel.call("describe")[0]["task"] == 0
    channel.close()


def test_an_op_taking_state_from_two_tasks_is_refused_with_advice(servers, spawn_task):
    cluster = local_cluster(ps=1, worker=1)
    spawn_task(cluster, "ps", 0)
    worker = servers(cluster, "worker", 0)
    with tf.device("/job:ps/task:0"):
        filenames = tf.FIFOQueue(4, tf.string)
    key, value = tf.WholeFileReader().read(filenames)  # the reader on the worker, its queue on the ps
    with tf.Session(worker.target) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="takes state held on several tasks.*"
                                                                  "the reader beside its queue"):
            sess.run(value)
