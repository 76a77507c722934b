"""tf.graph_util's node helpers, tf.compat.forward_compatible and tf.logging's status calls, against TF 2.21."""

import logging

import pytest

import tftk
from tests.tf_oracle import assert_same_outputs, both_succeeded, run_in_tf

GRAPH_UTIL_SNIPPET = """
a = tf.constant([1, 2], name="a")
b = tf.cast(a, tf.float32, name="b")
c = tf.constant(["x"], name="c")
f = tf.constant(1.0, name="f")
i64 = tf.cast(tf.constant([1, 2], tf.int64), tf.float32, name="i64")
p = tf.placeholder(tf.float32, [None, 3], name="p")
v = tf.Variable(tf.zeros([2]), name="v")
s = tf.dynamic_stitch([tf.constant([0, 1]), tf.constant([2])], [a, tf.constant([3])], name="s")
g = tf.get_default_graph()
gu = tf.graph_util
names = ["a", "b", "c", "f", "i64", "p", "v", "v/Assign", "s"]
outputs = {
    "cpu": np.array([gu.must_run_on_cpu(g.get_operation_by_name(n)) for n in names]),
    # tftk's DynamicStitch NodeDef carries no T attr yet, so NodeDefs are checked without "s"
    "cpu_def": np.array([gu.must_run_on_cpu(g.get_operation_by_name(n).node_def) for n in names[:-1]]),
    "cpu_pinned": np.array([gu.must_run_on_cpu(g.get_operation_by_name(n), pin_variables_on_cpu=True)
                            for n in names]),
    "shape_p": np.array(str(gu.tensor_shape_from_node_def_name(g, "p"))),
    "shape_b": np.array(str(gu.tensor_shape_from_node_def_name(g, "b:0"))),
    "shape_s": np.array(str(gu.tensor_shape_from_node_def_name(g, "s"))),
}
gd = tf.Graph()
with gd.as_default():
    tf.constant([1.0, 2.0], name="x")
with tf.Graph().as_default():
    y, = gu.import_graph_def(gd.as_graph_def(), return_elements=["x:0"], name="imp")
    with tf.Session() as sess:
        outputs["imported"] = sess.run(y * 2.0)
"""

FORWARD_COMPAT_SNIPPET = """
dates = [(2018, 1, 1), (2025, 12, 31), (2026, 1, 15), (2026, 1, 16), (2026, 1, 17), (2026, 2, 1), (2030, 6, 1)]
outputs = {"fc": np.array([tf.compat.forward_compatible(*d) for d in dates])}
"""

CASES = {"graph_util": (GRAPH_UTIL_SNIPPET, {}), "forward_compat": (FORWARD_COMPAT_SNIPPET, {})}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.slow  # real TensorFlow in a subprocess
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_tensorflow(oracle, case):
    assert_same_outputs(*both_succeeded(oracle, CASES, case))


@pytest.mark.parametrize("date, expected", [((2026, 1, 15), True), ((2026, 1, 16), False),
                                            ((2026, 1, 20), True), ((2026, 1, 21), False)])
def test_forward_compatible_delta_days_moves_the_horizon(monkeypatch, date, expected):
    if date >= (2026, 1, 17):
        monkeypatch.setenv("TF_FORWARD_COMPATIBILITY_DELTA_DAYS", "5")
    assert tftk.compat.forward_compatible(*date) is expected


def test_forward_compatible_rejects_a_bad_delta(monkeypatch):
    monkeypatch.setenv("TF_FORWARD_COMPATIBILITY_DELTA_DAYS", "soon")
    with pytest.raises(ValueError, match="TF_FORWARD_COMPATIBILITY_DELTA_DAYS='soon'"):
        tftk.compat.forward_compatible(2020, 1, 1)


def test_task_level_status_message_logs_at_error_and_flush_flushes(monkeypatch):
    flushed, records = [], []

    class Recorder(logging.Handler):
        def emit(self, record):
            records.append((record.levelno, record.getMessage()))

        def flush(self):
            flushed.append(True)

    logger = logging.getLogger("tensorflow")  # only the recorder, restored afterwards
    monkeypatch.setattr(logger, "handlers", [Recorder()])
    monkeypatch.setattr(logger, "propagate", False)
    tftk.logging.TaskLevelStatusMessage("step 3 of 9")
    tftk.logging.flush()
    assert records == [(logging.ERROR, "step 3 of 9")]
    assert flushed


@pytest.mark.parametrize("op, attr, dtype, expected", [
    ("DynamicStitch", "T", tftk.int32, True), ("DynamicStitch", "T", tftk.float32, False),
    ("ParallelDynamicStitch", "T", tftk.int32, True), ("Cast", "SrcT", tftk.int32, True),
    ("Cast", "SrcT", tftk.string, False), ("Const", "dtype", tftk.string, True),
    ("Const", "dtype", tftk.int64, False), ("MatMul", "T", tftk.int32, False)])
def test_must_run_on_cpu_reads_the_node_def_attr(op, attr, dtype, expected):
    from tftk.proto.tensorflow import NodeDef
    node = NodeDef(name="n", op=op)
    node.attr[attr].type = dtype.as_datatype_enum
    assert tftk.graph_util.must_run_on_cpu(node) is expected
