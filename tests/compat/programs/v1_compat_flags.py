# tf.compat.v1 program with absl-style flags through tf.compat.v1.flags and tf.compat.v1.app.run.
import tensorflow.compat.v1 as tf

tf.compat.v1.flags.DEFINE_integer("n", 4, "How many terms.")
FLAGS = tf.compat.v1.flags.FLAGS


def main(_):
    tf.disable_eager_execution()
    i0 = tf.constant(0)
    total0 = tf.constant(0.0)
    _, total = tf.while_loop(lambda i, t: i < FLAGS.n,
                             lambda i, t: (i + 1, t + tf.cast(i, tf.float32) ** 2), [i0, total0])
    picked = tf.cond(total > 10.0, lambda: total * 2.0, lambda: total - 1.0)
    with tf.Session() as sess:
        print("n=%d total=%.1f picked=%.1f" % (FLAGS.n, sess.run(total), sess.run(picked)))


if __name__ == "__main__":
    tf.app.run(main)
