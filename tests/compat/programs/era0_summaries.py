# TF 0.x summaries: scalar_summary, histogram_summary, merge_all_summaries, train.SummaryWriter.
import sys
import tensorflow as tf

logdir = sys.argv[1]
w = tf.Variable(tf.ones([3]), name="w")
loss = tf.reduce_sum(tf.square(w))
tf.scalar_summary("loss", loss)
tf.histogram_summary("w", w)
merged = tf.merge_all_summaries()
step = tf.train.GradientDescentOptimizer(0.25).minimize(loss)
with tf.Session() as sess:
    writer = tf.train.SummaryWriter(logdir, sess.graph)
    sess.run(tf.initialize_all_variables())
    for i in range(3):
        summary, _ = sess.run([merged, step])
        writer.add_summary(summary, i)
    writer.close()
    print("loss %.4f" % sess.run(loss))
