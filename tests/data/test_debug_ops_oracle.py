"""tf.Print, tf.print, tf.Assert and the tf.debugging asserts against real TensorFlow: the same text
printed, the same error class and message; py_func's behaviour."""

import sys

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import run_in_tf, run_in_tftk

# Captures what the graph prints on fd 2 (TF's Print writes there from C++) and what tf.print
# writes to a file, so both libraries are compared on the same bytes.
CAPTURE = '''
import os, sys, tempfile
def captured(run):
    fd, path = tempfile.mkstemp()
    saved, saved_stream = os.dup(2), sys.stderr
    sys.stderr.flush()
    os.dup2(fd, 2)
    sys.stderr = open(2, "w", closefd=False)  # Python-level writers (tftk) reach fd 2 too
    try:
        run()
    finally:
        sys.stderr.flush()
        sys.stderr = saved_stream
        os.dup2(saved, 2)
    lines = open(path).read().splitlines()
    return np.array([l for l in lines if not l[:1] in "IWE" or l.startswith("msg")])
'''

PRINTS = {
    "Print_summarize": "x = tf.constant([[1, 2, 3], [4, 5, 6]])\n"
                       "y = tf.Print(x, [x, tf.constant(2.5), tf.constant([b'ab', b'c']), tf.constant(True)], 'msg: ')\n"
                       "z = tf.Print(y, [tf.range(10)], 'msg2 ', summarize=4)\n"
                       "w = tf.Print(z, [tf.reshape(tf.range(8), [2, 2, 2])], summarize=3)",
    "Print_first_n": "v = tf.Variable(0)\ninc = tf.assign_add(v, 1)\n"
                     "w = tf.Print(inc, [inc], 'msg n=', first_n=2)",
}
RUNS = "with tf.Session() as s:\n    s.run(tf.global_variables_initializer())\n" \
       "    outputs = {'text': captured(lambda: [s.run(w) for _ in range(3)])}\n"

TF_PRINT = {
    "print_v2": "path = tempfile.mkstemp()[1]\n"
                "x = tf.reshape(tf.range(100), [10, 10])\n"
                "ops = [tf.print('hello', tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant(2.5), {'a': tf.constant(7)}, "
                "output_stream='file://' + path),\n"
                "       tf.print(x, summarize=2, output_stream='file://' + path),\n"
                "       tf.print(tf.constant([b'a', b'b']), 'x', sep='|', end='!\\n', output_stream='file://' + path)]\n"
                "with tf.Session() as s:\n"
                "    for op in ops: s.run(op)\n"
                "outputs = {'text': np.array(open(path).read().splitlines())}\n",
}

ASSERTS = {
    "Assert": "a = tf.Assert(tf.constant(False), ['bad', tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant(2.5)])",
    "Assert_passes": "a = tf.Assert(tf.constant(True), ['fine'])",
    "equal": "a = tf.assert_equal(p, tf.constant([1, 2]), message='custom')",
    "none_equal": "a = tf.debugging.assert_none_equal(p, tf.constant([1, 3]))",
    "less": "a = tf.assert_less(p, tf.constant([2, 3]))",
    "less_equal": "a = tf.assert_less_equal(p, 2)",
    "greater": "a = tf.assert_greater(p, tf.constant([0, 3]))",
    "greater_equal": "a = tf.assert_greater_equal(p, 3)",
    "positive": "a = tf.assert_positive(tf.subtract(p, 2, name='shifted'))",
    "negative": "a = tf.assert_negative(p)",
    "non_negative": "a = tf.assert_non_negative(tf.subtract(p, 2, name='shifted'))",
    "non_positive": "a = tf.assert_non_positive(p)",
    "static_equal": "a = tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))",
    "static_rank": "a = tf.assert_rank(tf.constant([1, 2]), 2)",
    "static_rank_at_least": "a = tf.assert_rank_at_least(tf.constant([1, 2]), 1)",
    "static_type": "a = tf.assert_type(tf.constant([1, 2]), tf.float32)",
    "static_integer": "a = tf.assert_integer(tf.constant([1.5]))",
}
ASSERT_RUN = '''
p = tf.placeholder(tf.int32, [2], name="p")
%s
with tf.control_dependencies([a]):
    out = tf.identity(p)
with tf.Session() as s:
    try:
        outputs = {"value": s.run(out, {p: [1, 3]})}
    except tf.errors.InvalidArgumentError as e:  # the assertion's own line of TF's longer message
        line = [l for l in str(e).split("\\n") if "assertion failed" in l][0]
        outputs = {"error": np.array(line[line.index("assertion failed"):])}
'''

CASES = {name: (CAPTURE + src + "\n" + RUNS, {}) for name, src in PRINTS.items()}
CASES.update({name: ("import tempfile\n" + src, {}) for name, src in TF_PRINT.items()})
CASES.update({name: (ASSERT_RUN % src, {}) for name, src in ASSERTS.items()})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(oracle, name):
    expected, got = oracle[name], run_in_tftk(*CASES[name])
    assert got.error == expected.error, (got.message, expected.message)
    if expected.error is not None:
        assert got.message.split("\n")[0] == expected.message.split("\n")[0] or name.startswith("static")
        return
    for key, value in expected.outputs.items():
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)


def test_static_failure_names_the_tensors():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"x == y did not hold(.|\n)*\[1 3\]"):
            tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 3]))
        with pytest.raises(ValueError, match="must have rank 2.  Received rank 1"):
            tf.assert_rank(tf.constant([1, 2]), 2)


# ---- py_func -------------------------------------------------------------------------------------

def test_py_func_runs_python_on_numpy_values():
    calls = []

    def f(a, b):
        calls.append(1)
        return a * 2, np.array([b"x"] * len(b), dtype=object)

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        s = tf.placeholder(tf.string, [None])
        y, t = tf.py_func(f, [x, s], [tf.float32, tf.string])
        assert y.shape.ndims is None  # unknown until set
        y.set_shape([None])
        z = tf.numpy_function(lambda v: v + 1, [y], tf.float32)
        with tf.Session() as sess:
            got = sess.run([y, t, z], {x: [1.0, 2.0], s: [b"a", b"b"]})
    np.testing.assert_array_equal(got[0], [2.0, 4.0])
    assert got[1].tolist() == [b"x", b"x"]
    np.testing.assert_array_equal(got[2], [3.0, 5.0])
    assert len(calls) == 1


@pytest.mark.parametrize("exc, error", [(ValueError, tf.errors.InvalidArgumentError),
                                        (StopIteration, tf.errors.OutOfRangeError),
                                        (RuntimeError, tf.errors.UnknownError)])
def test_py_func_exceptions_become_tf_errors(exc, error):
    def fail(x):
        raise exc("nope")

    with tf.Graph().as_default():
        y = tf.py_func(fail, [tf.constant(1)], tf.int32, name="my_func")
        with tf.Session() as sess, pytest.raises(error, match="my_func.*raised.*nope"):
            sess.run(y)


def test_py_func_wrong_output_type_is_named():
    with tf.Graph().as_default():
        y = tf.py_func(lambda: np.array([1.5]), [], tf.int64)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="expected int64"):
            sess.run(y)


def test_stateful_py_func_runs_every_time_stateless_may_be_shared():
    count = []
    with tf.Graph().as_default():
        y = tf.py_func(lambda: count.append(1) or np.int64(len(count)), [], tf.int64)
        with tf.Session() as sess:
            assert [sess.run(y), sess.run(y)] == [1, 2]


def test_print_writes_to_stderr(capsys):
    with tf.Graph().as_default():
        x = tf.Print(tf.constant([1, 2]), [tf.constant([1, 2])], "values: ")
        with tf.Session() as sess:
            sess.run(x)
    assert capsys.readouterr().err == "values: [1 2]\n"
    with tf.Graph().as_default():
        op = tf.print("a", tf.constant(1), output_stream=sys.stdout)
        with tf.Session() as sess:
            sess.run(op)
    assert capsys.readouterr().out == "a 1\n"
