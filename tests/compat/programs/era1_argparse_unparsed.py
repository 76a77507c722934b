# TF 1.x fully_connected_feed style: parse_known_args, tf.app.run(argv=[argv0] + unparsed), and the
# tutorial's model module (tensorflow.examples.tutorials.mnist.mnist).
import argparse
import sys

import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import mnist

FLAGS = None


def main(_):
    rng = np.random.RandomState(1)
    centers = rng.randn(mnist.NUM_CLASSES, mnist.IMAGE_PIXELS)
    labels = rng.randint(0, mnist.NUM_CLASSES, FLAGS.batch_size * 4)
    images = (centers[labels] + 0.3 * rng.randn(len(labels), mnist.IMAGE_PIXELS)).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        images_placeholder = tf.placeholder(tf.float32, shape=(None, mnist.IMAGE_PIXELS))
        labels_placeholder = tf.placeholder(tf.int32, shape=(None,))
        logits = mnist.inference(images_placeholder, FLAGS.hidden1, FLAGS.hidden2)
        loss = mnist.loss(logits, labels_placeholder)
        train_op = mnist.training(loss, FLAGS.learning_rate)
        eval_correct = mnist.evaluation(logits, labels_placeholder)
        summary = tf.summary.merge_all()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        feed = {images_placeholder: images, labels_placeholder: labels}
        first = sess.run(loss, feed)
        for _ in range(FLAGS.max_steps):
            sess.run(train_op, feed)
        print(sorted(v.op.name for v in tf.trainable_variables()))
        print("loss fell:", sess.run(loss, feed) < first, "summary:", summary is not None)
        print("correct: %d of %d" % (sess.run(eval_correct, feed), len(labels)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--max_steps", type=int, default=30)
    parser.add_argument("--hidden1", type=int, default=32)
    parser.add_argument("--hidden2", type=int, default=16)
    parser.add_argument("--batch_size", type=int, default=25)
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
