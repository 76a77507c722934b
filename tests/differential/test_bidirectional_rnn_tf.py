"""tf.nn.bidirectional_dynamic_rnn and tf.nn.static_bidirectional_rnn against real TensorFlow, float32:
with every variable set from its name (so both sides hold the same weights only if the names are
TF's), the outputs of both directions, the final states and the gradients of a loss w.r.t. every
variable and the inputs agree to 1e-5; with and without sequence lengths, batch- and time-major."""

import numpy as np
import pytest

from tests.tf_oracle import require_tf, run_in_tf, run_in_tftk

T, B, D = 5, 3, 4

SNIPPET = """
import zlib
fw, bw = {cells}
x = tf.constant(inputs['x'])
lengths = {lengths}
if '{mode}' == 'dynamic':
    (out_fw, out_bw), states = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=lengths, dtype=tf.float32)
    out = tf.concat([out_fw, out_bw], 2)
elif '{mode}' == 'time_major':
    (out_fw, out_bw), states = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, tf.transpose(x, [1, 0, 2]), sequence_length=lengths, dtype=tf.float32, time_major=True, scope='birnn')
    out = tf.transpose(tf.concat([out_fw, out_bw], 2), [1, 0, 2])
else:
    outs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(fw, bw, tf.unstack(x, {T}, 1), dtype=tf.float32,
                                                              sequence_length=lengths)
    out, states = tf.stack(outs, 1), (state_fw, state_bw)
variables = tf.trainable_variables()
def flat(s):
    return [leaf for item in s for leaf in flat(item)] if isinstance(s, (tuple, list)) else [s]
leaves = flat(states)
loss = tf.reduce_sum(out * inputs['proj'][:, :, :out.shape.as_list()[2]]) + sum(
    tf.reduce_sum(s * (0.3 + 0.1 * k)) for k, s in enumerate(leaves))
grads = tf.gradients(loss, variables + [x])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for v in variables:
        rng = np.random.default_rng(zlib.crc32(v.op.name.encode()))
        v.load(rng.uniform(-0.6, 0.6, v.shape.as_list()).astype(np.float32), sess)
    out_v, leaves_v, grads_v = sess.run([out, leaves, grads])
outputs = {{'out': out_v, 'names': np.array([v.op.name for v in variables]),
           **{{'state%d' % k: s for k, s in enumerate(leaves_v)}},
           **{{'grad%d' % k: g for k, g in enumerate(grads_v)}}}}
"""

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
    expected = tf_results[name]
    got = run_in_tftk(TFTK_CELLS + CASES[name], _inputs())
    assert expected.error is None, expected.message
    assert got.error is None, got.message
    assert sorted(got.outputs) == sorted(expected.outputs)
    np.testing.assert_array_equal(got.outputs["names"], expected.outputs["names"])
    for key, value in expected.outputs.items():
        if key != "names":
            np.testing.assert_allclose(got.outputs[key], value, rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key}")
