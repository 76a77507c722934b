# TF 0.x op spellings: mul/sub/neg, pack/unpack, concat(dim, values), split(dim, n, value), select.
import numpy as np
import tensorflow as tf

a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
b = tf.constant([[5.0, 6.0], [7.0, 8.0]])
packed = tf.pack([a, b])
first, second = tf.unpack(packed)
joined = tf.concat(1, [a, b])
left, right = tf.split(1, 2, joined)
chosen = tf.select(tf.constant([[True, False], [False, True]]), a, b)
with tf.Session() as sess:
    for t in (tf.mul(a, b), tf.sub(a, b), tf.neg(a), packed, second, joined, right, chosen):
        print(np.array2string(sess.run(t), separator=","))
