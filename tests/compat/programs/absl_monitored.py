# TF 1.x absl-style flags with tf.flags, tf.logging and MonitoredTrainingSession + StopAtStepHook.
import tensorflow as tf

tf.flags.DEFINE_integer("last_step", 5, "Stop after this global step.")
FLAGS = tf.flags.FLAGS


def main(_):
    tf.logging.set_verbosity(tf.logging.ERROR)
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(4.0)
    loss = tf.square(w)
    train = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.last_step)]
    with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
        while not sess.should_stop():
            _, value = sess.run([train, w])
    print("w=%.5f" % value)


if __name__ == "__main__":
    tf.app.run(main)
