"""Plan passes that rearrange work without changing values: sums added as their inputs are computed
(`stream_sums`), and one transposed copy of a value many products read transposed
(`share_transposed_inputs`). Each case checks the plan's steps and the values against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.framework import registry

RNG = np.random.default_rng(0)


def _plan(sess):
    return max(sess._plans.values(), key=lambda p: len(p.steps))


def _step_types(sess) -> list[str]:
    return [step.op.type for step in _plan(sess).steps if step.kernel is not None]


def _arrays(*shapes):
    return [RNG.standard_normal(s) for s in shapes]


# ---- stream_sums --------------------------------------------------------------------------------

def _products(n: int):
    """x [4, 3] fed, n products x.T @ y_i (each its own [3, 5]) and their numpy values."""
    x = tf.placeholder(tf.float64, [4, 3])
    ys = _arrays(*[(4, 5)] * n)
    value = RNG.standard_normal((4, 3))
    return x, value, [tf.matmul(x, tf.constant(y), transpose_a=True) for y in ys], [value.T @ y for y in ys]


@pytest.mark.parametrize("n", [3, 4, 7])
def test_a_sum_of_n_products_runs_as_n_minus_1_partial_sums_in_place(n):
    x, value, products, expected = _products(n)
    total = tf.add_n(products)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(total, {x: value}), sum(expected), rtol=1e-12)
        sums = [s for s in _plan(sess).steps if s.kernel is not None and s.op.type == "AddN"]
    assert len(sums) == n - 1 and all(len(s.inputs) == 2 for s in sums)
    assert all(s.donor is not None for s in sums)  # each partial sum writes into the running sum


def test_each_product_dies_at_its_partial_sum():
    x, value, products, _ = _products(5)
    total = tf.add_n(products)
    with tf.Session() as sess:
        sess.run(total, {x: value})
        steps = [s for s in _plan(sess).steps if s.kernel is not None]
    products = [index for index, step in enumerate(steps) if step.op.type == "MatMul"]
    for index in products[1:]:  # the first product starts the running sum
        assert steps[index + 1].op.type == "AddN" and steps[index].outputs[0] in steps[index + 1].inputs
        assert steps[index].outputs[0] in steps[index + 1].free


@pytest.mark.parametrize("case", ["two_inputs", "control_input", "sum_in_cond_branch"])
def test_sums_left_whole(case):
    x, value, products, expected = _products(2 if case == "two_inputs" else 3)
    if case == "control_input":
        with tf.control_dependencies([tf.no_op()]):
            total = tf.add_n(products)
    elif case == "sum_in_cond_branch":  # its inputs are computed outside the branch
        pred = tf.placeholder_with_default(True, [])
        total = tf.cond(pred, lambda: tf.add_n(products), lambda: products[0])
    else:
        total = tf.add_n(products)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(total, {x: value}), sum(expected), rtol=1e-12)
        sums = [s for s in _plan(sess).steps if s.kernel is not None and s.op.type == "AddN"]
    assert len(sums) == 1 and len(sums[0].inputs) == len(products)


def test_a_repeated_input_a_fetched_input_and_a_sum_of_sums():
    x, value, (p, q, r), (vp, vq, vr) = _products(3)
    inner = tf.add_n([p, q, p])
    outer = tf.add_n([r, inner, q])
    with tf.Session() as sess:
        got_outer, got_p, got_inner = sess.run([outer, p, inner], {x: value})
        assert "AddN" in _step_types(sess)
    np.testing.assert_allclose(got_inner, 2 * vp + vq, rtol=1e-12)
    np.testing.assert_allclose(got_outer, vr + 2 * vp + 2 * vq, rtol=1e-12)
    np.testing.assert_allclose(got_p, vp, rtol=1e-12)  # a fetched input is not summed into


def test_traced_runs_keep_the_graphs_sum():
    x, value, products, expected = _products(3)
    total = tf.add_n(products)
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        got = sess.run(total, {x: value}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                       run_metadata=metadata)
    np.testing.assert_allclose(got, sum(expected), rtol=1e-12)
    assert [n.node_name for n in metadata.step_stats.dev_stats[0].node_stats].count(total.op.name) == 1


# ---- share_transposed_inputs ----------------------------------------------------------------------

@pytest.mark.parametrize("readers,copies", [(1, 0), (2, 1), (4, 1)])
def test_products_by_one_transposed_weight_share_one_copy(readers, copies):
    w_value, *a_values = _arrays((5, 3), *[(2, 3)] * readers)
    w = tf.Variable(w_value)
    outs = [tf.matmul(tf.constant(a), w, transpose_b=True) for a in a_values]
    with tf.Session() as sess:
        sess.run(w.initializer)
        got = sess.run(outs)
        assert _step_types(sess).count(registry.TRANSPOSED_COPY) == copies
    for g, a in zip(got, a_values):
        np.testing.assert_allclose(g, a @ w_value.T, rtol=1e-12)


def test_no_shared_copy_across_an_update_of_the_weight():
    w_value, a1, a2 = _arrays((3, 3), (2, 3), (2, 3))
    w = tf.Variable(w_value)
    before = tf.matmul(tf.constant(a1), w, transpose_b=True)
    with tf.control_dependencies([before]):
        update = w.assign_add(tf.ones([3, 3], tf.float64))
    with tf.control_dependencies([update]):
        after = tf.matmul(tf.constant(a2), w.read_value(), transpose_b=True)
    with tf.Session() as sess:
        sess.run(w.initializer)
        got_before, got_after = sess.run([before, after])
    np.testing.assert_allclose(got_before, a1 @ w_value.T, rtol=1e-12)
    np.testing.assert_allclose(got_after, a2 @ (w_value + 1).T, rtol=1e-12)


def test_products_not_reading_b_transposed_get_no_copy():
    w_value, a1, a2 = _arrays((3, 5), (2, 3), (2, 3))
    w = tf.constant(w_value)
    outs = [tf.matmul(tf.constant(a1), w), tf.matmul(tf.constant(a2), w)]
    with tf.Session() as sess:
        got = sess.run(outs)
        assert registry.TRANSPOSED_COPY not in _step_types(sess)
    np.testing.assert_allclose(got[1], a2 @ w_value, rtol=1e-12)


@pytest.mark.parametrize("input_gradient", [False, True])
def test_static_gru_gradients_with_shared_transposed_weights_match_the_graphs_ops(input_gradient):
    """A static GRU's backward steps take w_ru and w_c transposed once, and make the input's gradient
    only when it is asked for; traced runs (the graph's ops, nothing rearranged) give the same values."""
    x = tf.constant(RNG.standard_normal((3, 4, 2)))
    cell = tf.nn.rnn_cell.GRUCell(5)
    outputs, _ = tf.nn.static_rnn(cell, tf.unstack(x, 4, 1), dtype=tf.float64)
    grads = tf.gradients(tf.reduce_sum(outputs[-1] ** 2), tf.trainable_variables() + ([x] if input_gradient else []))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(grads)
        steps = _plan(sess).steps
        assert [s.op.type for s in steps].count(registry.TRANSPOSED_COPY) == 2
        skipping = [s for s in steps if 0 in getattr(s.op, "attrs", {}).get(registry.UNREAD_OUTPUTS_ATTR, ())]
        assert len(skipping) == (0 if input_gradient else 4)  # the 4 steps' d_x (one layer)
        traced = sess.run(grads, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=tf.RunMetadata())
    for g, t in zip(got, traced):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


# ---- sink_copies ---------------------------------------------------------------------------------

def _steps_names(sess) -> list[str]:
    return [step.op.name for step in _plan(sess).steps if step.kernel is not None]


def test_a_concat_is_made_just_before_its_first_reader():
    a_value, b_value = _arrays((2, 3), (2, 3))
    a, b = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [2, 3])
    joined = tf.concat([a, b], 1, name="joined")
    scale = tf.reduce_sum(tf.exp(tf.sin(a * 2.0)), name="scale")  # ready as early as the concat
    total = tf.reduce_sum(tf.multiply(joined, scale, name="reader"))
    with tf.Session() as sess:
        got = sess.run(total, {a: a_value, b: b_value})
        names = _steps_names(sess)
    assert names.index("scale") < names.index("joined") == names.index("reader") - 1
    np.testing.assert_allclose(got, (a_value.sum() + b_value.sum()) * np.exp(np.sin(a_value * 2)).sum(), rtol=1e-12)


@pytest.mark.parametrize("barrier", ["variable_update", "control_dependency"])
def test_a_concat_stays_before_an_update_or_an_op_waiting_for_it(barrier):
    a = tf.placeholder(tf.float64, [2, 3])
    joined = tf.concat([a, a], 1, name="joined")  # ready first
    v = tf.Variable(np.float64(1.0))
    with tf.control_dependencies([joined.op] if barrier == "control_dependency" else []):
        late = tf.reduce_sum(a * 3.0)
        stop = v.assign_add(late, name="stop") if barrier == "variable_update" else tf.add(late, 1.0, name="stop")
    with tf.control_dependencies([stop]):
        reader = tf.reduce_sum(joined, name="reader")
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run(reader, {a: np.ones((2, 3))})
        names = _steps_names(sess)
    assert names.index("joined") < names.index("stop") < names.index("reader")
    assert got == 12.0
