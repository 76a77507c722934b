"""The fused LSTM cell op (LSTMBlockCell) and the cells on it: gradients, values against real TF."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tests.tf_oracle import require_tf, run_in_tf, run_in_tftk
from tftk.ops.lstm_ops import lstm_block_cell

B, D, N = 3, 4, 5


def _arrays(seed=0, dtype=np.float64, batch=B, depth=D, units=N):
    rng = np.random.default_rng(seed)
    return dict(x=rng.standard_normal((batch, depth)), cs=rng.standard_normal((batch, units)),
                h=rng.standard_normal((batch, units)), w=rng.standard_normal((depth + units, 4 * units)) * 0.5,
                wci=rng.standard_normal(units) * 0.5, wcf=rng.standard_normal(units) * 0.5,
                wco=rng.standard_normal(units) * 0.5, b=rng.standard_normal(4 * units) * 0.5)


def _block(output, forget_bias=1.0, peephole=False):
    def build(x, cs, h, w, wci, wcf, wco, b):
        outs = lstm_block_cell(x, cs, h, w, wci, wcf, wco, b, forget_bias, -1.0, peephole)
        return outs[output]
    return build


def _h_and_cs(peephole):
    def build(x, cs, h, w, wci, wcf, wco, b):
        outs = lstm_block_cell(x, cs, h, w, wci, wcf, wco, b, 0.7, -1.0, peephole)
        return outs[6] * 1.5 + outs[1]
    return build


_A = list(_arrays().values())
def _unknown_depth(x, cs, h, w, wci, wcf, wco, b):
    import tftk as tf
    x = tf.placeholder_with_default(x, [B, None])
    return lstm_block_cell(x, cs, h, w, wci, wcf, wco, b, 1.0, -1.0, True)[6]


def _clipped(differentiate):
    def build(x, cs, h, w, wci, wcf, wco, b):
        outs = lstm_block_cell(x, cs, h, w, wci, wcf, wco, b, 0.7, 0.8, True, differentiate_clip=differentiate)
        return outs[6] * 1.5 + outs[1]
    return build


def _narrow_h(x, cs, h, w, wci, wcf, wco, b):  # LSTMCell with num_proj=3 feeds back a 3-wide h
    return lstm_block_cell(x, cs, h[:, :3], w[:D + 3], wci, wcf, wco, b, 1.0, -1.0, True)[6]


GRADIENT_CASES = [
    GradientCase("block_clip_differentiated", _clipped(True), _A),
    GradientCase("block_narrow_h_prev", _narrow_h, _A),
    GradientCase("block_unknown_depth", _unknown_depth, _A, wrt=[0, 2]),
    GradientCase("block_h", _block(6), _A, wrt=[0, 1, 2, 3, 7]),
    GradientCase("block_cs", _block(1, forget_bias=0.3), _A, wrt=[0, 1, 2, 3, 7]),
    GradientCase("block_peephole_h_cs", _h_and_cs(True), _A),
    GradientCase("block_no_peephole_h_cs", _h_and_cs(False), _A, wrt=[0, 1, 2, 3, 7]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_block_cell_gradient(case):
    check_gradient(case)



# ---- against real TensorFlow, float32: TF's raw LSTMBlockCell op, and the cell math written out ----

_TF_CELL = """
def cell(x, c, h, w, b, wci, wcf, wco, peephole, forget_bias):
    i, j, f, o = tf.split(tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w), b), 4, axis=1)
    if peephole:
        i, f = i + wci * c, f + wcf * c
    c = tf.sigmoid(f + forget_bias) * c + tf.sigmoid(i) * tf.tanh(j)
    o = o + wco * c if peephole else o
    return c, tf.tanh(c) * tf.sigmoid(o)
"""

_SEQUENCE = """
xs = [tf.constant(x) for x in inputs['xs']]
w, b = tf.Variable(inputs['w']), tf.Variable(inputs['b'])
wci, wcf, wco = (tf.Variable(inputs[k]) for k in ('wci', 'wcf', 'wco'))
c = h = tf.zeros([{batch}, {units}])
hs = []
for x in xs:
    c, h = {step}
    hs.append(h)
loss = tf.reduce_sum(tf.stack(hs) * inputs['proj']) + tf.reduce_sum(c * 0.3)
grads = tf.gradients(loss, [w, b] + ([wci, wcf, wco] if {peephole} else []) + xs)
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    hs_v, c_v, g = s.run([hs, c, grads])
outputs = dict(h=np.stack(hs_v), c=c_v, **{{'g%d' % k: v for k, v in enumerate(g) if v is not None}})
"""

_VARIANTS = {"plain": (False, 1.0), "peephole": (True, 1.0), "forget_bias": (False, 0.25)}


def _sequence_inputs(seed=4, steps=3):
    a = {k: v.astype(np.float32) for k, v in _arrays(seed, batch=B, depth=D, units=N).items()}
    rng = np.random.default_rng(seed + 1)
    return dict(xs=rng.standard_normal((steps, B, D)).astype(np.float32), w=a["w"], b=a["b"], wci=a["wci"],
                wcf=a["wcf"], wco=a["wco"], proj=rng.uniform(0.5, 1.5, (steps, B, N)).astype(np.float32))


def _tf_source(peephole, forget_bias):
    step = f"cell(x, c, h, w, b, wci, wcf, wco, {peephole}, {forget_bias})"
    return _TF_CELL + _SEQUENCE.format(batch=B, units=N, step=step, peephole=peephole)


def _tftk_source(peephole, forget_bias):
    step = (f"tftk_lstm_ops.lstm_block_cell(x, c, h, w, wci, wcf, wco, b, {forget_bias}, -1.0, {peephole})[1::5]")
    return "from tftk.ops import lstm_ops as tftk_lstm_ops\n" + _SEQUENCE.format(batch=B, units=N, step=step,
                                                                                   peephole=peephole)


@pytest.fixture(scope="module")
def tf_results():
    require_tf()
    inputs = _sequence_inputs()
    cases = {name: (_tf_source(*v), inputs) for name, v in _VARIANTS.items()}
    raw = ("args = [tf.constant(inputs[k]) for k in ('x', 'cs', 'h', 'w', 'wci', 'wcf', 'wco', 'b')]\n"
           "outs = tf.raw_ops.LSTMBlockCell(x=args[0], cs_prev=args[1], h_prev=args[2], w=args[3], wci=args[4],"
           " wcf=args[5], wco=args[6], b=args[7], forget_bias=0.6, cell_clip=0.5, use_peephole=True)\n"
           "with tf.Session() as s:\n"
           "    outputs = dict(zip('i cs f o ci co h'.split(), s.run(list(outs))))\n")
    cases["raw_op"] = (raw, {k: v.astype(np.float32) for k, v in _arrays(6).items()})
    return cases, run_in_tf(cases)


@pytest.mark.parametrize("name", sorted(_VARIANTS))
def test_fused_cell_values_and_gradients_equal_tensorflow(tf_results, name):
    cases, expected = tf_results
    got = run_in_tftk(_tftk_source(*_VARIANTS[name]), cases[name][1])
    assert expected[name].error is None, expected[name].message
    assert got.error is None, got.message
    assert sorted(got.outputs) == sorted(expected[name].outputs)
    for key, value in expected[name].outputs.items():
        np.testing.assert_allclose(got.outputs[key], value, rtol=1e-5, atol=1e-5, err_msg=key)


def test_op_equals_tensorflows_raw_lstm_block_cell_with_clip_and_peepholes(tf_results):
    cases, expected = tf_results
    source = cases["raw_op"][0].replace("tf.raw_ops.LSTMBlockCell(", "tftk_lstm_block_cell(")
    got = run_in_tftk("from tftk.ops.lstm_ops import lstm_block_cell as tftk_lstm_block_cell\n" + source,
                      cases["raw_op"][1])
    assert got.error is None, got.message
    for key, value in expected["raw_op"].outputs.items():
        np.testing.assert_allclose(got.outputs[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
    assert np.abs(got.outputs["cs"]).max() <= 0.5


def test_basic_lstm_cell_is_one_fused_op_per_step_with_the_same_weights():
    with tf.Graph().as_default() as g:
        xs = [tf.zeros([2, 3]) for _ in range(4)]
        tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(5), xs, dtype=tf.float32)
        types = [op.type for op in g.get_operations()]
        assert types.count("LSTMBlockCell") == 4 and "Sigmoid" not in types
        assert [v.name for v in tf.trainable_variables()] == ["rnn/basic_lstm_cell/kernel:0",
                                                              "rnn/basic_lstm_cell/bias:0"]


def test_fused_sequence_cell_masks_steps_past_sequence_length():
    xs = np.random.default_rng(2).standard_normal((4, B, D))
    lengths = np.array([4, 2, 0], np.int32)
    with tf.Graph().as_default():
        fused = tf.contrib.rnn.LSTMBlockFusedCell(N, use_peephole=True)
        out_m, state_m = fused(tf.constant(xs), sequence_length=lengths)
        out_f, state_f = fused(tf.constant(xs))
        names = [v.name for v in tf.trainable_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            om, sm, of, sf = sess.run([out_m, state_m, out_f, state_f])
    assert names == ["lstm_cell/kernel:0", "lstm_cell/bias:0", "lstm_cell/w_i_diag:0", "lstm_cell/w_f_diag:0",
                     "lstm_cell/w_o_diag:0"]
    assert om.shape == (4, B, N) and om.dtype == np.float64
    np.testing.assert_array_equal(om[:, 0], of[:, 0])
    np.testing.assert_array_equal(om[:2, 1], of[:2, 1])
    np.testing.assert_array_equal(om[2:, 1], 0)
    np.testing.assert_array_equal(sm.h[1], of[1, 1])
    np.testing.assert_array_equal(om[:, 2], 0)
    np.testing.assert_array_equal(sm.c[2], 0)
    np.testing.assert_array_equal(sf.h, of[-1])


def test_fused_cell_needs_time_major_3d_inputs():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"LSTMBlockFusedCell: inputs must be \[time, batch, depth\]"):
            tf.contrib.rnn.LSTMBlockFusedCell(N)(tf.zeros([3, 4]))


_BLOCK_LSTM = """
x = tf.constant(inputs['x'])
zeros_state, zeros_peep = tf.zeros([{B}, {N}]), tf.zeros([{N}])
outs = tf.raw_ops.BlockLSTM(seq_len_max=tf.constant({T}, tf.int64), x=x, cs_prev=zeros_state, h_prev=zeros_state,
                            w=tf.constant(inputs['w']), wci=zeros_peep, wcf=zeros_peep, wco=zeros_peep,
                            b=tf.constant(inputs['b']), forget_bias=0.8, cell_clip=-1.0, use_peephole=False)
with tf.Session() as sess:
    h, cs = sess.run([outs[6], outs[1]])
outputs = dict(h=h, c=cs[-1])
"""


def test_fused_sequence_cell_equals_tensorflows_block_lstm_op():
    require_tf()
    steps = 4
    rng = np.random.default_rng(9)
    inputs = dict(x=rng.standard_normal((steps, B, D)).astype(np.float32),
                  w=(rng.standard_normal((D + N, 4 * N)) * 0.5).astype(np.float32),
                  b=(rng.standard_normal(4 * N) * 0.5).astype(np.float32))
    expected = run_in_tf({"block": (_BLOCK_LSTM.format(B=B, N=N, T=steps), inputs)})["block"]
    assert expected.error is None, expected.message
    with tf.Graph().as_default():
        out, state = tf.contrib.rnn.LSTMBlockFusedCell(N, forget_bias=0.8)(tf.constant(inputs["x"]))
        kernel, bias = tf.trainable_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            kernel.load(inputs["w"], sess)
            bias.load(inputs["b"], sess)
            h, c = sess.run([out, state.c])
    np.testing.assert_allclose(h, expected.outputs["h"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, expected.outputs["c"], rtol=1e-5, atol=1e-6)
