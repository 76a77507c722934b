"""TF1's RNN cells through static_rnn and dynamic_rnn, against real TensorFlow, float32.

TF 2.21 keeps the TF1 cells in `tensorflow.python.keras.layers.legacy_rnn.rnn_cell_impl`; the same
snippet runs there and in tftk (`tf.nn.rnn_cell`). Every variable gets a value made from its name
(so both sides hold the same weights only if the names are TF's), then outputs, final states and the
gradients of a loss w.r.t. every variable and the inputs are compared to 1e-5. The variable names
and their creation order are compared too: a TF checkpoint of these cells loads into tftk's.
"""

import numpy as np
import pytest

from tests.differential.rnn_snippets import EVALUATE_RNN
from tests.tf_oracle import assert_close_outputs, both_succeeded, require_tf, run_in_tf, run_in_tftk

T, B, D = 5, 3, 4

CELLS = {
    "basic_lstm": "cells.BasicLSTMCell(6)",
    "basic_lstm_forget_bias": "cells.BasicLSTMCell(6, forget_bias=0.3)",
    "lstm": "cells.LSTMCell(6)",
    "lstm_peepholes": "cells.LSTMCell(6, use_peepholes=True)",
    "lstm_proj_clip": "cells.LSTMCell(6, use_peepholes=True, num_proj=4, cell_clip=0.6, proj_clip=0.7)",
    "lstm_proj": "cells.LSTMCell(6, num_proj=3, forget_bias=0.5)",
    "gru": "cells.GRUCell(6)",
    "multi": "cells.MultiRNNCell([cells.BasicLSTMCell(6), cells.GRUCell(5), cells.LSTMCell(4, num_proj=3)])",
}

SNIPPET = """
import zlib
cell = {cell}
x = tf.constant(inputs['x'])
if '{mode}' == 'static':
    outs, state = tf.nn.static_rnn(cell, tf.unstack(x, {T}, 1), dtype=tf.float32)
    out = tf.stack(outs, 1)
elif '{mode}' == 'dynamic':
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
else:  # steps past an example's length: zero outputs, the state carried through
    out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=inputs['lengths'], dtype=tf.float32)
""" + EVALUATE_RNN

TF_CELLS = "from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as cells\n"
TFTK_CELLS = "cells = tf.nn.rnn_cell\n"
CASES = {f"{name}-{mode}": SNIPPET.format(cell=cell, mode=mode, T=T)
         for name, cell in CELLS.items() for mode in ("static", "dynamic")}
CASES.update({f"{name}-dynamic_lengths": SNIPPET.format(cell=CELLS[name], mode="lengths", T=T)
              for name in ("basic_lstm", "lstm_proj_clip", "gru", "multi")})


def _inputs():
    rng = np.random.default_rng(3)
    return {"x": rng.uniform(-1.5, 1.5, (B, T, D)).astype(np.float32),
            "proj": rng.uniform(0.5, 1.5, (B, T, 6)).astype(np.float32), "lengths": np.array([5, 2, 0], np.int32)}


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    return run_in_tf({name: (TF_CELLS + source, _inputs()) for name, source in CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_cell_equals_tensorflow(tf_results, name):
    expected, got = both_succeeded(tf_results, {name: (TFTK_CELLS + CASES[name], _inputs())}, name)
    assert_close_outputs(expected, got, context=name)


# A checkpoint written by TF's Saver restores into the same model built with tftk's cells.
CHECKPOINT = """
cell = cells.MultiRNNCell([cells.LSTMCell(6, use_peepholes=True, num_proj=4, cell_clip=0.6), cells.GRUCell(5),
                           cells.BasicLSTMCell(3)])
out, _ = tf.nn.dynamic_rnn(cell, tf.constant(inputs['x']), dtype=tf.float32)
saver = tf.train.Saver()
with tf.Session() as sess:
    {action}
    outputs = {{'out': sess.run(out), 'names': np.array(sorted(v.op.name for v in tf.global_variables()))}}
"""
SAVE = ("sess.run(tf.global_variables_initializer())\n"
        "    saver.save(sess, str(inputs['path']), write_meta_graph=False)")
RESTORE = "saver.restore(sess, str(inputs['path']))"


def test_tensorflow_checkpoint_of_the_cells_restores_in_tftk(tmp_path):
    require_tf()
    inputs = dict(_inputs(), path=np.array(str(tmp_path / "cells.ckpt")))
    written = run_in_tf({"save": (TF_CELLS + CHECKPOINT.format(action=SAVE), inputs)})["save"]
    assert written.error is None, written.message
    restored = run_in_tftk(TFTK_CELLS + CHECKPOINT.format(action=RESTORE), inputs)
    assert restored.error is None, restored.message
    assert list(restored.outputs["names"]) == list(written.outputs["names"])
    np.testing.assert_allclose(restored.outputs["out"], written.outputs["out"], rtol=1e-5, atol=1e-6)
