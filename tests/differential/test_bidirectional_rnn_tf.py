"""tf.nn.bidirectional_dynamic_rnn and tf.nn.static_bidirectional_rnn against real TensorFlow, float32:
with every variable set from its name (so both sides hold the same weights only if the names are
TF's), the outputs of both directions, the final states and the gradients of a loss w.r.t. every
variable and the inputs agree to 1e-5; with and without sequence lengths, batch- and time-major."""

import numpy as np
import pytest

from tests.differential.rnn_snippets import EVALUATE_RNN
from tests.tf_oracle import assert_close_outputs, both_succeeded, require_tf, run_in_tf

T, B, D = 5, 3, 4

SNIPPET = """
import zlib
fw, bw = {cells}
x = tf.constant(inputs['x'])
lengths = {lengths}
if '{mode}' == 'dynamic':
    (out_fw, out_bw), state = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=lengths, dtype=tf.float32)
    out = tf.concat([out_fw, out_bw], 2)
elif '{mode}' == 'time_major':
    (out_fw, out_bw), state = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, tf.transpose(x, [1, 0, 2]), sequence_length=lengths, dtype=tf.float32, time_major=True, scope='birnn')
    out = tf.transpose(tf.concat([out_fw, out_bw], 2), [1, 0, 2])
else:
    outs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(fw, bw, tf.unstack(x, {T}, 1), dtype=tf.float32,
                                                              sequence_length=lengths)
    out, state = tf.stack(outs, 1), (state_fw, state_bw)
""" + EVALUATE_RNN

CELLS = {"lstm_gru": "cells.BasicLSTMCell(6), cells.GRUCell(5)", "lstm_proj": "cells.LSTMCell(4, num_proj=3), "
         "cells.LSTMCell(4, num_proj=3)"}
LENGTHS = {"full": "None", "lengths": "inputs['lengths']"}
CASES = {f"{mode}-{cell}-{length}": SNIPPET.format(cells=cells, lengths=LENGTHS[length], mode=mode, T=T)
         for mode in ("dynamic", "time_major", "static") for cell, cells in CELLS.items() for length in LENGTHS}

TF_CELLS = "from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as cells\n"
TFTK_CELLS = "cells = tf.nn.rnn_cell\n"


def _inputs():
    rng = np.random.default_rng(5)
    return {"x": rng.uniform(-1.5, 1.5, (B, T, D)).astype(np.float32),
            "proj": rng.uniform(0.5, 1.5, (B, T, 12)).astype(np.float32), "lengths": np.array([5, 2, 0], np.int32)}


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    return run_in_tf({name: (TF_CELLS + source, _inputs()) for name, source in CASES.items()})


@pytest.mark.parametrize("name", sorted(CASES))
def test_bidirectional_rnn_equals_tensorflow(tf_results, name):
    cases = {name: (TFTK_CELLS + CASES[name], _inputs())}
    expected, got = both_succeeded(tf_results, cases, name)
    assert_close_outputs(expected, got, context=name)
