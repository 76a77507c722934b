"""Seed 000's trainer.py, unmodified (`import tensorflow as tf`), as one ps and two worker processes."""

import subprocess
import sys
from pathlib import Path

from tests.distributed.conftest import free_port

TRAINER = '''
import tensorflow as tf

tf.app.flags.DEFINE_string("ps_hosts", "", "Comma-separated list of hostname:port pairs")
tf.app.flags.DEFINE_string("worker_hosts", "", "Comma-separated list of hostname:port pairs")
tf.app.flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
tf.app.flags.DEFINE_integer("task_index", 0, "Index of task within the job")
tf.app.flags.DEFINE_string("logdir", "", "shared Supervisor logdir")
FLAGS = tf.app.flags.FLAGS


def main(_):
  cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
  server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
  if FLAGS.job_name == "ps":
    server.join()
  elif FLAGS.job_name == "worker":
    with tf.device(tf.train.replica_device_setter(
        worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
      x = tf.constant([[1.0], [2.0], [3.0]])
      y = tf.constant([[2.0], [4.0], [6.0]])
      w = tf.Variable(0.0)
      loss = tf.reduce_mean(tf.square(w * x - y))
      global_step = tf.Variable(0)
      train_op = tf.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)
      saver = tf.train.Saver()
      summary_op = tf.merge_all_summaries()
      init_op = tf.initialize_all_variables()
    sv = tf.train.Supervisor(is_chief=(FLAGS.task_index == 0), logdir=FLAGS.logdir, init_op=init_op,
                             summary_op=summary_op, saver=saver, global_step=global_step,
                             save_model_secs=600, recovery_wait_secs=0.1)
    with sv.managed_session(server.target) as sess:
      step = 0
      while not sv.should_stop() and step < 200:
        _, step = sess.run([train_op, global_step])
      print("task %d stopped at global step %d, w = %.3f" % (FLAGS.task_index, step, sess.run(w)))
    sv.stop()


if __name__ == "__main__":
  tf.app.run()
'''


def test_trainer_py_runs_as_a_ps_and_two_workers(tmp_path: Path):
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    hosts = [f"--ps_hosts=localhost:{free_port()}",
             f"--worker_hosts=localhost:{free_port()},localhost:{free_port()}", f"--logdir={tmp_path / 'logs'}"]

    def task(job: str, index: int) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "tftk.compat", str(script), *hosts, f"--job_name={job}",
                                 f"--task_index={index}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)

    ps = task("ps", 0)
    workers = [task("worker", 1), task("worker", 0)]  # the non-chief first: it waits for the chief
    try:
        results = [w.communicate(timeout=120) for w in workers]
    finally:
        for process in [ps, *workers]:
            process.kill()
            process.wait()
    assert [w.returncode for w in workers] == [0, 0], [err[-2000:] for _, err in results]
    steps = [int(out.split("global step ")[1].split(",")[0]) for out, _ in results]
    assert all(200 <= s <= 201 for s in steps)  # one shared global step, advanced by both workers
    assert all(out.strip().endswith("w = 2.000") for out, _ in results)  # y = 2x, learnt on the ps
    assert (tmp_path / "logs" / "checkpoint").exists()
