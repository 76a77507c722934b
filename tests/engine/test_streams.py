"""A plan's steps as two streams (tftk.client.streams, codegen.compile_streams, side_thread): the schedule,
the dependencies it keeps, the values and errors of split runs, and the session choosing a split."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tftk as tf
from tftk.client import codegen, side_thread, streams
from tftk.client import threads as thread_policy
from tftk.framework import errors, registry


# ---- the schedule ---------------------------------------------------------------------------------

def _runs_to_the_end(deps, order):
    """Whether two streams running `order` (each waiting for its steps' dependencies) both finish."""
    done, at = set(), [0, 0]
    while True:
        moved = False
        for s in (0, 1):
            while at[s] < len(order[s]) and deps[order[s][at[s]]] <= done:
                done.add(order[s][at[s]])
                at[s] += 1
                moved = True
        if not moved:
            return at == [len(order[0]), len(order[1])]


def _chains(k, n):
    """k independent chains of n steps each (step i*n + j depends on i*n + j - 1)."""
    return [{i - 1} if i % n else set() for i in range(k * n)]


def _layers(n):
    """A 2-layer RNN's forward pass: layer 1 steps 0..n-1 in a chain, layer 2's step t after its step t-1
    and layer 1's step t."""
    return [{t - 1} if t else set() for t in range(n)] + [{t} | ({n + t - 1} if t else set()) for t in range(n)]


@pytest.mark.parametrize("name, deps, costs, seconds", [
    ("one chain: nothing to split", _chains(1, 6), [1.0] * 6, 6.0),
    ("two chains side by side", _chains(2, 5), [1.0] * 10, 5.0),
    ("two RNN layers: a wavefront one step behind", _layers(8), [1.0] * 16, 9.0),
    ("a long and a short chain", _chains(1, 6) + [set(), {6}], [1.0] * 6 + [1.0, 1.0], 6.0),
    ("fan-out then join", [set(), {0}, {0}, {0}, {0}, {1, 2, 3, 4}], [1.0] * 6, 4.0),
])
def test_the_schedule_of_known_shapes(name, deps, costs, seconds):
    planned = streams.schedule(deps, costs, sync=0.0)
    assert planned.seconds == pytest.approx(seconds)
    assert planned.serial == pytest.approx(sum(costs))
    assert sorted(planned.streams[0] + planned.streams[1]) == list(range(len(deps)))
    assert _runs_to_the_end(deps, planned.streams)


def test_a_costly_wait_keeps_a_short_side_branch_on_one_stream():
    deps, costs = [set(), {0}, {0}, {1, 2}], [1.0, 1.0, 0.1, 1.0]
    assert streams.schedule(deps, costs, sync=0.0).streams[1] == [2]
    assert streams.schedule(deps, costs, sync=0.5).streams[1] == []


@pytest.mark.parametrize("seed", range(20))
def test_random_graphs_schedule_into_streams_that_cannot_wait_for_each_other(seed):
    rng = np.random.default_rng(seed)
    n = 40
    deps = [set(int(j) for j in rng.choice(i, size=min(i, rng.integers(0, 4)), replace=False)) if i else set()
            for i in range(n)]
    costs = list(rng.random(n) * (rng.random(n) < 0.8))  # some free steps (constants, aliases)
    planned = streams.schedule(deps, costs, sync=float(rng.random()) * 0.2)
    assert _runs_to_the_end(deps, planned.streams)
    assert planned.seconds <= planned.serial + 1e-6 * n


# ---- the dependencies of a plan --------------------------------------------------------------------

# sessions whose runs call `plan.function` as the tests set it (at 2 threads their second and third runs
# would be the timed runs deciding a split of their own)
ONE_THREAD = tf.ConfigProto(intra_op_parallelism_threads=1)


def _spawns(monkeypatch):
    """A list that gets an entry each time a split function hands its second stream to the helper (patch
    before compile_streams: the function binds `spawn` when it is made)."""
    made = []
    real = side_thread.spawn
    monkeypatch.setattr(side_thread, "spawn", lambda *args: made.append(1) or real(*args))
    return made


def _plan(sess, fetch, feed):
    sess.run(fetch, feed)
    return next(p for key, p in sess._plans.items() if fetch in key[0] + key[1])


def _index(plan, name):
    return next(i for i, step in enumerate(plan.steps) if getattr(step.op, "name", None) == name)


def _ancestors(deps, i):
    seen, stack = set(), list(deps[i])
    while stack:
        j = stack.pop()
        if j not in seen:
            seen.add(j)
            stack.extend(deps[j])
    return seen


def test_a_variable_update_waits_for_its_reads_and_later_reads_wait_for_it():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.Variable(1.0, name="v")
        doubled = tf.multiply(v, 2.0, name="doubled")  # read before the update
        with tf.control_dependencies([doubled]):
            update = tf.assign_add(v, 1.0, name="update")
        with tf.control_dependencies([update]):
            later = tf.multiply(v.read_value(), 3.0, name="later")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            plan = _plan(sess, later, None)
    deps = streams.dependencies(plan)
    assert _index(plan, "doubled") in _ancestors(deps, _index(plan, "update"))
    assert _index(plan, "update") in _ancestors(deps, _index(plan, "later"))


def test_an_input_overwritten_in_place_waits_for_its_other_readers():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64])
        y = tf.sin(x, name="y")
        z = tf.cos(y, name="z")  # reads y
        w = tf.tanh(y, name="w")  # reads y last: may write into it
        out = tf.add(z, w, name="out")
        with tf.Session() as sess:
            plan = _plan(sess, out, {x: np.ones(64, np.float32)})
    donors = [i for i, step in enumerate(plan.steps) if step.donor is not None and step.op.name == "w"]
    assert donors, "the plan no longer donates y to w: pick another graph"
    assert _index(plan, "z") in streams.dependencies(plan)[donors[0]]


@pytest.mark.parametrize("last_term", ["product", "other"])
def test_an_op_with_a_control_input_on_a_streamed_sum_waits_for_its_last_partial_sum(last_term):
    """A sum streamed as partial sums (plan.stream_sums) is complete at its last partial, which a product's
    gemm may make: an op waiting for the sum by a control input waits for that step in a split run."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [4, 3])
        weights = [tf.constant(np.full((3, 5), float(i))) for i in range(3)]
        terms = [tf.matmul(x, w) for w in weights]
        if last_term == "other":
            terms.append(tf.sin(tf.matmul(x, weights[0])))
        total = tf.add_n(terms, name="total")
        counter = tf.Variable(0.0, dtype=tf.float64, name="counter")
        with tf.control_dependencies([total]):
            bump = tf.assign_add(counter, 1.0, name="bump")
        with tf.Session() as sess:
            sess.run(counter.initializer)
            plan = _plan(sess, bump, {x: np.ones((4, 3))})
    makes_total = next(i for i, step in enumerate(plan.steps) if plan.slot_of[total] in step.outputs)
    assert (plan.steps[makes_total].op.type == registry.MATMUL_ACCUMULATE) == (last_term == "product")
    assert makes_total in _ancestors(streams.dependencies(plan), _index(plan, "bump"))


def test_plans_with_cond_branches_are_not_split():
    graph = tf.Graph()
    with graph.as_default():
        p = tf.placeholder(tf.bool, [])
        out = tf.cond(p, lambda: tf.constant(1.0) * 2.0, lambda: tf.constant(3.0) + 1.0)
        with tf.Session() as sess:
            assert streams.dependencies(_plan(sess, out, {p: True})) is None


# ---- split runs --------------------------------------------------------------------------------------

def _model(seed=0):
    """A training step with two independent towers (something for both streams to do) and Adam."""
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(seed)
        x = tf.placeholder(tf.float32, [16, 12])
        towers = []
        for name in ("a", "b"):
            w = tf.Variable(tf.random_normal([12, 12], seed=1), name=f"w_{name}")
            h = x
            for _ in range(3):
                h = tf.tanh(tf.matmul(h, w))
            towers.append(h)
        loss = tf.reduce_mean(tf.square(towers[0] - towers[1] + 0.5))
        train = tf.train.AdamOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    return graph, x, loss, train, init


def _alternating(plan):
    """Every other step on the helper's stream, both in plan order: the most waits a plan can make."""
    return ([i for i in range(len(plan.steps)) if i % 2 == 0], [i for i in range(len(plan.steps)) if i % 2])


@pytest.mark.parametrize("assign", [
    _alternating,
    lambda plan: (list(range(len(plan.steps))), []),  # all on the caller's stream
    lambda plan: ([], list(range(len(plan.steps)))),  # all on the helper's
    lambda plan: streams.schedule(streams.dependencies(plan), [1.0] * len(plan.steps), sync=0.0).streams,
], ids=["alternating", "caller", "helper", "scheduled"])
def test_a_split_run_computes_what_the_serial_run_does(assign):
    feeds = [np.random.default_rng(i).random((16, 12), dtype=np.float32) for i in range(4)]
    results = []
    for split in (False, True):
        graph, x, loss, train, init = _model()
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            plan = _plan(sess, train, {x: feeds[0]})
            run = codegen.compile_streams(plan, assign(plan), streams.dependencies(plan)) if split else plan.function
            losses = []
            for feed in feeds:
                run(feed)
                losses.append(sess.run(loss, {x: feed}))
            results.append((losses, sess.run(graph.get_collection("trainable_variables"))))
    assert results[0][0] == results[1][0]
    for serial, split in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(serial, split)


def _failing_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None])
        i = tf.placeholder(tf.int32, [None])
        slow = tf.reduce_sum(tf.sin(x))
        gathered = tf.gather(x, i, name="gathered")  # fails for an index out of range
        out = slow + tf.reduce_sum(gathered)
    return graph, x, i, out


@pytest.mark.parametrize("failing_stream", [0, 1])
def test_an_error_in_either_stream_names_its_op_and_stops_both(failing_stream, monkeypatch):
    spawned = _spawns(monkeypatch)
    graph, x, i, out = _failing_graph()
    with tf.Session(graph=graph, config=ONE_THREAD) as sess:
        feed = {x: np.ones(8, np.float32), i: np.array([1, 2], np.int32)}
        plan = _plan(sess, out, feed)
        deps = streams.dependencies(plan)
        failing = _index(plan, "gathered")
        others = [j for j in range(len(plan.steps)) if j != failing]
        order = [others, [failing]] if failing_stream else [[failing], others]
        order = [sorted(order[0]), sorted(order[1])]
        plan.function = codegen.compile_streams(plan, tuple(order), deps)
        before = threading.active_count()
        with pytest.raises(errors.InvalidArgumentError, match="99") as raised:
            sess.run(out, {x: np.ones(8, np.float32), i: np.array([1, 99], np.int32)})
        assert raised.value.op.name == "gathered"
        assert sess.run(out, feed) == pytest.approx(8 * np.sin(1.0) + 2.0)  # the next run is whole
        assert len(spawned) == 2  # both runs were split
        assert threading.active_count() <= before + 1


# ---- the session ---------------------------------------------------------------------------------------

def test_a_two_thread_session_measures_splits_and_runs_its_plan_both_ways(monkeypatch):
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    monkeypatch.setattr(thread_policy, "WARM_SECONDS", 0.0)  # its dozen sub-millisecond steps: all warming else
    monkeypatch.setattr(streams, "MIN_PLAN_SECONDS", 0.0)
    monkeypatch.setattr(streams, "MIN_GAIN", 1.0)
    feeds = [np.random.default_rng(i).random((16, 12), dtype=np.float32) for i in range(12)]
    results = {}
    for threads in (1, 2):
        graph, x, loss, train, init = _model()
        with tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
            sess.run(init)
            for feed in feeds:
                sess.run(train, {x: feed})
            results[threads] = sess.run(graph.get_collection("trainable_variables"))
            train_plan = next(p for key, p in sess._plans.items() if train in key[1])
            times = sess._step_times[id(train_plan)]
            if threads == 2:
                assert train_plan.split_function is not None and "split" in times.ways
                assert len(times.by_way["split"]) > 0
            else:
                assert train_plan.split_function is None and train_plan.splitting is None
    for one, two in zip(results[1], results[2]):
        np.testing.assert_array_equal(one, two)


@pytest.mark.parametrize("inter_op, splits", [(0, True), (2, True), (1, False)])
def test_one_inter_op_thread_keeps_every_op_on_one_stream(monkeypatch, inter_op, splits):
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    monkeypatch.setattr(streams, "MIN_PLAN_SECONDS", 0.0)
    monkeypatch.setattr(streams, "MIN_GAIN", 1.0)
    graph, x, loss, train, init = _model()
    config = tf.ConfigProto(intra_op_parallelism_threads=2, inter_op_parallelism_threads=inter_op)
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        for _ in range(2 + streams.PROFILE_RUNS):
            sess.run(train, {x: np.ones((16, 12), np.float32)})
        plan = next(p for key, p in sess._plans.items() if train in key[1])
        assert (plan.split_function is not None) == splits


def test_several_fetches_made_on_the_helpers_stream_come_back(monkeypatch):
    """Values the caller's stream never reads but fetches are handed over after the helper ends."""
    spawned = _spawns(monkeypatch)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [8])
        fetches = [tf.sin(x), tf.cos(x) * 2.0, tf.reduce_sum(x)]
        with tf.Session(config=ONE_THREAD) as sess:
            feed = {x: np.arange(8, dtype=np.float32)}
            expected = sess.run(fetches, feed)
            sess.run(fetches, feed)
            plan = next(p for key, p in sess._plans.items() if key[0] == tuple(fetches))
            plan.function = codegen.compile_streams(plan, ([], list(range(len(plan.steps)))),
                                                    streams.dependencies(plan))
            for got, want in zip(sess.run(fetches, feed), expected):
                np.testing.assert_array_equal(got, want)
            assert spawned == [1]


# ---- the caller's steps that run alone share their calls ------------------------------------------

def test_the_schedule_names_the_callers_steps_no_helper_step_overlaps():
    deps, costs = [set(), {0}, {0}, {1, 2}], [1.0, 1.0, 1.0, 1.0]  # a fork, two branches side by side, a join
    planned = streams.schedule(deps, costs, sync=0.0)
    (branch,) = [i for i in (1, 2) if i in planned.streams[0]]
    assert planned.alone == frozenset(planned.streams[0]) - {branch}
    assert {0, 3} <= planned.alone


def test_steps_that_run_alone_get_two_work_sharing_workers_and_the_rest_one():
    """The caller's steps listed as shared run with 2 workers (their big calls cut in pieces); its other
    steps, the helper's, and whatever follows a failed run, with 1."""
    from tftk.kernels import work_sharing
    seen = {}

    def record(name):
        def run(x):
            seen[name] = work_sharing.workers()
            if name == "fails" and x[0] < 0:
                raise ValueError("negative")
            return x
        return run

    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4])
        first = tf.py_func(record("first"), [x], tf.float32, name="first")
        left = tf.py_func(record("left"), [first], tf.float32, name="left")
        right = tf.py_func(record("right"), [first], tf.float32, name="right")
        last = tf.py_func(record("fails"), [left + right], tf.float32, name="last")
        with tf.Session(config=ONE_THREAD) as sess:
            feed = {x: np.ones(4, np.float32)}
            plan = _plan(sess, last, feed)
            deps = streams.dependencies(plan)
            on_helper = {_index(plan, "right/PyFunc")}
            order = ([i for i in range(len(plan.steps)) if i not in on_helper], sorted(on_helper))
            shared = frozenset({_index(plan, "first/PyFunc"), _index(plan, "last/PyFunc")})
            plan.function = codegen.compile_streams(plan, order, deps, shared)
            sess.run(last, feed)
            assert seen == {"first": 2, "left": 1, "right": 1, "fails": 2}
            with pytest.raises(errors.InvalidArgumentError, match=r"last/PyFunc.*negative"):
                sess.run(last, {x: -np.ones(4, np.float32)})
            assert work_sharing.workers() == 1
