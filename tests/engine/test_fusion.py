"""Plan-time fusion: bias add + ReLU, and a max-pool gradient + ReLU gradient, run as one kernel only where
nothing else sees the first op's result."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.client import executor


def _plan_types(sess) -> list[str]:
    return [op.type for op in list(sess._plans.values())[-1].ops]


def _graph():
    x = tf.placeholder(tf.float64, [None, 3])
    b = tf.constant(np.array([-1.0, 0.0, 1.0]))
    pre = tf.nn.bias_add(x * 1.0, b)
    return x, pre, tf.nn.relu(pre)


VALUE = np.array([[0.5, -2.0, 3.0], [1.5, 0.25, -4.0]])
EXPECTED = np.maximum(VALUE + [-1.0, 0.0, 1.0], 0)


def test_a_bias_add_read_only_by_relu_is_fused_and_exact():
    x, _, y = _graph()
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: VALUE}), EXPECTED)
        assert "BiasAddRelu" in _plan_types(sess) and "BiasAdd" not in _plan_types(sess)


def test_no_fusion_when_the_sum_is_fetched_too():
    x, pre, y = _graph()
    with tf.Session() as sess:
        got_pre, got_y = sess.run([pre, y], {x: VALUE})
        assert "BiasAddRelu" not in _plan_types(sess)
    np.testing.assert_array_equal(got_pre, VALUE + [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got_y, EXPECTED)


def test_no_fusion_when_another_op_reads_the_sum():
    x, pre, y = _graph()
    z = y + tf.reduce_sum(pre)
    with tf.Session() as sess:
        got = sess.run(z, {x: VALUE})
        assert "BiasAddRelu" not in _plan_types(sess)
    np.testing.assert_allclose(got, EXPECTED + (VALUE + [-1.0, 0.0, 1.0]).sum())


def test_traced_runs_keep_every_graph_op():
    x, _, y = _graph()
    with tf.Session() as sess:
        metadata = tf.RunMetadata()
        sess.run(y, {x: VALUE}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=metadata)
        names = [n.node_name for n in metadata.step_stats.dev_stats[0].node_stats]
    assert "BiasAdd" in names and "Relu" in names


def test_fuse_ops_leaves_pairs_in_different_cond_branches_alone():
    x, pre, _ = _graph()
    pred = tf.placeholder(tf.bool, [])
    y = tf.cond(pred, lambda: tf.nn.relu(pre), lambda: pre)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y, {x: VALUE, pred: True}), EXPECTED)
        np.testing.assert_array_equal(sess.run(y, {x: VALUE, pred: False}), VALUE + [-1.0, 0.0, 1.0])
    ops = executor.order(executor.prune([y], [], {x, pred}), {x, pred})
    assert not any(isinstance(op, executor.FusedOp) for op in executor.fuse_ops(ops, [y], {x, pred}))


def _conv_layer_gradient(dtype, channels=4):
    """d loss / d x through conv -> bias + ReLU -> max pool (a ConvNet layer), and the graph's inputs."""
    rng = np.random.default_rng(0)
    x = tf.placeholder(dtype, [None, 8, 8, 2])
    w = tf.constant(rng.standard_normal((3, 3, 2, channels)).astype(dtype))
    b = tf.constant(rng.standard_normal(channels).astype(dtype))
    h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b))
    pooled = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    loss = tf.reduce_sum(pooled * tf.constant(rng.standard_normal((1, 4, 4, channels)).astype(dtype)))
    return x, h, tf.gradients(loss, [x, w])


def _traced(sess, fetches, feed):
    return sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                    run_metadata=tf.RunMetadata())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels", [4, 16])  # 16: windows found again in x (kernels.pool.max_pool_2x2_grad)
def test_max_pool_grad_read_only_by_relu_grad_is_fused_and_bit_exact(dtype, channels):
    x, _, grads = _conv_layer_gradient(dtype, channels)
    feed = {x: np.random.default_rng(1).standard_normal((3, 8, 8, 2)).astype(dtype)}
    with tf.Session() as sess:
        fused = sess.run(grads, feed)
        types = _plan_types(sess)
        assert "MaxPoolGradReluGrad" in types and "MaxPoolGrad" not in types and "ReluGrad" not in types
        unfused = _traced(sess, grads, feed)   # traced plans run every graph op
    for got, expected in zip(fused, unfused):
        np.testing.assert_array_equal(got, expected)


def test_no_max_pool_relu_grad_fusion_when_the_pool_gradient_is_fetched():
    x, h, grads = _conv_layer_gradient(np.float64)
    pool_grad = next(op for op in tf.get_default_graph().get_operations() if op.type == "MaxPoolGrad").outputs[0]
    feed = {x: np.ones((1, 8, 8, 2))}
    with tf.Session() as sess:
        got_pool_grad, got = sess.run([pool_grad, grads[0]], feed)
        assert "MaxPoolGradReluGrad" not in _plan_types(sess)
        expected_pool_grad, expected = _traced(sess, [pool_grad, grads[0]], feed)
    np.testing.assert_array_equal(got_pool_grad, expected_pool_grad)
    np.testing.assert_array_equal(got, expected)


# A product read only through a slice computes just the slice's part (MatMulStridedSlice), wherever
# the slice sits in the order: ((A @ B)[r, c] == A[r] @ B[:, c]).
@pytest.mark.parametrize("key", [
    np.s_[:, 3:], np.s_[1:3, ::2], np.s_[-2:, :-1], np.s_[1], np.s_[:, 2], np.s_[-1, -2], np.s_[..., 1:],
    np.s_[None, :, 1:]])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_a_product_read_only_through_a_slice_computes_the_slice(key, ta, tb):
    rng = np.random.default_rng(2)
    a_value, b_value = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    a = tf.placeholder(tf.float64, [4, 3])
    b = tf.constant(b_value.T if tb else b_value)
    product = tf.matmul(tf.transpose(a) if ta else a, b, transpose_a=ta, transpose_b=tb)
    later = tf.reduce_sum(a * 2.0)  # an op ordered between the product and the slice
    sliced = product[key] + tf.zeros_like(later)
    with tf.Session() as sess:
        got = sess.run(sliced, {a: a_value})
        assert "MatMulStridedSlice" in _plan_types(sess) and "StridedSlice" not in _plan_types(sess)
    np.testing.assert_allclose(got, (a_value @ b_value)[key], rtol=1e-12)


def test_a_product_read_by_two_slices_is_computed_whole():
    a_value = np.arange(12.0).reshape(4, 3)
    a = tf.placeholder(tf.float64, [4, 3])
    product = tf.matmul(a, tf.constant(np.eye(3)))
    with tf.Session() as sess:
        left, right = sess.run([product[:, :1], product[:, 1:]], {a: a_value})
        assert "MatMulStridedSlice" not in _plan_types(sess)
    np.testing.assert_array_equal(np.hstack([left, right]), a_value)


def test_a_batched_product_read_through_a_slice():
    value = np.random.default_rng(3).standard_normal((2, 4, 3))
    a = tf.placeholder(tf.float64, [2, 4, 3])
    sliced = tf.matmul(a, a, transpose_b=True)[:, 1:, :2]
    with tf.Session() as sess:
        got = sess.run(sliced, {a: value})
        assert "MatMulStridedSlice" in _plan_types(sess)
    np.testing.assert_allclose(got, (value @ value.transpose(0, 2, 1))[:, 1:, :2], rtol=1e-12)


def _conv_bias(dtype, channels_in, channels_out, relu, add=tf.nn.bias_add, bias_shape=None):
    rng = np.random.default_rng(channels_in)
    x = tf.placeholder(dtype, [None, 9, 7, channels_in])
    w = tf.constant(rng.standard_normal((5, 3, channels_in, channels_out)).astype(dtype))
    b = tf.constant(rng.standard_normal(bias_shape or channels_out).astype(dtype))
    conv = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    y = add(conv, b)
    feed = {x: rng.standard_normal((2, 9, 7, channels_in)).astype(dtype)}
    return conv, (tf.nn.relu(y) if relu else y), feed


@pytest.mark.parametrize("add", [tf.nn.bias_add, tf.add], ids=["bias_add", "add"])  # `conv + b`: Add
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("channels_in,channels_out,exact", [
    (1, 16, False),  # conv_one_channel: bias and ReLU inside the convolution, another summation order
    (2, 4, True),    # im2col + BLAS, then the bias (and ReLU) in place: the unfused ops' bits
])
def test_conv2d_bias_add_relu_chain_is_fused(dtype, relu, channels_in, channels_out, exact, add):
    _, y, feed = _conv_bias(dtype, channels_in, channels_out, relu, add)
    with tf.Session() as sess:
        fused = sess.run(y, feed)
        types = _plan_types(sess)
        kernels = [t for t in types if t not in ("Const", "Placeholder")]
        assert kernels == ["Conv2DBiasAddRelu" if relu else "Conv2DBiasAdd"]
        unfused = _traced(sess, y, feed)
    if exact:
        np.testing.assert_array_equal(fused, unfused)
    else:
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(fused, unfused, rtol=tol, atol=tol)
    assert not relu or (fused >= 0).all()


@pytest.mark.parametrize("relu", [True, False])
@pytest.mark.parametrize("bias_shape", [(1, 1, 7, 4), (2, 9, 7, 4), (3, 1, 1, 1, 4)])
def test_conv2d_plus_any_broadcast_value_fused_gives_the_add(bias_shape, relu):
    """An Add's second input need not be a bias: one the convolution's output holds is added in place,
    one that broadcasts the output up (a new leading axis) gives a new array; the unfused values."""
    _, y, feed = _conv_bias(np.float64, 2, 4, relu, tf.add, bias_shape)
    with tf.Session() as sess:
        fused = sess.run(y, feed)
        assert "Conv2DBiasAdd" + ("Relu" if relu else "") in _plan_types(sess)
        unfused = _traced(sess, y, feed)
    assert fused.shape == unfused.shape
    np.testing.assert_array_equal(fused, unfused)


@pytest.mark.parametrize("channels_in", [1, 2])
@pytest.mark.parametrize("add", [tf.nn.bias_add, tf.add], ids=["bias_add", "add"])
def test_conv_plus_bias_relu_gradients_fused_equal_the_unfused(add, channels_in):
    """`relu(conv2d(x, w) + b)` trains through the fused kernel: nothing reads the convolution's shape
    (the Add's gradient needs no sum for it), and the gradients are the unfused plan's."""
    conv, y, feed = _conv_bias(np.float64, channels_in, 4, True, add)
    x = next(iter(feed))
    w, b = conv.op.inputs[1], y.op.inputs[0].op.inputs[1]
    loss = tf.reduce_sum(y * y)
    grads = tf.gradients(loss, [x, w, b])
    assert not [op for op in tf.get_default_graph().get_operations() if op.type == "Shape" and conv in op.inputs]
    with tf.Session() as sess:
        fused = sess.run([loss] + grads, feed)
        assert "Conv2DBiasAddRelu" in _plan_types(sess)
        unfused = _traced(sess, [loss] + grads, feed)
    for got, expected in zip(fused, unfused):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def _two_conv_layers(add):
    """The tutorial's two layers `relu(conv2d(h, w) + b)`, variables created as it does, and the Adam step."""
    rng = np.random.default_rng(4)
    x = tf.placeholder(tf.float64, [None, 8, 8, 1])
    h = x
    for shape in ([3, 3, 1, 4], [3, 3, 4, 6]):
        w = tf.Variable(rng.standard_normal(shape) * 0.3)
        h = tf.nn.relu(add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), tf.Variable(np.full(shape[-1], 0.1))))
        h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    loss = tf.reduce_sum(h * h)
    return x, loss, tf.train.AdamOptimizer(0.01).minimize(loss)


@pytest.mark.parametrize("add", [tf.nn.bias_add, tf.add], ids=["bias_add", "add"])
def test_a_second_conv_layer_fuses_behind_the_shape_its_input_gradient_reads(add):
    """The gradient's Shape of the second layer's input sits between its Conv2D and the add in the order:
    the add moves up past it (it computes nothing the add reads and changes no state). Training
    through the fused plan gives the unfused (traced) plan's losses."""
    x, loss, train = _two_conv_layers(add)
    feed = {x: np.random.default_rng(5).standard_normal((3, 8, 8, 1))}
    losses = {}
    for traced in (False, True):
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            run = (lambda f: _traced(sess, f, feed)) if traced else (lambda f: sess.run(f, feed))
            losses[traced] = [run([loss, train])[0] for _ in range(3)]
            if not traced:
                assert _plan_types(sess).count("Conv2DBiasAddRelu") == 2
    np.testing.assert_allclose(losses[False], losses[True], rtol=1e-12)


def test_an_add_does_not_move_up_past_an_op_that_changes_state():
    """Hand-ordered: a variable update between the convolution and the add reading that variable."""
    x = tf.placeholder(tf.float64, [None, 4, 4, 1])
    b = tf.Variable(np.zeros(2))
    conv = tf.nn.conv2d(x, tf.constant(np.ones((1, 1, 1, 2))), [1, 1, 1, 1], "SAME")
    update = tf.assign_add(b, np.ones(2))
    y = conv + b
    ops = executor.order(executor.prune([y, update], [], {x}), {x})
    between = [op for op in ops if op is update.op]
    rest = [op for op in ops if op not in (conv.op, y.op, update.op)]
    for middle, fused in ((between, False), ([], True)):
        plan_ops = executor.fuse_ops(rest + [conv.op] + middle + [y.op], [y, update], {x})
        assert any(isinstance(op, executor.FusedOp) for op in plan_ops) is fused


def test_no_conv2d_bias_fusion_when_the_convolution_is_fetched():
    conv, y, feed = _conv_bias(np.float32, 1, 16, relu=True)
    with tf.Session() as sess:
        got_conv, got = sess.run([conv, y], feed)
        assert "Conv2DBiasAddRelu" not in _plan_types(sess) and "BiasAddRelu" in _plan_types(sess)
        expected_conv, expected = _traced(sess, [conv, y], feed)
    np.testing.assert_array_equal(got_conv, expected_conv)
    np.testing.assert_array_equal(got, expected)
