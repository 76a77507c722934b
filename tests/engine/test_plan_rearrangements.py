"""Plan passes that rearrange work without changing values: sums added as their inputs are computed
(`stream_sums`), one transposed copy of a value many products read transposed
(`share_transposed_inputs`), or of a loop body's weight, made once for all iterations
(`hoist_transposed_inputs`), or a loop gradient's weight products added into their totals by the
gemm making them (`accumulate_into_totals`). Each case checks the plan's steps and the values against
numpy or against the plan without the pass."""

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

def _products(n: int, dtype=tf.float64):
    """x [4, 3] fed, n products x.T @ y_i (each its own [3, 5]) and their numpy values."""
    x = tf.placeholder(dtype, [4, 3])
    ys = _arrays(*[(4, 5)] * n)
    value = RNG.standard_normal((4, 3))
    return x, value, [tf.matmul(x, tf.constant(y), transpose_a=True) for y in ys], [value.T @ y for y in ys]


def _terms(n: int):
    """x [4, 3] fed, n element-wise terms x * c_i (no products) and their numpy values."""
    x = tf.placeholder(tf.float64, [4, 3])
    cs = _arrays(*[(4, 3)] * n)
    value = RNG.standard_normal((4, 3))
    return x, value, [tf.multiply(x, tf.constant(c)) for c in cs], [value * c for c in cs]


@pytest.mark.parametrize("n", [3, 4, 7])
def test_a_sum_of_n_products_runs_as_n_minus_1_gemms_adding_into_the_running_sum(n):
    x, value, products, expected = _products(n)
    total = tf.add_n(products)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(total, {x: value}), sum(expected), rtol=1e-12)
        steps = [s for s in _plan(sess).steps if s.kernel is not None]
    sums = [s for s in steps if s.op.type == registry.MATMUL_ACCUMULATE]
    assert len(sums) == n - 1 and all(len(s.inputs) == 3 for s in sums)
    assert [s.op.type for s in steps].count("MatMul") == 1  # only the first product is made on its own
    assert all(s.donor == 0 for s in sums)  # each adds into the running sum's buffer


@pytest.mark.parametrize("n", [3, 4, 7])
def test_a_sum_of_n_other_terms_runs_as_n_minus_1_partial_sums_in_place(n):
    x, value, terms, expected = _terms(n)
    total = tf.add_n(terms)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(total, {x: value}), sum(expected), rtol=1e-12)
        sums = [s for s in _plan(sess).steps if s.kernel is not None and s.op.type == "AddN"]
    assert len(sums) == n - 1 and all(len(s.inputs) == 2 for s in sums)
    assert all(s.donor is not None for s in sums)  # each partial sum writes into the running sum


def test_each_term_dies_at_its_partial_sum():
    x, value, terms, _ = _terms(5)
    total = tf.add_n(terms)
    with tf.Session() as sess:
        sess.run(total, {x: value})
        steps = [s for s in _plan(sess).steps if s.kernel is not None]
    made = [index for index, step in enumerate(steps) if step.op.type == "Mul"]
    for index in made[1:]:  # the first term starts the running sum
        assert steps[index + 1].op.type == "AddN" and steps[index].outputs[0] in steps[index + 1].inputs
        assert steps[index].outputs[0] in steps[index + 1].free


@pytest.mark.parametrize("case", ["fetched", "read_elsewhere"])
def test_a_product_read_by_more_than_the_sum_is_made_and_added(case):
    x, value, products, expected = _products(3)
    total = tf.add_n(products)
    other = tf.reduce_sum(products[1]) if case == "read_elsewhere" else products[1]
    with tf.Session() as sess:
        got, got_other = sess.run([total, other], {x: value})
        types = _step_types(sess)
    np.testing.assert_allclose(got, sum(expected), rtol=1e-12)
    np.testing.assert_allclose(got_other, expected[1].sum() if case == "read_elsewhere" else expected[1], rtol=1e-12)
    assert types.count("MatMul") == 2 and types.count(registry.MATMUL_ACCUMULATE) == 1 and types.count("AddN") == 1


def test_a_fetched_running_sum_is_not_added_into():
    """The first product starts the running sum; fetched, its buffer is not the gemm's to write."""
    x, value, products, expected = _products(3)
    total = tf.add_n(products)
    with tf.Session() as sess:
        got, first = sess.run([total, products[0]], {x: value})
    np.testing.assert_allclose(first, expected[0], rtol=1e-12)
    np.testing.assert_allclose(got, sum(expected), rtol=1e-12)


def test_a_weights_gradient_over_time_steps_adds_its_products_through_the_gradients_identity(monkeypatch):
    """tf.gradients hands each step's product x_t^T @ dh on through an Identity (`tf.tuple`): seen
    through, it is still added by one gemm; the values are those of the rewrite off."""
    from tftk.client import plan
    xs = [tf.constant(RNG.standard_normal((8, 6)).astype(np.float32)) for _ in range(4)]
    w = tf.Variable(RNG.standard_normal((6, 5)).astype(np.float32))
    h = tf.zeros([8, 5])
    for x in xs:
        h = tf.tanh(tf.matmul(x, w) + h)
    grad = tf.gradients(tf.reduce_sum(h * h), w)[0]
    runs = []
    for rewrite in (True, False):
        if not rewrite:
            monkeypatch.setattr(plan, "_accumulable_product", lambda op: False)
        with tf.Session() as sess:
            sess.run(w.initializer)
            runs.append(sess.run(grad))
            assert (registry.MATMUL_ACCUMULATE in _step_types(sess)) == rewrite
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("through_tuple", [False, True])
def test_an_update_ordered_after_a_product_still_sees_it_made_first(through_tuple):
    """A variable update with a control input on a summed product runs after that product, as in TF:
    the product (made by the partial sum, where the MatMul was) reads the variable's old value."""
    w_value = RNG.standard_normal((3, 5))
    w = tf.Variable(w_value)
    xs = _arrays(*[(4, 3)] * 3)
    products = [tf.matmul(tf.constant(x), w) for x in xs]
    summed = tf.tuple(products) if through_tuple else products
    total = tf.add_n(summed)
    with tf.control_dependencies([p.op for p in products]):
        update = w.assign(w * 2.0)
    with tf.Session() as sess:
        sess.run(w.initializer)
        got, _ = sess.run([total, update])
        assert registry.MATMUL_ACCUMULATE in _step_types(sess)
    np.testing.assert_allclose(got, sum(x @ w_value for x in xs), rtol=1e-12)


@pytest.mark.parametrize("operand", ["a", "b"])
def test_a_running_sum_that_is_also_an_operand_is_not_written_while_read(operand):
    """add_n([x, x @ w, y @ w2, ...]): the running sum x is the next product's `a` (or `b`); a gemm
    writing into it would read what it writes (wrong values from n >= 64)."""
    n = 96
    x = tf.placeholder(tf.float32, [n, n])
    w1, w2, w3 = (tf.constant(RNG.standard_normal((n, n)).astype(np.float32)) for _ in range(3))
    start = tf.sin(x)  # a temporary the sum may write into
    first = tf.matmul(start, w1) if operand == "a" else tf.matmul(w1, start)
    total = tf.add_n([start, first, tf.matmul(tf.cos(x), w2), tf.matmul(tf.tanh(x), w3)])
    value = RNG.standard_normal((n, n)).astype(np.float32)
    with tf.Session() as sess:
        got = sess.run(total, {x: value})
    s, c, t = (f(value.astype(np.float64)) for f in (np.sin, np.cos, np.tanh))
    with tf.Session() as sess:
        w1v, w2v, w3v = sess.run([w1, w2, w3])
    want = s + (s @ w1v if operand == "a" else w1v @ s) + c @ w2v + t @ w3v
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_a_fed_product_is_summed_as_fed():
    """A product kept in the plan for a control input (tf.tuple's gate) but fed: the sum adds the fed value."""
    x, value, products, expected = _products(3)
    total = tf.add_n(tf.tuple(products))
    fed = np.zeros_like(expected[1])
    with tf.Session() as sess:
        got = sess.run(total, {x: value, products[1]: fed})
    np.testing.assert_allclose(got, expected[0] + expected[2], rtol=1e-12)


def test_accumulated_products_give_the_bits_of_products_made_and_added(monkeypatch):
    """float32, 28 products of an LSTM weight gradient's shape: one gemm adding each product gives the
    bits of the product made and then added (its sum is added once, as np.add adds it)."""
    from tftk.client import plan
    xs = [tf.constant(RNG.standard_normal((128, 64)).astype(np.float32)) for _ in range(28)]
    ds = [tf.constant(RNG.standard_normal((128, 96)).astype(np.float32)) for _ in range(28)]
    total = tf.add_n([tf.matmul(a, b, transpose_a=True) for a, b in zip(xs, ds)])
    with tf.Session() as sess:
        fused = sess.run(total)
        assert _step_types(sess).count(registry.MATMUL_ACCUMULATE) == 27
    monkeypatch.setattr(plan, "_accumulable_product", lambda op: False)
    with tf.Session() as sess:
        made_and_added = sess.run(total)
        assert registry.MATMUL_ACCUMULATE not in _step_types(sess)
    np.testing.assert_array_equal(fused, made_and_added)


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


# ---- hoist_transposed_inputs -----------------------------------------------------------------------

def _hoisting_cases():
    """(name, ops, invariant, copies, rewired ops) for the pass on hand-made graphs."""
    a, w, u = tf.placeholder(tf.float64, [2, 3]), tf.placeholder(tf.float64, [5, 3]), tf.placeholder(tf.float64, [3, 5])
    products = [tf.matmul(a, w, transpose_b=True).op, tf.matmul(2.0 * a, w, transpose_b=True).op]
    plain = tf.matmul(a, u).op
    v = tf.Variable(np.zeros([2, 5]))
    update = v.assign_add(tf.matmul(a, w, transpose_b=True)).op
    h, x, d = (tf.placeholder(tf.float64, shape) for shape in ([2, 5], [2, 3], [2, 5]))
    w_ru, w_c = tf.placeholder(tf.float64, [8, 10]), tf.placeholder(tf.float64, [8, 5])
    b_ru, b_c = tf.placeholder(tf.float64, [10]), tf.placeholder(tf.float64, [5])
    from tftk.ops.gru_ops import gru_block_cell
    tf.gradients(gru_block_cell(x, h, w_ru, w_c, b_ru, b_c)[3], x, grad_ys=d)
    gru_grad = next(op for op in tf.get_default_graph().get_operations() if op.type == "GRUBlockCellGrad")
    return [("two products, one copy", products, {w}, 1, 2),
            ("nothing invariant", products, set(), 0, 0),
            ("the other input invariant", products, {a}, 0, 0),
            ("not read transposed", [plain], {u}, 0, 0),
            ("a state update in the plan", products + [update], {w}, 0, 0),
            ("both GRU weights invariant", [gru_grad], {w_ru, w_c}, 2, 1),
            ("one GRU weight invariant", [gru_grad], {w_ru}, 0, 0)]


def test_hoisting_transposed_invariants_table():
    from tftk.client.plan import hoist_transposed_inputs
    for name, ops, invariant, n_copies, n_rewired in _hoisting_cases():
        result, copies = hoist_transposed_inputs(ops, invariant)
        assert len(copies) == n_copies, name
        assert all(c.type == registry.TRANSPOSED_COPY and c.inputs[0] in invariant for c in copies), name
        rewired = [op for op in result if getattr(op, "attrs", {}).get(registry.TRANSPOSED_INPUTS_ATTR)]
        assert len(rewired) == n_rewired and len(result) == len(ops), name
        made = {c.outputs[0] for c in copies}
        assert all(op.inputs[i] in made for op in rewired for i in op.attrs[registry.TRANSPOSED_INPUTS_ATTR]), name


@pytest.fixture
def loop_plans(monkeypatch):
    """The plans built while the test runs, loop bodies' included."""
    from tftk.client import executor
    built, build = [], executor.build_plan

    def recording(*args, **kwargs):
        built.append(build(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(executor, "build_plan", recording)
    return built


@pytest.mark.parametrize("input_gradient", [False, True])
@pytest.mark.parametrize("cell_type,copies", [("BasicLSTMCell", 1), ("GRUCell", 2)])
def test_dynamic_rnn_gradient_body_takes_weights_transposed_once_per_run(loop_plans, cell_type, copies,
                                                                         input_gradient):
    """dynamic_rnn's gradient body gets its weights transposed once per run (made before the loop),
    makes the inputs' gradient only when it is read, and gives the gradients of static_rnn over the
    same variables."""
    x_value = RNG.standard_normal((3, 4, 2))
    x = tf.constant(x_value)
    cell = getattr(tf.nn.rnn_cell, cell_type)(5)
    with tf.variable_scope("rnn") as scope:
        dynamic, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
        scope.reuse_variables()
        static, _ = tf.nn.static_rnn(cell, tf.unstack(x, 4, 1), dtype=tf.float64)
    weights = tf.trainable_variables()
    grads = [tf.gradients(tf.reduce_sum(out ** 2) + tf.reduce_sum(tf.sin(out)), weights + [x] * input_gradient)
             for out in (dynamic[:, -1], static[-1])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        loop_plans.clear()
        got_dynamic = sess.run(grads[0])
        assert sorted(len(p.hoisted) for p in loop_plans if p.hoisted) == [copies]  # the gradient body's
        loop_grad, = [s for s in loop_plans[-1].steps if s.op.type == "WhileGrad"]
        unread = getattr(loop_grad.op, "attrs", {}).get(registry.UNREAD_OUTPUTS_ATTR, ())
        n_loop, n_rows = (len(loop_grad.op.get_attr(k)) for k in ("loop_floats", "sliced_floats"))
        assert [k for k in unread if n_loop <= k < n_loop + n_rows] == ([] if input_gradient else [n_loop])  # x's
        got_static = sess.run(grads[1])
        got_again = sess.run(grads[0])
    for d, s, again in zip(got_dynamic, got_static, got_again):
        np.testing.assert_allclose(d, s, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(d, again)


def test_loop_weights_transposed_afresh_each_run(loop_plans):
    """A copy hoisted out of a loop is made from the weight's value at each run: an update between
    runs shows in the next run's products."""
    w_value, a_value = _arrays((3, 3), (2, 3))
    w = tf.Variable(w_value)
    a = tf.constant(a_value)
    out = tf.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, tf.matmul(acc, w, transpose_b=True)),
                        [tf.constant(0), a])[1]
    grad = tf.gradients(tf.reduce_sum(out), a)[0]
    step = w.assign_add(tf.ones([3, 3], tf.float64))
    with tf.Session() as sess:
        sess.run(w.initializer)
        for value in (w_value, w_value + 1):
            got, got_grad = sess.run([out, grad])
            np.testing.assert_allclose(got, a_value @ value.T @ value.T @ value.T, rtol=1e-12)
            np.testing.assert_allclose(got_grad, np.ones((2, 3)) @ value @ value @ value, rtol=1e-12)
            sess.run(step)
    assert any(p.hoisted for p in loop_plans)


# ---- accumulate_into_totals ----------------------------------------------------------------------

@pytest.mark.parametrize("cell_type,products", [("BasicLSTMCell", 1), ("GRUCell", 2)])
def test_a_loop_gradients_weight_products_add_into_their_totals_with_the_bits_of_products_added(
        loop_plans, monkeypatch, cell_type, products):
    """dynamic_rnn's gradient body adds each iteration's weight-gradient product into the weight's
    running total with one gemm (`accumulate_into_totals`): the bits of each product made and then
    added, as the loop did before."""
    from tftk.client import executor
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(3)
        x = tf.constant(RNG.standard_normal((32, 12, 8)).astype(np.float32))
        out, _ = tf.nn.dynamic_rnn(getattr(tf.nn.rnn_cell, cell_type)(16), x, dtype=tf.float32)
        weights = tf.trainable_variables()
        grads = tf.gradients(tf.reduce_sum(tf.sin(out)), weights)
        init = tf.global_variables_initializer()

    def gradients():
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            loop_plans.clear()
            return sess.run(grads), list(loop_plans)

    accumulated, plans = gradients()
    body, = [p for p in plans if p.accumulated]
    assert len(body.accumulated) == products
    assert sum(step.op.type == registry.MATMUL_ACCUMULATE for step in body.steps) == products
    monkeypatch.setattr(executor, "accumulate_into_totals", lambda ops, fetches, feeds, summed: (ops, [], []))
    made_and_added, plans = gradients()
    assert not any(p.accumulated for p in plans)
    for one, other in zip(accumulated, made_and_added):
        np.testing.assert_array_equal(one, other)


def test_a_total_not_added_in_place_is_copied_into():
    """A summed output that came back as another array than its total (no in-place add) is copied into
    the total, which the loop reads at its end."""
    from tftk.ops.loop_stages import keep_totals
    total, other = np.zeros((2, 3)), np.ones((2, 3))
    made = np.arange(6.0).reshape(2, 3)
    keep_totals((made, other), [0], [total])
    np.testing.assert_array_equal(total, made)
    keep_totals((total, other), [0], [total])  # the total itself: left as it is
    np.testing.assert_array_equal(total, made)


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
