"""TF1 control-flow idioms written by real TensorFlow (v1 control flow) and run in tftk: a table.

Each case is TF1 code building `out` (a tensor or list of tensors) from placeholder `x`; real
TensorFlow builds it with v1 control flow, freezes it (gradients included where a case takes
them) and records its outputs, then tftk imports the GraphDef and must give the same values.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tftk as tf
from tftk.proto.tensorflow import GraphDef

from tests.tf_oracle import run_script_in_tf

X = np.linspace(-1.0, 1.5, 12, dtype=np.float32).reshape(3, 4)

CASES = {
    "while_counter": "out = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 1.1 + tf.reduce_sum(x)), "
                     "[0, x])[1]",
    "while_max_iterations": "out = tf.while_loop(lambda i, a: i < 100, lambda i, a: [i + 1, tf.tanh(a) + 0.5], "
                            "[0, x], maximum_iterations=3)[1]",
    "while_growing_shape": "out = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.concat([a, a * 2.0], 0)), "
                           "[0, x], shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 4])])[1]",
    "nested_cond": "out = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.cond(x[0, 0] < 0, lambda: x * 3.0, "
                   "lambda: x - 1.0), lambda: -x)",
    "cond_tuple_and_outer_tensor": "y = x * 2.0\nout = list(tf.cond(x[0, 1] > 5.0, lambda: (y, x + 1.0), "
                                   "lambda: (x, y)))",
    "case": "s = tf.reduce_sum(x)\nout = tf.case([(s < 0, lambda: x * 0.0), (s < 10, lambda: x + 7.0)], "
            "default=lambda: x)",
    "scan": "out = tf.scan(lambda acc, row: acc * 0.5 + row, x)",
    "map_fn": "out = tf.map_fn(lambda row: tf.reduce_max(row) * row, x)",
    "foldl": "out = tf.foldl(lambda acc, row: acc + tf.sin(row), x, initializer=tf.zeros([4]))",
    "dynamic_tensor_array": "ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)\n"
                            "_, ta = tf.while_loop(lambda i, t: i < 4, lambda i, t: (i + 1, t.write(i, x[:, i] * "
                            "tf.cast(i, tf.float32))), [0, ta])\nout = ta.stack()",
    "gradient_of_while": "w = tf.constant(np.full([4, 4], 0.3, np.float32))\n"
                         "y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.tanh(tf.matmul(a, w))), "
                         "[0, x])[1]\nout = tf.gradients(tf.reduce_sum(y * y), [x, w])",
    "gradient_of_cond_in_while": "y = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.cond(i > 1, "
                                 "lambda: a * a, lambda: tf.sin(a))), [0, x])[1]\n"
                                 "out = tf.gradients(tf.reduce_sum(y), x)",
    "gradient_of_indexing_in_while": "y = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a + x[:, i] ** 2), "
                                     "[0, tf.zeros([3])])[1]\nout = tf.gradients(tf.reduce_sum(y * y), x)",
    "gradient_of_tensor_array_loop": "ta = tf.TensorArray(tf.float32, size=3).unstack(x)\n"
                                     "acc = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * ta.read(i) + 1.0), "
                                     "[0, tf.ones([4])])[1]\nout = tf.gradients(tf.reduce_sum(acc), x)",
    "bidirectional_gru": "seq = tf.reshape(x, [3, 2, 2])\n"
                         "(fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(tf.nn.rnn_cell.GRUCell(3), "
                         "tf.nn.rnn_cell.GRUCell(3), seq, sequence_length=[2, 1, 2], dtype=tf.float32)\n"
                         "out = [fw, bw]",
    "stacked_lstm_final_state": "seq = tf.reshape(x, [3, 2, 2])\ncell = tf.nn.rnn_cell.MultiRNNCell("
                                "[tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.LSTMCell(2)])\n"
                                "_, state = tf.nn.dynamic_rnn(cell, seq, dtype=tf.float32)\n"
                                "out = [state[0].c, state[1].h]",
    "gradient_of_scan": "out = tf.gradients(tf.reduce_sum(tf.scan(lambda acc, row: acc * row + 1.0, x)), x)",
}

TF_SCRIPT = """
import json, sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.disable_control_flow_v2()
cases, x_value, folder = json.loads(open(sys.argv[1]).read()), np.load(sys.argv[2]), sys.argv[3]
for name, code in cases.items():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        scope = {"tf": tf, "np": np, "x": x}
        exec(code, scope)
        outs = scope["out"] if isinstance(scope["out"], list) else [scope["out"]]
        outs = [tf.identity(t, name="out_%d" % i) for i, t in enumerate(outs)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(outs, {x: x_value})
            graph_def = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(),
                                                                     [t.op.name for t in outs])
    open("%s/%s.pb" % (folder, name), "wb").write(graph_def.SerializeToString())
    np.savez("%s/%s.npz" % (folder, name), *values)
"""


@pytest.fixture(scope="module")
def tf_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("v1_control_flow")
    (folder / "cases.json").write_text(json.dumps(CASES))
    np.save(folder / "x.npy", X)
    (folder / "make.py").write_text(TF_SCRIPT)
    run_script_in_tf(str(folder / "make.py"), str(folder / "cases.json"), str(folder / "x.npy"), str(folder))
    return folder


@pytest.mark.slow  # real TensorFlow writes the files (one subprocess for the table)
@pytest.mark.parametrize("case", sorted(CASES))
def test_tf1_control_flow_idiom_runs_in_tftk(tf_files, case):
    graph_def = GraphDef.FromString((tf_files / f"{case}.pb").read_bytes())
    expected = np.load(tf_files / f"{case}.npz")
    names = [f"out_{i}:0" for i in range(len(expected.files))]
    with tf.Graph().as_default():
        outs = tf.import_graph_def(graph_def, return_elements=names, name="")
        with tf.Session() as sess:
            got = sess.run(outs, {"x:0": X})
    for i, value in enumerate(got):
        np.testing.assert_allclose(value, expected[f"arr_{i}"], rtol=1e-5, atol=1e-6, err_msg=f"{case} out_{i}")
