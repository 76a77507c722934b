# tf.compat.v1 program: a cumulative sum written into a tf.TensorArray inside tf.while_loop, with
# gradients through it.
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
x = tf.placeholder(tf.float32, [5, 2])
ta_in = tf.TensorArray(tf.float32, size=5).unstack(x)
ta_out = tf.TensorArray(tf.float32, size=5)


def body(i, total, out):
    total = total + ta_in.read(i) * tf.cast(i + 1, tf.float32)
    return i + 1, total, out.write(i, total)


_, final, ta_out = tf.while_loop(lambda i, *_: i < 5, body, [tf.constant(0), tf.zeros([2]), ta_out])
stacked = ta_out.stack()
grad = tf.gradients(tf.reduce_sum(stacked * stacked), x)[0]
with tf.Session() as sess:
    feed = {x: np.arange(10, dtype=np.float32).reshape(5, 2) / 10}
    s, f, g = sess.run([stacked, final, grad], feed)
    print(" ".join("%.2f" % v for v in s.ravel()))
    print(" ".join("%.2f" % v for v in f), " ".join("%.3f" % v for v in g.ravel()))
    print(stacked.shape.as_list(), sess.run(ta_out.size(), feed))
