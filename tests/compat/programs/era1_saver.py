# TF 1.x: variable_scope/get_variable, Saver save and restore into a fresh graph, argparse flags.
import argparse
import os

import tensorflow as tf


def build():
    with tf.variable_scope("model"):
        w = tf.get_variable("w", [2], initializer=tf.constant_initializer([1.0, 2.0]))
        step = tf.train.get_or_create_global_step()
    return w, step


parser = argparse.ArgumentParser()
parser.add_argument("--model_dir", required=True)
args = parser.parse_args()
path = os.path.join(args.model_dir, "model.ckpt")

with tf.Graph().as_default():
    w, step = build()
    bump = tf.group(tf.assign_add(w, [10.0, 10.0]), tf.assign_add(step, 1))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(bump)
        saved = saver.save(sess, path, global_step=step)
with tf.Graph().as_default():
    w, step = build()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, tf.train.latest_checkpoint(args.model_dir))
        print(os.path.basename(saved), sess.run(w).tolist(), sess.run(step))
