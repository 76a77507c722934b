"""Text ops: values on bytes, and the errors a user sees for bad arguments."""

import numpy as np
import pytest

import tftk as tf


def run(t):
    with tf.Session() as s:
        return s.run(t)


def test_split_returns_a_sparse_tensor_of_the_pieces():
    with tf.Graph().as_default():
        sp = tf.strings.split(tf.constant(["a b", "c"]))
        value = run(sp)
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 1], [1, 0]])
    assert list(value.values) == [b"a", b"b", b"c"]
    np.testing.assert_array_equal(value.dense_shape, [2, 2])


def test_regex_replace_uses_groups_in_the_rewrite():
    with tf.Graph().as_default():
        assert run(tf.strings.regex_replace(tf.constant(["ab-cd"]), r"(\w+)-(\w+)", r"\2+\1"))[0] == b"cd+ab"


@pytest.mark.parametrize("build, error, message", [
    (lambda: tf.strings.regex_replace(tf.constant(["a"]), "(", "x"), ValueError, "invalid regular expression"),
    (lambda: tf.strings.length(tf.constant(["a"]), unit="WORD"), ValueError, "'BYTE' or 'UTF8_CHAR'"),
    (lambda: tf.strings.to_number(tf.constant(["1"]), out_type=tf.bool), TypeError, "out_type must be"),
    (lambda: tf.strings.lower(tf.constant([1])), TypeError, "must be a string tensor"),
    (lambda: tf.strings.split(tf.constant([["a"]])), ValueError, "input must be a vector"),
])
def test_bad_arguments_are_refused_at_build_time(build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()
