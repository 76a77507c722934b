# tf.compat.v1 program: tf.layers.dense, tf.losses, AdamOptimizer, variable collections.
import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
tf.set_random_seed(0)
x = tf.placeholder(tf.float32, [None, 4])
labels = tf.placeholder(tf.int64, [None])
hidden = tf.layers.dense(x, 8, activation=tf.nn.tanh, name="hidden")
logits = tf.layers.dense(hidden, 3, name="logits")
loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
train = tf.train.AdamOptimizer(0.05).minimize(loss)
rng = np.random.RandomState(0)
data = rng.randn(60, 4).astype(np.float32)
target = (data[:, 0] > 0).astype(np.int64) + (data[:, 1] > 0)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss, {x: data, labels: target})
    for _ in range(40):
        sess.run(train, {x: data, labels: target})
    print(sorted(v.op.name for v in tf.trainable_variables()))
    print("loss fell:", sess.run(loss, {x: data, labels: target}) < first / 2)
