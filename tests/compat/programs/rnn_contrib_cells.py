# TF 1.x RNN with tf.contrib.rnn cells: MultiRNNCell of LSTMs through dynamic_rnn, trained briefly.
import numpy as np
import tensorflow as tf

tf.set_random_seed(1)
inputs = tf.placeholder(tf.float32, [None, 5, 2])
targets = tf.placeholder(tf.float32, [None, 1])
cell = tf.contrib.rnn.MultiRNNCell([tf.contrib.rnn.BasicLSTMCell(8), tf.contrib.rnn.LSTMCell(6)])
outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
prediction = tf.layers.dense(outputs[:, -1], 1)
loss = tf.reduce_mean(tf.square(prediction - targets))
train = tf.train.AdamOptimizer(0.02).minimize(loss)
rng = np.random.RandomState(0)
seq = rng.randn(32, 5, 2).astype(np.float32)
tgt = seq.sum(axis=(1, 2))[:, None].astype(np.float32) / 4
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss, {inputs: seq, targets: tgt})
    for _ in range(60):
        sess.run(train, {inputs: seq, targets: tgt})
    last = sess.run(loss, {inputs: seq, targets: tgt})
    print(outputs.shape.as_list(), len(state), type(state[0]).__name__)
    print("loss fell:", last < first / 2)
