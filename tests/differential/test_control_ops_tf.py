"""TensorArray in while_loop, custom_gradient, hessians and make_template against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(7)
X = {"x": RNG.normal(size=(5, 3)), "w": RNG.normal(size=(3, 3))}

RNN_LOOP = """
x, w = tf.constant(inputs['x']), tf.constant(inputs['w'])
inp = tf.TensorArray(tf.float64, size=5).unstack(x)
out = tf.TensorArray(tf.float64, size=5)
def body(t, h, out):
    h = tf.tanh(tf.matmul(tf.expand_dims(inp.read(t), 0), w) + h)
    return t + 1, h, out.write(t, tf.squeeze(h, 0))
_, h, out = tf.while_loop(lambda t, h, o: t < 5, body, [tf.constant(0), tf.zeros([1, 3], tf.float64), out])
y = out.stack()
g = tf.gradients(tf.reduce_sum(y * y), [x, w])
fetch = {'y': y, 'size': out.size(), 'dx': g[0], 'dw': g[1], 'shape': tf.constant(y.shape.as_list())}
"""

DYNAMIC = """
ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
def body(i, ta):
    return i + 1, ta.write(i, tf.fill([2], tf.cast(i, tf.float32) * 1.5))
_, ta = tf.while_loop(lambda i, ta: i < 4, body, [0, ta])
fetch = {'stack': ta.stack(), 'size': ta.size(), 'concat': ta.concat(), 'gather': ta.gather([3, 0])}
"""

SCATTER_SPLIT = """
x = tf.constant(inputs['x'])
ta = tf.TensorArray(tf.float64, size=4, clear_after_read=False).scatter([2, 0, 1, 3], tf.reshape(x[:4], [4, 3]))
sp = tf.TensorArray(tf.float64, size=3, clear_after_read=False).split(tf.reshape(x[:4], [12]), [4, 4, 4])
y = ta.stack() * 2.0 + tf.reshape(sp.concat(), [4, 3])
fetch = {'y': y, 'read': sp.read(1), 'dx': tf.gradients(tf.reduce_sum(y * y), x)[0]}
"""

ERRORS = {
    "read_unwritten": "fetch = {'y': tf.TensorArray(tf.float32, size=3).read(1)}\n",
    "write_past_end": "fetch = {'y': tf.TensorArray(tf.float32, size=2).write(5, 1.0).stack()}\n",
    "size_required": "fetch = {'y': tf.TensorArray(tf.float32).size()}\n",
}

CUSTOM_GRADIENT = """
@tf.custom_gradient
def clip_grad(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return tf.identity(x * 3.0), grad
x = tf.constant(inputs['x'])
y = clip_grad(x)
fetch = {'y': y, 'dx': tf.gradients(tf.reduce_sum(y * y), x)[0]}
"""

HESSIANS = """
x = tf.constant(inputs['x'][:2, :2])
w = tf.constant(inputs['w'])
h = tf.hessians(tf.reduce_sum(tf.sin(x) * x ** 2) + tf.reduce_sum(tf.matmul(x, x)), [x])[0]
fetch = {'h': h, 'shape': tf.constant(h.shape.as_list())}
"""

TEMPLATE = """
def scale(x):
    w = tf.get_variable('w', [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    return x * w
t = tf.make_template('scale', scale)
a, b = t(tf.ones([3])), t(tf.ones([3]) * 2.0)
t2 = tf.make_template('scale', scale)
c = t2(tf.ones([3]))
names = [v.name for v in t.trainable_variables + t2.trainable_variables]
fetch = {'a': a, 'b': b, 'c': c, 'names': tf.constant(names), 'scope': tf.constant(t2.variable_scope_name)}
"""

ROWS = [Row("tensor_array_rnn_loop", RNN_LOOP, X), Row("tensor_array_dynamic_size", DYNAMIC),
        Row("tensor_array_scatter_split", SCATTER_SPLIT, X), Row("custom_gradient", CUSTOM_GRADIENT, X),
        Row("hessians", HESSIANS, X), Row("make_template", TEMPLATE)] + \
    [Row(name, body) for name, body in ERRORS.items()]

results, test_tftk_agrees_with_tensorflow = table_tests("control", ROWS)
