"""Session.run: fetch forms, feeds, lifetimes, default sessions, per-session state, plan caching."""

import collections

import numpy as np
import pytest

import tftk as tf

Pair = collections.namedtuple("Pair", "left right")


@pytest.fixture
def graph_ab():
    a = tf.constant([1.0, 2.0], name="a")
    b = tf.multiply(a, 3.0, name="b")
    return a, b


def test_fetch_a_tensor_an_op_and_name_strings(graph_ab):
    a, b = graph_ab
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(b), [3.0, 6.0])
        assert sess.run(b.op) is None
        np.testing.assert_array_equal(sess.run("b:0"), [3.0, 6.0])
        assert sess.run("b") is None  # an op name fetches the op
        assert isinstance(sess.run(tf.reduce_sum(b)), np.float32)  # 0-d results are numpy scalars


def test_fetch_nested_structures_keep_their_shape(graph_ab):
    a, b = graph_ab
    with tf.Session() as sess:
        out = sess.run({"list": [a, (b, "a:0")], "pair": Pair(a, b.op), "one": b})
    assert set(out) == {"list", "pair", "one"}
    assert isinstance(out["list"], list) and isinstance(out["list"][1], tuple)
    np.testing.assert_array_equal(out["list"][0], [1.0, 2.0])
    np.testing.assert_array_equal(out["list"][1][0], [3.0, 6.0])
    np.testing.assert_array_equal(out["list"][1][1], [1.0, 2.0])
    assert isinstance(out["pair"], Pair) and out["pair"].right is None
    np.testing.assert_array_equal(out["pair"].left, [1.0, 2.0])
    np.testing.assert_array_equal(out["one"], [3.0, 6.0])


def test_fetch_of_none_is_a_type_error():
    x = tf.constant(1)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
            sess.run([x, None])


def test_feeds_keyed_by_tensor_or_name():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        assert sess.run(y, {x: [[1.0, 2.0]]}) == 6.0
        assert sess.run(y, {"x:0": np.ones((3, 2))}) == 12.0
        assert sess.run(y, feed_dict={x: np.array([[1, 1]], dtype=np.int64)}) == 4.0  # converted


def test_feeding_a_computed_tensor_overrides_it_and_skips_its_producer():
    counter = tf.Variable(0, name="counter")
    bumped = tf.assign_add(counter, 1)
    out = bumped * 10
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(out, {bumped: 5}) == 50
        assert sess.run(counter) == 0  # the feed replaced the AssignAdd: it never ran
        assert sess.run(out) == 10
        assert sess.run(counter) == 1


def test_feeding_a_constant_and_a_variable_read():
    c = tf.constant(2.0)
    v = tf.Variable(3.0)
    y = c * v
    with tf.Session() as sess:
        assert sess.run(y, {c: 5.0, v: 7.0}) == 35.0  # even uninitialised: the feed wins


def test_closed_session_refuses_to_run_and_context_manager_closes():
    x = tf.constant(1)
    sess = tf.Session()
    assert sess.run(x) == 1
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(x)
    with tf.Session() as sess2:
        assert tf.get_default_session() is sess2
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError, match="closed Session"):
        sess2.run(x)


def test_as_default_enables_eval_and_op_run():
    v = tf.Variable(4.0)
    doubled = v * 2.0
    sess = tf.Session()
    with pytest.raises(ValueError, match="no default session"):
        doubled.eval()
    with sess.as_default():
        assert tf.get_default_session() is sess
        v.initializer.run()
        assert doubled.eval() == 8.0
        assert v.eval() == 4.0
        p = tf.placeholder(tf.float32, [])
        assert (p + 1.0).eval(feed_dict={p: 2.0}) == 3.0
    assert tf.get_default_session() is None
    assert doubled.eval(session=sess) == 8.0
    sess.close()


def test_session_on_an_explicit_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(7, name="x")
    other = tf.constant(1)
    with tf.Session(graph=g) as sess:
        assert sess.graph is g and tf.get_default_graph() is g
        assert sess.run(x) == 7
        with pytest.raises(ValueError, match="not an element of this graph"):
            sess.run(other)
    assert tf.get_default_graph() is not g
    with pytest.raises(ValueError, match="different from the session's graph"):
        x.eval(session=tf.Session())


def test_interactive_session_installs_itself_as_default():
    x = tf.constant(3) + 1
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert x.eval() == 4
    finally:
        sess.close()
    assert tf.get_default_session() is None


def test_two_sessions_on_one_graph_hold_separate_variable_values():
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    s1, s2 = tf.Session(), tf.Session()
    s1.run(v.initializer)
    s2.run(v.initializer)
    s1.run(inc)
    s1.run(inc)
    assert s1.run(v) == 3.0 and s2.run(v) == 1.0
    s3 = tf.Session()
    with pytest.raises(tf.errors.FailedPreconditionError):
        s3.run(v)
    for s in (s1, s2, s3):
        s.close()


def test_fetched_variable_values_are_snapshots():
    v = tf.Variable([1.0, 2.0])
    inc = tf.assign_add(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        after_inc = sess.run(inc)
        sess.run(inc)
    np.testing.assert_array_equal(before, [1.0, 2.0])
    np.testing.assert_array_equal(after_inc, [2.0, 3.0])


def test_plans_are_cached_and_graph_growth_invalidates_them():
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    with tf.Session() as sess:
        sess.run(y, {x: 1.0})
        plans = list(sess._plans.values())
        assert len(plans) == 1
        sess.run(y, {x: 2.0})
        assert list(sess._plans.values()) == plans and list(sess._plans.values())[0] is plans[0]
        sess.run([y], {x: 2.0})  # same element set: same plan
        assert len(sess._plans) == 1
        sess.run(y + 1.0, {x: 2.0})  # grows the graph: old plans are dropped
        assert len(sess._plans) == 1 and plans[0] not in sess._plans.values()
        assert sess.run(y, {x: 3.0}) == 6.0


def test_feed_dict_order_does_not_make_a_new_plan():
    a, b = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    d = a - b
    with tf.Session() as sess:
        assert sess.run(d, {a: 5.0, b: 2.0}) == 3.0
        assert sess.run(d, {b: 2.0, a: 5.0}) == 3.0  # same feed set, other order: same values
        assert len(sess._plans) == 1


def test_make_callable_runs_with_positional_feeds():
    x = tf.placeholder(tf.float32, [])
    y = x * x
    with tf.Session() as sess:
        square = sess.make_callable(y, [x])
        assert square(3.0) == 9.0 and square(4.0) == 16.0


def _callable_graph():
    """(feeds, fetches) with two feeds, nested fetches, an op target and a variable."""
    a, b = tf.placeholder(tf.float32, [None, 2], name="a"), tf.placeholder(tf.int32, [], name="b")
    v = tf.Variable(1.0, name="v")
    total = tf.reduce_sum(a) * tf.cast(b, tf.float32) + v
    return [b, a], {"total": total, "pair": (a * 2.0, b + 1), "bump": tf.assign_add(v, 1.0).op}


@pytest.mark.parametrize("feeds", [
    ([[1.0, 2.0]], 3),
    ([[1.0, 2.0], [3.0, 4.0]], 2),  # another batch size: the same plan
    (np.array([[0.5, 0.25]], np.float64), np.int64(1)),  # converted as run converts
])
def test_make_callable_gives_what_run_gives(feeds):
    value_a, value_b = feeds
    (b, a), fetches = _callable_graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(fetches, {a: value_a, b: value_b})
        got = sess.make_callable(fetches, [b, a])(value_b, value_a)  # feed_list in another order than the ops
    assert sorted(got) == sorted(expected) and got["bump"] is None
    assert got["total"] == expected["total"] + 1.0  # the variable was bumped by the run before
    for got_part, expected_part in zip(got["pair"], expected["pair"]):
        np.testing.assert_array_equal(got_part, expected_part)
        assert got_part.dtype == expected_part.dtype


@pytest.mark.parametrize("value_a, value_b, error, message", [
    ([1.0, 2.0], 1, ValueError, "Cannot feed value of shape (2,) for Tensor 'a:0', which has shape '(?, 2)'"),
    ([[1.0, 2.0]], 1.5, TypeError, "Cannot feed a value of dtype float64 to Tensor 'b:0' of dtype int32."),
    ([["x", "y"]], 1, TypeError, "Cannot feed a value of dtype <U1 to Tensor 'a:0' of dtype float32."),
])
def test_make_callable_refuses_bad_feeds_as_run_does(value_a, value_b, error, message):
    (b, a), fetches = _callable_graph()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        call = sess.make_callable(fetches["total"], [a, b])
        with pytest.raises(error) as from_run:
            sess.run(fetches["total"], {a: value_a, b: value_b})
        with pytest.raises(error) as from_callable:
            call(value_a, value_b)
    assert str(from_callable.value) == str(from_run.value) == message


def test_make_callable_after_graph_growth_and_close():
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as sess:
        double = sess.make_callable(x * 2.0, [x])
        tf.constant(1.0)  # the graph grows after the callable was made
        assert double(4.0) == 8.0
        with pytest.raises(TypeError, match="takes 1 feed values, got 2"):
            double(1.0, 2.0)
    with pytest.raises(RuntimeError, match="closed Session"):
        double(1.0)
