"""A step's batch run in slices, one per thread (tftk.client.rows, tftk.framework.batch_rows,
codegen.compile_rows): which values are rows, how the plan is laid out, the values and errors of sliced
runs against the whole-batch run, and the session choosing it."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.client import rows, streams
from tftk.client import threads as thread_policy
from tftk.framework import errors
from tftk.framework.batch_rows import Rows
from tftk.kernels import work_sharing


@pytest.fixture
def two_workers():
    work_sharing.set_workers(2)
    yield
    work_sharing.set_workers(1)


def _plan(sess, fetches, feed):
    sess.run(fetches, feed)
    return list(sess._plans.values())[-1]


def _sliced(plan):
    """The plan's function with its regions on slices, whatever share of the step they hold."""
    share, rows.MIN_REGION_SHARE = rows.MIN_REGION_SHARE, 0.0
    try:
        function = rows.build(plan, streams.dependencies(plan), [1.0] * len(plan.steps))
    finally:
        rows.MIN_REGION_SHARE = share
    assert function is not None
    return function


def _convnet(loss_kind="mean", dropout=False, seed=0, inputs=None):
    """A LeNet-like training step on 8x8 images: conv + ReLU + max pool twice, dense, softmax loss, SGD.
    `inputs()` makes the images and labels in the graph (else they are fed)."""
    graph = tf.Graph()
    rng = np.random.default_rng(seed)
    with graph.as_default():
        tf.set_random_seed(seed)
        if inputs is None:
            x = tf.placeholder(tf.float32, [None, 64])
            y = tf.placeholder(tf.int32, [None])
        else:
            x, y = inputs()
        h = tf.reshape(x, [-1, 8, 8, 1])
        for name, shape in (("c1", (3, 3, 1, 4)), ("c2", (3, 3, 4, 8))):
            w = tf.Variable(rng.standard_normal(shape).astype(np.float32) * 0.5, name=name)
            b = tf.Variable(np.full(shape[-1], 0.1, np.float32), name=name + "_b")
            h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME") + b),
                               [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.reshape(h, [-1, 2 * 2 * 8])
        if dropout:
            h = tf.nn.dropout(h, 0.5)
        w = tf.Variable(rng.standard_normal((32, 10)).astype(np.float32) * 0.3, name="dense")
        logits = tf.nn.bias_add(tf.matmul(h, w), tf.Variable(np.zeros(10, np.float32), name="dense_b"))
        per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        losses = {
            "mean": lambda: tf.reduce_mean(per_example),
            "sum": lambda: tf.reduce_sum(per_example),
            "divided": lambda: tf.reduce_sum(per_example) / tf.cast(tf.shape(x)[0], tf.float32),
            "tf.losses": lambda: tf.losses.sparse_softmax_cross_entropy(y, logits),  # weights, nonzero count
            "one_hot": lambda: tf.reduce_mean(-tf.reduce_sum(tf.one_hot(y, 10) * tf.nn.log_softmax(logits), 1)),
            "sigmoid": lambda: tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
                labels=tf.one_hot(y, 10), logits=logits)),
            "max": lambda: tf.reduce_max(per_example),  # the pools' gradients then run whole (below)
        }
        loss = losses[loss_kind]()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf.global_variables_initializer()
    return graph, x, y, logits, loss, train, init


def _batch(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.random((n, 64), dtype=np.float32), rng.integers(0, 10, n).astype(np.int32)


# ---- the layout ------------------------------------------------------------------------------------

def test_a_convnet_step_is_one_region_between_its_variable_reads_and_its_updates():
    graph, x, y, logits, loss, train, init = _convnet()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        xs, ys = _batch(8)
        plan = _plan(sess, [train, loss], {x: xs, y: ys})
        laid = rows.layout(plan, streams.dependencies(plan))
    kinds = [what for what, _ in laid.segments]
    assert kinds == ["serial", "region", "serial"]
    first, region, last = (segment for _, segment in laid.segments)
    assert {plan.steps[i].action.value for i in first} == {"read"}
    assert {plan.steps[i].op.type for i in last} == {"ApplyGradientDescent", "NoOp"}
    assert region.whole == [0, 1] and not region.sliced and not region.copied
    types = {plan.steps[i].op.type: i for i in region.steps}
    assert {"Conv2DBiasAddRelu", "MaxPool", "Conv2DBackpropFilter", "MaxPoolGradReluGrad"} <= set(types)
    # the exports: 6 weight gradients and the loss, every one a partial sum; the max pools' arg-maxes stay
    assert len(region.exports) == 7 and all(laid.kinds[s] is Rows.PARTIAL for s in region.exports)
    argmax = plan.steps[types["MaxPool"]].outputs[1]
    assert laid.kinds[argmax] is Rows.LOCAL
    assert sorted(region.rescaled.values()) == [Rows.COUNT, Rows.MEAN]


def _kind_of(build, batch=6):
    """The kind the layout gives the fetched value `build(x)` of a rows feed x ("whole": run on the whole
    batch)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4, 3])
        w = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
        out = build(x, w)
    with tf.Session(graph=graph) as sess:
        plan = _plan(sess, out, {x: np.ones((batch, 4, 3), np.float32)})
        laid = rows.layout(plan, streams.dependencies(plan))
    if laid is None:
        return "whole"
    slot = plan.fetch_slots[0]
    producer = next(i for i, step in enumerate(plan.steps) if slot in step.outputs)
    in_region = any(what == "region" and producer in segment.steps for what, segment in laid.segments)
    return laid.kinds[slot] if in_region else "whole"


@pytest.mark.parametrize("build, kind", [
    (lambda x, w: tf.nn.relu(x) * 2.0, Rows.ROWS),
    (lambda x, w: x + tf.ones([4, 3]), Rows.ROWS),  # a weight of a lower rank broadcasts along the batch
    (lambda x, w: tf.reduce_sum(x, axis=0), Rows.PARTIAL),
    (lambda x, w: tf.reduce_sum(x, axis=[1, 2]), Rows.ROWS),
    (lambda x, w: tf.reduce_mean(x), Rows.PARTIAL),
    (lambda x, w: tf.reduce_max(x, axis=0), "whole"),  # not a sum: the whole batch
    (lambda x, w: tf.reduce_max(x, axis=2), Rows.ROWS),
    (lambda x, w: tf.matmul(tf.reshape(x, [-1, 12]), tf.reshape(w, [12, 1])), Rows.ROWS),
    (lambda x, w: tf.matmul(tf.reshape(x, [-1, 12]), tf.reshape(x, [-1, 12]), transpose_a=True), Rows.PARTIAL),
    (lambda x, w: tf.matmul(tf.reshape(x, [-1, 12]), tf.reshape(x, [-1, 12]), transpose_b=True), "whole"),
    (lambda x, w: tf.reshape(x, [-1, 6]), "whole"),  # rows of 12 cut in two: rows no more
    (lambda x, w: tf.reshape(x, [-1, 3, 4]), Rows.ROWS),
    (lambda x, w: tf.expand_dims(x, 0), "whole"),
    (lambda x, w: tf.expand_dims(x, -1), Rows.ROWS),
    (lambda x, w: tf.shape(x), Rows.SHAPE),
    (lambda x, w: tf.size(x), Rows.SAME),  # a count: the whole batch's in every slice
    (lambda x, w: tf.transpose(x, [1, 0, 2]), "whole"),  # no rule: run whole
    (lambda x, w: tf.cast(tf.shape(x), tf.float32), "whole"),
    (lambda x, w: tf.shape(x)[0], Rows.SHAPE),  # the slice's row count
    (lambda x, w: tf.shape(x)[1], Rows.SAME),
    (lambda x, w: tf.zeros(tf.stack([tf.shape(x)[0], 5])), Rows.ROWS),  # an RNN's zero state
    (lambda x, w: tf.nn.softmax(x), Rows.ROWS),
    (lambda x, w: tf.argmax(x, 2), Rows.ROWS),
    (lambda x, w: tf.argmax(x, 0), "whole"),
    (lambda x, w: tf.squeeze(x[:, :1, :], [1]), Rows.ROWS),
    (lambda x, w: tf.squeeze(x[:, :1, :1]), "whole"),  # every size-1 axis: a 1-row slice's too
    (lambda x, w: tf.concat([x, x], 1), Rows.ROWS),
    (lambda x, w: tf.concat([x, x], 0), "whole"),
    (lambda x, w: tf.split(x, 2, axis=1)[1], Rows.ROWS),
    (lambda x, w: tf.unstack(x, axis=1)[2], Rows.ROWS),
    (lambda x, w: tf.stack([x, x], axis=1), Rows.ROWS),
    (lambda x, w: tf.stack([x, x], axis=0), "whole"),
    (lambda x, w: x[:, 1:], Rows.ROWS),
    (lambda x, w: x[1:], "whole"),
    (lambda x, w: tf.reduce_sum(x, 0) + tf.reduce_sum(x * 2.0, 0), Rows.PARTIAL),
    (lambda x, w: -tf.reduce_sum(x, 0) * 3.0, Rows.PARTIAL),
    (lambda x, w: tf.reduce_sum(x, 0) + 1.0, "whole"),  # added once per slice: not a sum any more
])
def test_which_values_are_rows(build, kind):
    assert _kind_of(build) == kind


def test_arg_maxes_read_whole_make_their_max_pool_run_whole():
    """A loss that is the batch's max: its gradient reaches the pools through ops without a rule, so
    each pool's gradient runs whole, and with it the max pool whose arg-maxes it reads."""
    graph, x, y, logits, loss, train, init = _convnet("max")
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        plan = _plan(sess, [train, loss], {x: _batch(6)[0], y: _batch(6)[1]})
        laid = rows.layout(plan, streams.dependencies(plan))
    serial = {plan.steps[i].op.type for what, segment in laid.segments if what == "serial" for i in segment}
    sliced = {plan.steps[i].op.type for what, segment in laid.segments if what == "region" for i in segment.steps}
    assert {"MaxPool", "MaxPoolGradReluGrad"} <= serial and "Conv2DBiasAddRelu" in sliced
    assert Rows.LOCAL not in laid.kinds.values()


def test_a_whole_batch_value_that_broadcasts_along_the_batch_meets_rows_in_a_slice(two_workers):
    """x - max(x over the batch): the max runs whole, before the region, and each slice reads it."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4, 3])
        out = tf.nn.relu(tf.nn.relu(x) - tf.reduce_max(x, axis=0, keepdims=True)) * 2.0 + x
    value = np.random.default_rng(5).standard_normal((7, 4, 3)).astype(np.float32)
    with tf.Session(graph=graph) as sess:
        plan = _plan(sess, out, {x: value})
        laid = rows.layout(plan, streams.dependencies(plan))
        assert [what for what, _ in laid.segments] == ["serial", "region"]
        assert [plan.steps[i].op.type for i in laid.segments[0][1]] == ["Max"]
        np.testing.assert_array_equal(_sliced(plan)(value)[0], plan.function(value)[0])


# ---- sliced runs against the whole batch ------------------------------------------------------------

@pytest.mark.parametrize("loss_kind", ["mean", "sum", "divided", "tf.losses", "one_hot", "sigmoid", "max"])
@pytest.mark.parametrize("n", [2, 7, 16])
def test_a_sliced_training_step_computes_what_the_whole_batch_does(two_workers, loss_kind, n):
    results = []
    for sliced in (False, True):
        graph, x, y, logits, loss, train, init = _convnet(loss_kind)
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            xs, ys = _batch(n)
            plan = _plan(sess, [train, loss, logits], {x: xs, y: ys})
            run = _sliced(plan) if sliced else plan.function
            fetched = [run(*_batch(n, seed)) for seed in (2, 3, 4)]
            results.append((fetched, sess.run(graph.get_collection("trainable_variables"))))
    for whole, parts in zip(results[0][0], results[1][0]):
        assert parts[0] == pytest.approx(whole[0], rel=1e-5)  # the loss
        np.testing.assert_allclose(parts[1], whole[1], rtol=1e-5, atol=1e-6)  # the logits, stacked
    for whole, parts in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(parts, whole, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cell, fused", [(lambda: tf.nn.rnn_cell.BasicLSTMCell(8), "LSTMBlockCell"),
                                         (lambda: tf.nn.rnn_cell.GRUCell(8), "GRUBlockCell")], ids=["lstm", "gru"])
def test_a_sliced_static_rnn_step_computes_what_the_whole_batch_does(two_workers, cell, fused):
    """static_rnn over a fused cell's steps, with a zero state sized by the batch."""
    results = []
    for sliced in (False, True):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(0)
            x = tf.placeholder(tf.float32, [None, 4, 3])
            y = tf.placeholder(tf.int32, [None])
            outputs, _ = tf.nn.static_rnn(cell(), tf.unstack(x, 4, 1), dtype=tf.float32)
            logits = tf.layers.dense(outputs[-1], 5)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            train = tf.train.AdamOptimizer(0.01).minimize(loss)
            init = tf.global_variables_initializer()
        rng = np.random.default_rng(7)
        batches = [(rng.random((7, 4, 3), dtype=np.float32), rng.integers(0, 5, 7).astype(np.int32))
                   for _ in range(3)]
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            plan = _plan(sess, [train, loss], {x: batches[0][0], y: batches[0][1]})
            if sliced:
                laid = rows.layout(plan, streams.dependencies(plan))
                region = next(segment for what, segment in laid.segments if what == "region")
                assert {fused, fused + "Grad", "Fill"} <= {plan.steps[i].op.type for i in region.steps}
            run = _sliced(plan) if sliced else plan.function
            losses = [run(*batch)[0] for batch in batches]
            results.append((losses, sess.run(graph.get_collection("trainable_variables"))))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    for whole, parts in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(parts, whole, rtol=1e-5, atol=1e-6)


def test_a_dropout_mask_is_drawn_whole_between_two_regions(two_workers):
    results = []
    for sliced in (False, True):
        graph, x, y, logits, loss, train, init = _convnet(dropout=True)
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            plan = _plan(sess, [train, loss], {x: _batch(6)[0], y: _batch(6)[1]})
            if sliced:
                laid = rows.layout(plan, streams.dependencies(plan))
                assert [what for what, _ in laid.segments] == ["serial", "region", "serial", "region", "serial"]
                assert {plan.steps[i].op.type for i in laid.segments[2][1]} == {"RandomUniform"}
            run = _sliced(plan) if sliced else plan.function
            results.append([run(*_batch(6, seed))[0] for seed in (2, 3)])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)


def test_a_batch_below_two_rows_or_sources_of_other_sizes_run_each_region_once(two_workers, monkeypatch):
    graph, x, y, logits, loss, train, init = _convnet()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        plan = _plan(sess, [logits, loss], {x: _batch(4)[0], y: _batch(4)[1]})
        slices_run = []
        real = rows.run_region
        monkeypatch.setattr(rows, "run_region", lambda fn, bounds, *args: slices_run.append(len(bounds))
                            or real(fn, bounds, *args))
        sliced = _sliced(plan)
        one = _batch(1)
        for got, expected in zip(sliced(*one), plan.function(*one)):
            np.testing.assert_array_equal(got, expected)  # one slice of all the rows: the serial run's bits
        assert slices_run == [1]
        sliced(*_batch(2))
        assert slices_run == [1, 2]
        with pytest.raises(errors.InvalidArgumentError, match="labels"):  # the whole batch's error
            sliced(_batch(4)[0], _batch(5)[1])
        assert slices_run == [1, 2, 1]


def test_an_input_pipelines_batch_is_a_source_of_rows(two_workers):
    """A training step reading its batch from tf.data (IteratorGetNext, in the first serial segment): the
    slices come from its row count, 8 and then the last partial batch's 7."""
    rng = np.random.default_rng(3)
    images, labels = rng.random((15, 64), dtype=np.float32), rng.integers(0, 10, 15).astype(np.int32)

    def pipeline():
        return tf.data.Dataset.from_tensor_slices((images, labels)).batch(8).make_one_shot_iterator().get_next()

    results = []
    for sliced in (False, True):
        graph, x, y, logits, loss, train, init = _convnet(inputs=pipeline)
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            plan = _plan(sess, [train, loss], {})  # the first batch
            if sliced:
                laid = rows.layout(plan, streams.dependencies(plan))
                assert [what for what, _ in laid.segments] == ["serial", "region", "serial"]
                assert len(laid.sources) == 2
                assert "IteratorGetNext" in {plan.steps[i].op.type for i in laid.segments[0][1]}
            run = _sliced(plan) if sliced else plan.function
            results.append((run()[0], sess.run(graph.get_collection("trainable_variables"))))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    for whole, parts in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(parts, whole, rtol=1e-5, atol=1e-6)


def test_a_failing_kernel_in_a_slice_names_its_op_and_the_next_step_runs(two_workers):
    graph, x, y, logits, loss, train, init = _convnet()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        xs, ys = _batch(8)
        plan = _plan(sess, loss, {x: xs, y: ys})
        expected = sess.run(loss, {x: xs, y: ys})
        plan.function = _sliced(plan)
        bad = ys.copy()
        bad[-1] = 10  # out of range, in the helper's slice
        with pytest.raises(errors.InvalidArgumentError, match="10") as raised:
            sess.run(loss, {x: xs, y: bad})
        assert raised.value.op.type == "SparseSoftmaxCrossEntropyWithLogits"
        assert sess.run(loss, {x: xs, y: ys}) == pytest.approx(expected, rel=1e-6)


def test_a_slice_computed_twice_finds_its_inputs_as_they_were(two_workers, monkeypatch):
    """A slice the caller overtakes runs twice (`work_sharing.run`): a step that would write into an
    input the region did not make (here `a`, made by the first region and taken in place by `a + noise`
    in the second) gets a copy."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 5])
        a = x * 3.0
        noise = tf.random_uniform(tf.shape(a), seed=3)  # drawn whole, between two regions
        out = tf.reduce_sum(tf.nn.relu(a + noise) * x)
    value = np.arange(30, dtype=np.float32).reshape(6, 5)
    with tf.Session(graph=graph) as sess:
        sess.run(out, {x: value})
        expected = sess.run(out, {x: value})  # the second draws, as the sliced run's below

    def twice(count, compute, commit):
        for index in range(count):
            compute(index)
            commit(index, compute(index))

    monkeypatch.setattr(work_sharing, "run", twice)
    with tf.Session(graph=graph) as sess:
        plan = _plan(sess, out, {x: value})  # its first run: the same draws as the first session's
        laid = rows.layout(plan, streams.dependencies(plan))
        assert set().union(*(segment.copied for what, segment in laid.segments if what == "region"))
        assert _sliced(plan)(value)[0] == pytest.approx(expected, rel=1e-6)


# ---- the session -------------------------------------------------------------------------------------

def test_a_two_thread_session_builds_the_sliced_way_and_runs_it(monkeypatch):
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    monkeypatch.setattr(thread_policy, "WARM_SECONDS", 0.0)
    monkeypatch.setattr(streams, "MIN_PLAN_SECONDS", 0.0)
    monkeypatch.setattr(rows, "MIN_REGION_SHARE", 0.0)
    results = {}
    for threads in (1, 2):
        graph, x, y, logits, loss, train, init = _convnet()
        with tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
            sess.run(init)
            for seed in range(12):
                xs, ys = _batch(10, seed)
                sess.run(train, {x: xs, y: ys})
            results[threads] = sess.run(graph.get_collection("trainable_variables"))
            plan = next(p for key, p in sess._plans.items() if train in key[1])
            if threads == 2:
                times = sess._step_times[id(plan)]
                assert plan.rows_function is not None and "rows" in times.ways
                assert len(times.by_way["rows"]) > 0
            else:
                assert plan.rows_function is None
    for one, two in zip(results[1], results[2]):
        np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-6)
