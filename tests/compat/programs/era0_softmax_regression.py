# TF 0.x MNIST-for-beginners softmax regression: placeholder("float"), -reduce_sum(y_ * log(y)).
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
centers = rng.randn(10, 784)
labels = rng.randint(0, 10, 500)
images = centers[labels] + 0.5 * rng.randn(500, 784)
onehot = np.eye(10)[labels]

x = tf.placeholder("float", [None, 784])
W = tf.Variable(tf.zeros([784, 10]))
b = tf.Variable(tf.zeros([10]))
y = tf.nn.softmax(tf.matmul(x, W) + b)
y_ = tf.placeholder("float", [None, 10])
cross_entropy = -tf.reduce_sum(y_ * tf.log(y + 1e-9))
train_step = tf.train.GradientDescentOptimizer(0.001).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))

sess = tf.Session()
sess.run(tf.initialize_all_variables())
for i in range(20):
    batch = slice(25 * i, 25 * i + 25)
    sess.run(train_step, feed_dict={x: images[batch], y_: onehot[batch]})
print("accuracy %.2f" % sess.run(accuracy, feed_dict={x: images, y_: onehot}))
