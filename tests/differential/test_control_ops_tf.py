"""TensorArray in while_loop, custom_gradient, hessians and make_template against real TensorFlow."""

import numpy as np
import pytest

from tests.differential.op_tables import compare
from tests.tf_oracle import run_in_tf, run_in_tftk

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
with tf.Session() as s:
    outputs = dict(zip(['y', 'size', 'dx', 'dw', 'shape'],
                       s.run([y, out.size(), g[0], g[1]]) + [np.array(y.shape.as_list())]))
"""

DYNAMIC = """
ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
def body(i, ta):
    return i + 1, ta.write(i, tf.fill([2], tf.cast(i, tf.float32) * 1.5))
_, ta = tf.while_loop(lambda i, ta: i < 4, body, [0, ta])
with tf.Session() as s:
    outputs = dict(zip(['stack', 'size', 'concat', 'gather'],
                       s.run([ta.stack(), ta.size(), ta.concat(), ta.gather([3, 0])])))
"""

SCATTER_SPLIT = """
x = tf.constant(inputs['x'])
ta = tf.TensorArray(tf.float64, size=4).scatter([2, 0, 1, 3], tf.reshape(x[:4], [4, 3]))
sp = tf.TensorArray(tf.float64, size=3).split(tf.reshape(x[:4], [12]), [4, 4, 4])
y = ta.stack() * 2.0 + tf.reshape(sp.concat(), [4, 3])
with tf.Session() as s:
    outputs = {'y': s.run(y), 'read': s.run(sp.read(1)), 'dx': s.run(tf.gradients(tf.reduce_sum(y * y), x)[0])}
"""

ERRORS = {
    "read_unwritten": "ta = tf.TensorArray(tf.float32, size=3)\nwith tf.Session() as s:\n"
                      "    s.run(ta.read(1))\noutputs = {}\n",
    "write_past_end": "ta = tf.TensorArray(tf.float32, size=2).write(5, 1.0)\nwith tf.Session() as s:\n"
                      "    s.run(ta.stack())\noutputs = {}\n",
    "size_required": "tf.TensorArray(tf.float32)\noutputs = {}\n",
}

CUSTOM_GRADIENT = """
@tf.custom_gradient
def clip_grad(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return tf.identity(x * 3.0), grad
x = tf.constant(inputs['x'])
y = clip_grad(x)
with tf.Session() as s:
    outputs = {'y': s.run(y), 'dx': s.run(tf.gradients(tf.reduce_sum(y * y), x)[0])}
"""

HESSIANS = """
x = tf.constant(inputs['x'][:2, :2])
w = tf.constant(inputs['w'])
h = tf.hessians(tf.reduce_sum(tf.sin(x) * x ** 2) + tf.reduce_sum(tf.matmul(x, x)), [x])[0]
with tf.Session() as s:
    outputs = {'h': s.run(h), 'shape': np.array(h.shape.as_list())}
"""

TEMPLATE = """
def scale(x):
    w = tf.get_variable('w', [3], initializer=tf.constant_initializer([1.0, 2.0, 3.0]))
    return x * w
t = tf.make_template('scale', scale)
a, b = t(tf.ones([3])), t(tf.ones([3]) * 2.0)
t2 = tf.make_template('scale', scale)
c = t2(tf.ones([3]))
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    outputs = {'a': s.run(a), 'b': s.run(b), 'nvars': np.array(len(tf.trainable_variables())),
               'names': np.array([v.name for v in tf.trainable_variables()])}
"""

CASES = {
    "tensor_array_rnn_loop": (RNN_LOOP, X),
    "tensor_array_dynamic_size": (DYNAMIC, {}),
    "tensor_array_scatter_split": (SCATTER_SPLIT, X),
    "custom_gradient": (CUSTOM_GRADIENT, X),
    "hessians": (HESSIANS, X),
    "make_template": (TEMPLATE, {}),
    **{name: (src, {}) for name, src in ERRORS.items()},
}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
