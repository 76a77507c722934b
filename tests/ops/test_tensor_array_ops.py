"""TensorArray, custom_gradient, identity_n, hessians and make_template: values, errors, gradients."""

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(3)


def arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


def _rnn(x, w):
    """A dynamic_rnn-style loop: read step t from one TensorArray, write the state to another."""
    steps = x.shape.as_list()[0]
    inp = tf.TensorArray(tf.float64, size=steps).unstack(x)
    out = tf.TensorArray(tf.float64, size=steps)

    def body(t, h, out):
        h = tf.tanh(tf.matmul(tf.expand_dims(inp.read(t), 0), w) + h)
        return t + 1, h, out.write(t, tf.squeeze(h, 0))
    _, _, out = tf.while_loop(lambda t, h, o: t < steps, body,
                              [tf.constant(0), tf.zeros([1, w.shape.as_list()[1]], tf.float64), out])
    return out.stack()


@tf.custom_gradient
def _scaled_identity(x):
    return tf.identity(x), lambda dy: dy * 2.0


GRADIENT_CASES = [
    GradientCase("tensor_array_rnn_loop", _rnn, [arr(4, 3), arr(3, 2)]),
    GradientCase("tensor_array_scatter_gather",
                 lambda x: tf.TensorArray(tf.float64, size=4).scatter([3, 1, 0, 2], x).gather([0, 0, 2]),
                 [arr(4, 2)]),
    GradientCase("tensor_array_write_read_outside_loop",
                 lambda x, y: tf.TensorArray(tf.float64, size=2).write(0, x).write(1, y).read(1) * x,
                 [arr(3), arr(3)]),
    GradientCase("tensor_array_split_concat",
                 lambda x: tf.TensorArray(tf.float64, size=2).split(x, [3, 3]).concat() * x, [arr(6, 2)]),
    GradientCase("identity_n", lambda x, y: tf.identity_n([x, y])[1] * x, [arr(2), arr(2)]),
    GradientCase("hessians_of_cubic", lambda x: tf.hessians(tf.reduce_sum(x ** 3 * tf.sin(x)), x)[0],
                 [arr(2, 2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


def test_custom_gradient_replaces_the_rule():
    x = tf.constant([1.0, -2.0])
    y = _scaled_identity(x)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    with tf.Session() as s:
        np.testing.assert_array_equal(s.run([y, g]), [[1.0, -2.0], [2.0, 2.0]])


def test_custom_gradient_with_a_variable_needs_variables_argument():
    @tf.custom_gradient
    def f(x):
        v = tf.get_variable("v_cg", [], initializer=tf.ones_initializer())
        return x * v, lambda dy: dy
    with pytest.raises(TypeError, match="must accept a keyword argument 'variables'"):
        f(tf.constant(1.0))


def test_custom_gradient_passes_variables_and_uses_their_gradients():
    @tf.custom_gradient
    def f(x):
        v = tf.get_variable("v_cg2", [], initializer=tf.constant_initializer(3.0))

        def grad(dy, variables):
            return dy * 10.0, [dy * 100.0]
        return x * v, grad
    with tf.Graph().as_default():
        x = tf.constant(2.0)
        y = f(x)
        v = tf.trainable_variables()[0]
        gx, gv = tf.gradients(y, [x, v])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run([y, gx, gv]) == [6.0, 10.0, 100.0]


def test_tensor_array_element_shape_is_learned_inside_the_loop():
    ta = tf.TensorArray(tf.float32, size=3)
    _, ta = tf.while_loop(lambda i, ta: i < 3, lambda i, ta: (i + 1, ta.write(i, tf.ones([2, 5]))), [0, ta])
    assert ta.stack().shape.as_list() == [3, 2, 5]
    assert ta.element_shape.as_list() == [2, 5]


@pytest.mark.parametrize("build, message", [
    (lambda: tf.TensorArray(tf.float32, size=3).read(1),
     "Could not read from TensorArray index 1 because it has not yet been written to"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(0, 1.0).read(4), "index 4 but array size is: 2"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(2, 1.0).stack(),
     "Tried to write to index 2 but array is not resizeable and size is: 2"),
    (lambda: tf.TensorArray(tf.float32, size=2).write(0, [1.0]).write(1, [1.0, 2.0]).stack(),
     "Inconsistent shapes"),
])
def test_tensor_array_errors_name_the_problem(build, message):
    with tf.Graph().as_default():
        try:
            t = build()
        except ValueError as e:
            assert message in str(e)
            return
        with tf.Session() as s, pytest.raises(InvalidArgumentError, match=message):
            s.run(t)


def test_tensor_array_split_with_unequal_lengths_is_refused():
    with pytest.raises(ValueError, match="lengths \\[1, 2\\] must all be equal"):
        tf.TensorArray(tf.float32, size=2).split(tf.ones([3]), [1, 2])


def test_hessians_need_a_known_shape():
    x = tf.placeholder(tf.float64, [None])
    with pytest.raises(ValueError, match="fully known static shape"):
        tf.hessians(tf.reduce_sum(x * x), x)


def test_make_template_shares_variables_between_calls():
    with tf.Graph().as_default():
        t = tf.make_template("dense", lambda x: x * tf.get_variable("w", [], initializer=tf.ones_initializer()))
        t(tf.constant(1.0))
        t(tf.constant(2.0))
        assert [v.name for v in tf.trainable_variables()] == ["dense/w:0"]
        assert t.variable_scope_name == "dense"
        assert [v.name for v in t.trainable_variables] == ["dense/w:0"]
