"""The fused GRU cell op (GRUBlockCell): kernel against numpy, float64 gradients, values against real TF."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tests.tf_oracle import require_tf, run_in_tf, run_in_tftk
from tftk.kernels.gru import gru_block_cell as gru_kernel
from tftk.kernels.gru import gru_block_cell_grad as gru_grad_kernel
from tftk.ops.gru_ops import gru_block_cell

B, D, N = 3, 4, 5


def _arrays(seed=0, dtype=np.float64, batch=B, depth=D, units=N):
    rng = np.random.default_rng(seed)
    a = dict(x=rng.standard_normal((batch, depth)), h=rng.standard_normal((batch, units)),
             w_ru=rng.standard_normal((depth + units, 2 * units)) * 0.5,
             w_c=rng.standard_normal((depth + units, units)) * 0.5,
             b_ru=rng.standard_normal(2 * units) * 0.5, b_c=rng.standard_normal(units) * 0.5)
    return {k: v.astype(dtype) for k, v in a.items()}


def _numpy_cell(x, h, w_ru, w_c, b_ru, b_c):
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    ru = sigmoid(np.concatenate([x, h], 1) @ w_ru + b_ru)
    r, u = np.split(ru, 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ w_c + b_c)
    return r, u, c, u * h + (1 - u) * c


def _numpy_grad(x, h, w_ru, w_c, b_ru, b_c, r, u, c, d_h):
    depth = x.shape[1]
    d_c_bar = d_h * (1 - u) * (1 - c * c)
    d_u_bar = d_h * (h - c) * u * (1 - u)
    d_xhr = d_c_bar @ w_c.T
    d_r_bar = d_xhr[:, depth:] * h * r * (1 - r)
    d_ru_bar = np.concatenate([d_r_bar, d_u_bar], 1)
    d_xh = d_ru_bar @ w_ru.T
    return (d_xhr[:, :depth] + d_xh[:, :depth], d_xhr[:, depth:] * r + d_h * u + d_xh[:, depth:], d_c_bar,
            d_ru_bar)


# 5 units only reach the kernels' scalar loop remainders; 37, 64 and 130 their vectorised loops.
@pytest.mark.parametrize("dtype,tol,batch,depth,units", [
    (np.float64, 1e-12, B, D, N), (np.float32, 2e-6, B, D, N), (np.float32, 2e-6, 9, 7, 64),
    (np.float32, 2e-6, 5, 3, 37), (np.float64, 1e-12, 2, 20, 130),
])
def test_kernels_match_the_numpy_definition(dtype, tol, batch, depth, units):
    a = list(_arrays(1, dtype, batch, depth, units).values())
    outs = gru_kernel(*a)
    for got, want in zip(outs, _numpy_cell(*(x.astype(np.float64) for x in a))):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    d_h = np.random.default_rng(2).standard_normal((batch, units)).astype(dtype)
    grads = gru_grad_kernel(*a, *outs[:3], d_h)
    wanted = _numpy_grad(*(x.astype(np.float64) for x in a + list(outs[:3]) + [d_h]))
    for got, want in zip(grads, wanted):
        np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)
    x, h_prev, w_ru, w_c, b_ru, b_c = a  # the weights as a plan hands them over: transposed copies
    pretransposed = gru_grad_kernel(x, h_prev, np.ascontiguousarray(w_ru.T), np.ascontiguousarray(w_c.T), b_ru, b_c,
                                    *outs[:3], d_h, transposed_weights=True)
    for got, want in zip(pretransposed, wanted):
        np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)
    for transposed_weights in (False, True):  # without d_x: the products make h_prev's columns only
        weights = [np.ascontiguousarray(w.T) for w in (w_ru, w_c)] if transposed_weights else [w_ru, w_c]
        no_d_x = gru_grad_kernel(x, h_prev, *weights, b_ru, b_c, *outs[:3], d_h,
                                 transposed_weights=transposed_weights, with_d_x=False)
        assert no_d_x[0] is None
        for got, want in zip(no_d_x[1:], wanted[1:]):
            np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)


def test_kernel_names_the_expected_shapes_on_mismatch():
    a = _arrays()
    a["w_c"] = a["w_c"][:, :2]
    with pytest.raises(ValueError, match=r"gru_block_cell: .* need w_ru \[9, 10\], w_c \[9, 5\]"):
        gru_kernel(*a.values())


def _output(k):
    return lambda *args: gru_block_cell(*args)[k]


GRADIENT_CASES = [
    GradientCase("gru_block_h", _output(3), list(_arrays().values())),
    GradientCase("gru_cell_two_steps", lambda x, h, w_ru, w_c, b_ru, b_c: gru_block_cell(
        x, gru_block_cell(x * 0.5, h, w_ru, w_c, b_ru, b_c)[3], w_ru, w_c, b_ru, b_c)[3],
        list(_arrays(3).values())),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_block_cell_gradient(case):
    check_gradient(case)


def test_gru_cell_is_one_fused_op_per_step_with_tf_variable_names():
    with tf.Graph().as_default() as g:
        tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(5), [tf.zeros([2, 3]) for _ in range(4)], dtype=tf.float32)
        types = [op.type for op in g.get_operations()]
        assert types.count("GRUBlockCell") == 4 and "Sigmoid" not in types
        assert [v.name for v in tf.trainable_variables()] == [
            "rnn/gru_cell/gates/kernel:0", "rnn/gru_cell/gates/bias:0",
            "rnn/gru_cell/candidate/kernel:0", "rnn/gru_cell/candidate/bias:0"]


@pytest.mark.parametrize("cell,names", [
    ("GRUBlockCell", ["w_ru", "b_ru", "w_c", "b_c"]),
    ("GRUBlockCellV2", ["gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias"]),
])
def test_contrib_block_cells_name_weights_as_tf_and_start_gate_bias_at_one(cell, names):
    with tf.Graph().as_default():
        out, _ = tf.nn.dynamic_rnn(getattr(tf.contrib.rnn, cell)(5), tf.zeros([2, 3, 4]), dtype=tf.float32)
        variables = tf.trainable_variables()
        assert [v.op.name for v in variables] == [f"rnn/gru_cell/{n}" for n in names]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            biases = sess.run([variables[1], variables[3]])
    np.testing.assert_array_equal(biases[0], 1.0)
    np.testing.assert_array_equal(biases[1], 0.0)


def test_contrib_block_cell_needs_a_size():
    with pytest.raises(ValueError, match="GRUBlockCell: num_units is required"):
        tf.contrib.rnn.GRUBlockCell()


# TF 2.21 has the raw ops but not contrib's gradient registration: the TF side spells contrib's
# _GRUBlockCellGrad out (GRUBlockCellGrad, then the weight products), the tftk side calls tf.gradients.
_RAW = """
x, h, w_ru, w_c, b_ru, b_c = args = [tf.constant(inputs[k]) for k in ('x', 'h', 'w_ru', 'w_c', 'b_ru', 'b_c')]
d_h = tf.constant(inputs['proj'])
outs = {forward}
grads = {gradients}
with tf.Session() as s:
    values, g = s.run([list(outs), grads])
outputs = dict(zip('r u c h'.split(), values), **{{'d%d' % k: v for k, v in enumerate(g)}})
"""
_TF_FORWARD = "tf.raw_ops.GRUBlockCell(x=x, h_prev=h, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c)"
_TF_GRADIENTS = """(lambda r, u, c: (lambda d: [d[0], d[1],
    tf.matmul(tf.concat([x, h], 1), d[3], transpose_a=True), tf.matmul(tf.concat([x, h * r], 1), d[2], transpose_a=True),
    tf.reduce_sum(d[3], 0), tf.reduce_sum(d[2], 0)])(tf.raw_ops.GRUBlockCellGrad(
    x=x, h_prev=h, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c, r=r, u=u, c=c, d_h=d_h)))(*outs[:3])"""


def test_op_and_gradient_equal_tensorflows_raw_gru_block_cell():
    require_tf()
    inputs = dict(_arrays(5, np.float32), proj=np.random.default_rng(6).uniform(0.5, 1.5, (B, N)).astype(np.float32))
    expected = run_in_tf({"raw": (_RAW.format(forward=_TF_FORWARD, gradients=_TF_GRADIENTS), inputs)})["raw"]
    tftk_source = _RAW.format(forward="gru_block_cell(*args)", gradients="tf.gradients(outs[3], args, d_h)")
    got = run_in_tftk("from tftk.ops.gru_ops import gru_block_cell\n" + tftk_source, inputs)
    assert expected.error is None, expected.message
    assert got.error is None, got.message
    assert sorted(got.outputs) == sorted(expected.outputs)
    for key, value in expected.outputs.items():
        np.testing.assert_allclose(got.outputs[key], value, rtol=1e-5, atol=1e-6, err_msg=key)
