# TF 2.x-era compatibility module: import tensorflow.compat.v1, disable_v2_behavior, tf.compat.v1.*.
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.get_variable("w", initializer=tf.constant([[1.0], [-2.0], [0.5]]))
y = tf.nn.relu(tf.matmul(x, w))
loss = tf.reduce_mean(tf.square(y - 1.0))
grad = tf.gradients(loss, w)[0]
update = tf.compat.v1.assign_sub(w, 0.1 * grad)
with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    feed = {x: np.array([[1.0, 0.0, 2.0], [0.5, 1.0, 4.0]], np.float32)}
    for _ in range(3):
        sess.run(update, feed)
    print(" ".join("%.4f" % v for v in sess.run(w).ravel()), "loss=%.4f" % sess.run(loss, feed))
    print(y.shape.as_list(), w.dtype.base_dtype.name, tf.executing_eagerly())
