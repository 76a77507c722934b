"""One nested-structure walker (framework.nest) for fetches, cond results and loop variables."""

import collections

import numpy as np
import pytest

import tftk as tf
from tftk.framework import nest

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("structure, leaves", [
    (1, [1]),
    ([1, (2, 3)], [1, 2, 3]),
    ({"b": 2, "a": [1, 0]}, [1, 0, 2]),  # dict values in sorted key order
    (Point(1, [2, 3]), [1, 2, 3]),
    ("text", ["text"]),  # strings are leaves
    ({1: "x", "k": "y"}, ["x", "y"]),  # keys that do not sort: visited as given
])
def test_flatten_and_pack_round_trip(structure, leaves):
    assert nest.flatten(structure) == leaves
    rebuilt = nest.pack_sequence_as(structure, leaves)
    assert rebuilt == structure and type(rebuilt) is type(structure)


def test_rebuilt_dicts_keep_their_key_order():
    rebuilt = nest.pack_sequence_as({"b": 0, "a": 0}, [1, 2])
    assert list(rebuilt) == ["b", "a"] and rebuilt == {"a": 1, "b": 2}


def test_wrong_leaf_counts_are_errors():
    with pytest.raises(ValueError, match="Too few leaves"):
        nest.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError, match="Too many leaves"):
        nest.pack_sequence_as([1, 2], [1, 2, 3])


def test_cond_while_and_fetches_share_the_structure_rules():
    x = tf.constant(2.0)
    out = tf.cond(tf.constant(True), lambda: {"b": x * 2, "a": Point(x, x + 1)},
                  lambda: {"b": x, "a": Point(x, x)})
    loop = tf.while_loop(lambda s: s["i"] < 3, lambda s: {"i": s["i"] + 1, "v": s["v"] * 2},
                         [{"i": tf.constant(0), "v": x}])
    with tf.Session() as sess:
        got = sess.run({"cond": out, "loop": loop})
    assert got["cond"]["b"] == 4.0 and got["cond"]["a"] == Point(2.0, 3.0)
    assert got["loop"][0]["i"] == 3 and got["loop"][0]["v"] == 16.0


def test_composites_in_fetches_come_back_as_values():
    sparse = tf.SparseTensor(indices=[[0, 1]], values=[5.0], dense_shape=[2, 2])
    with tf.Session() as sess:
        got = sess.run([sparse])
    np.testing.assert_array_equal(got[0].values, [5.0])


def test_operation_node_def_names_the_op():
    c = tf.constant(1.0, name="one")
    assert c.op.node_def.name == "one" and c.op.node_def.op == "Const"


def test_kernel_errors_name_their_op():
    x = tf.placeholder(tf.float32, [None])
    values, _ = tf.nn.top_k(x, k=3)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="at least k=3") as info:
            sess.run(values, {x: [1.0]})
    assert info.value.op is values.op and info.value.node_def is None
