# TF 1.0-1.4 style: flags parsed by argparse into a global, then tf.app.run() with the full argv.
import argparse
import tensorflow as tf

FLAGS = None


def main(argv):
    with tf.Session() as sess:
        total = sess.run(tf.reduce_sum(tf.fill([FLAGS.size], FLAGS.value)))
    print("data_dir=%s total=%.1f rest=%s" % (FLAGS.data_dir, total, argv[1:]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=str, default="/tmp/data")
    parser.add_argument("--size", type=int, default=3)
    parser.add_argument("--value", type=float, default=1.5)
    FLAGS = parser.parse_args()
    tf.app.run()
