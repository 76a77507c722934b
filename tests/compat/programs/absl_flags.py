# TF >= 1.5 absl-style flags: tf.app.flags.DEFINE_*, --noflag booleans, unknown flags refused.
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 2, "Training steps.")
flags.DEFINE_float("learning_rate", 0.5, "Learning rate.")
flags.DEFINE_boolean("use_bias", True, "Whether to add a bias.")
flags.DEFINE_string("name", "run", "Run name.")
FLAGS = flags.FLAGS


def main(argv):
    x = tf.constant([[1.0], [2.0]])
    w = tf.Variable([[0.0]])
    y = tf.matmul(x, w) + (tf.Variable(0.0) if FLAGS.use_bias else 0.0)
    loss = tf.reduce_mean(tf.square(y - tf.constant([[2.0], [4.0]])))
    step = tf.train.GradientDescentOptimizer(FLAGS.learning_rate / 10).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(FLAGS.steps):
            sess.run(step)
        print("%s steps=%d bias=%s loss=%.4f rest=%s" % (FLAGS.name, FLAGS.steps, FLAGS.use_bias,
                                                         sess.run(loss), argv[1:]))


if __name__ == "__main__":
    tf.app.run()
