"""RNN cells, static_rnn and dynamic_rnn: float64 references, padding semantics, BPTT gradients, learning."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.ops import nn_loss_ops, rnn, rnn_cell
from tftk.ops.array_ops import unstack
from tftk.ops.scan_ops import argmax
from tftk.train.optimizers import AdamOptimizer

B, T, D, H = 3, 4, 2, 5


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


CELLS = {
    "basic_rnn": lambda: rnn_cell.BasicRNNCell(H),
    "basic_lstm": lambda: rnn_cell.BasicLSTMCell(H),
    "basic_lstm_concat_state": lambda: rnn_cell.BasicLSTMCell(H, state_is_tuple=False),
    "lstm_peepholes_proj_clip": lambda: rnn_cell.LSTMCell(H, use_peepholes=True, num_proj=3, cell_clip=0.5),
    "gru": lambda: rnn_cell.GRUCell(H),
    "multi": lambda: rnn_cell.MultiRNNCell([rnn_cell.GRUCell(H), rnn_cell.BasicLSTMCell(4)]),
}


def _randomize(sess, rng):
    """Give every variable random values (large enough that the gates are not all near 0.5)."""
    for v in tf.global_variables():
        v.load(rng.normal(0, 0.6, v.shape.as_list()), sess)


@pytest.mark.parametrize("make_cell", CELLS.values(), ids=list(CELLS))
def test_dynamic_rnn_with_sequence_length_equals_static_rnn_on_padded_input(make_cell):
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [B, T, D])
        lengths = tf.placeholder(tf.int32, [B])
        cell = make_cell()
        out_d, state_d = rnn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64)
        out_s, state_s = rnn.static_rnn(cell, unstack(x, axis=1), sequence_length=lengths, dtype=tf.float64)
        short_out, short_state = rnn.static_rnn(cell, unstack(x, axis=1)[:2], dtype=tf.float64)
        with tf.Session() as sess:
            _randomize(sess, rng)
            feed = {x: rng.normal(size=(B, T, D)), lengths: [4, 2, 0]}
            od, os_, sd, ss, so, sst = sess.run([out_d, tf.stack(out_s, 1), state_d, state_s,
                                                tf.stack(short_out, 1), short_state], feed)
    np.testing.assert_allclose(od, os_, rtol=1e-12, atol=1e-12)
    for a, b in zip(rnn_cell.flatten_state(sd), rnn_cell.flatten_state(ss)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert od.shape == (B, T, cell.output_size)
    assert np.all(od[1, 2:] == 0) and np.all(od[2] == 0)  # past the length: zero outputs
    assert np.abs(od[0, 3]).max() > 1e-3
    np.testing.assert_allclose(od[1, :2], so[1], rtol=1e-12)  # example 1 is the 2-step sequence
    for final, short in zip(rnn_cell.flatten_state(sd), rnn_cell.flatten_state(sst)):
        np.testing.assert_allclose(final[1], short[1], rtol=1e-12)  # its state stops at step 2
        assert np.all(final[2] == 0)  # length 0 keeps the zero initial state


def test_cells_share_weights_named_as_tf1():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, T, D])
        cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(H), rnn_cell.LSTMCell(H, use_peepholes=True)])
        rnn.dynamic_rnn(cell, x, dtype=tf.float32)
        rnn.static_rnn(cell, unstack(x, axis=1), dtype=tf.float32)
        gru = rnn_cell.GRUCell(H)
        rnn.dynamic_rnn(gru, x, dtype=tf.float32, scope="encoder")
        names = [v.name for v in tf.global_variables()]
    assert names == [
        "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0", "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
        "rnn/multi_rnn_cell/cell_1/lstm_cell/kernel:0", "rnn/multi_rnn_cell/cell_1/lstm_cell/bias:0",
        "rnn/multi_rnn_cell/cell_1/lstm_cell/w_f_diag:0", "rnn/multi_rnn_cell/cell_1/lstm_cell/w_i_diag:0",
        "rnn/multi_rnn_cell/cell_1/lstm_cell/w_o_diag:0",
        "encoder/gru_cell/gates/kernel:0", "encoder/gru_cell/gates/bias:0",
        "encoder/gru_cell/candidate/kernel:0", "encoder/gru_cell/candidate/bias:0"]


def _lstm_reference(x, c, h, kernel, bias, forget_bias=1.0, peep=None):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    if peep is not None:
        f, i = f + peep[0] * c, i + peep[1] * c
    new_c = c * _sigmoid(f + forget_bias) + _sigmoid(i) * np.tanh(j)
    if peep is not None:
        o = o + peep[2] * new_c
    return np.tanh(new_c) * _sigmoid(o), new_c


def _gru_reference(x, h, wg, bg, wc, bc):
    r, u = np.split(_sigmoid(np.concatenate([x, h], 1) @ wg + bg), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ wc + bc)
    return u * h + (1 - u) * c


def test_one_step_matches_float64_definitions():
    rng = np.random.default_rng(1)
    xv, cv, hv = rng.normal(size=(B, D)), rng.normal(size=(B, H)), rng.normal(size=(B, H))
    with tf.Graph().as_default():
        x, c, h = (tf.constant(v) for v in (xv, cv, hv))
        basic = rnn_cell.BasicLSTMCell(H, forget_bias=0.5)
        basic_out, basic_state = basic(x, rnn_cell.LSTMStateTuple(c, h))
        peep = rnn_cell.LSTMCell(H, use_peepholes=True)
        peep_out, peep_state = peep(x, (c, h))
        gru = rnn_cell.GRUCell(H)
        gru_out, _ = gru(x, h)
        plain = rnn_cell.BasicRNNCell(H)
        plain_out, _ = plain(x, h)
        with tf.Session() as sess:
            _randomize(sess, rng)
            got = sess.run([basic_out, basic_state, peep_out, peep_state, gru_out, plain_out])
            w = {v.name: sess.run(v) for v in tf.global_variables()}
    ref_h, ref_c = _lstm_reference(xv, cv, hv, w["basic_lstm_cell/kernel:0"], w["basic_lstm_cell/bias:0"], 0.5)
    np.testing.assert_allclose(got[0], ref_h, rtol=1e-12)
    np.testing.assert_allclose(got[1].c, ref_c, rtol=1e-12)
    peeps = [w[f"lstm_cell/{n}:0"] for n in ("w_f_diag", "w_i_diag", "w_o_diag")]
    ref_h, ref_c = _lstm_reference(xv, cv, hv, w["lstm_cell/kernel:0"], w["lstm_cell/bias:0"], 1.0, peeps)
    np.testing.assert_allclose(got[2], ref_h, rtol=1e-12)
    np.testing.assert_allclose(got[3].c, ref_c, rtol=1e-12)
    np.testing.assert_allclose(got[4], _gru_reference(
        xv, hv, w["gru_cell/gates/kernel:0"], w["gru_cell/gates/bias:0"],
        w["gru_cell/candidate/kernel:0"], w["gru_cell/candidate/bias:0"]), rtol=1e-12)
    np.testing.assert_allclose(got[5], np.tanh(np.concatenate([xv, hv], 1) @ w["basic_rnn_cell/kernel:0"]
                                               + w["basic_rnn_cell/bias:0"]), rtol=1e-12)


def _finite_difference_check(loss, xs, sess, feed, eps=1e-6):
    """Compare tf.gradients with central differences for placeholders (fed) and variables (loaded)."""
    grads = sess.run(tf.gradients(loss, xs), feed)
    for x, analytic in zip(xs, grads):
        is_var = isinstance(x, tf.Variable)
        base = sess.run(x) if is_var else feed[x]
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            values = []
            for sign in (1, -1):
                moved = base.copy()
                moved[idx] += sign * eps
                if is_var:
                    x.load(moved, sess)
                    values.append(sess.run(loss, feed))
                else:
                    values.append(sess.run(loss, {**feed, x: moved}))
            numeric[idx] = (values[0] - values[1]) / (2 * eps)
        if is_var:
            x.load(base, sess)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8, err_msg=x.name)


@pytest.mark.parametrize("kind", ["dynamic_lstm_lengths", "dynamic_gru_time_major", "static_peephole_lstm"])
def test_rnn_gradients_pass_finite_difference_checks(kind):
    rng = np.random.default_rng(2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 3, D])  # batch = time = 3, so time_major feeds the same shapes
        h0 = tf.placeholder(tf.float64, [3, 3])
        if kind == "dynamic_lstm_lengths":
            cell = rnn_cell.BasicLSTMCell(3)
            init = rnn_cell.LSTMStateTuple(tf.zeros([3, 3], tf.float64), h0)
            out, state = rnn.dynamic_rnn(cell, x, sequence_length=[3, 2, 1], initial_state=init)
            final = state.c
        elif kind == "dynamic_gru_time_major":
            out, final = rnn.dynamic_rnn(rnn_cell.GRUCell(3), x, initial_state=h0, time_major=True)
        else:
            cell = rnn_cell.LSTMCell(3, use_peepholes=True)
            outs, state = rnn.static_rnn(cell, unstack(x, axis=1),
                                         initial_state=(tf.zeros([3, 3], tf.float64), h0))
            out, final = tf.stack(outs, 1), state.h
        weights = rng.uniform(0.5, 1.5, size=out.shape.as_list())
        loss = tf.reduce_sum(out * weights) + tf.reduce_sum(final * final)
        with tf.Session() as sess:
            _randomize(sess, rng)
            feed = {x: rng.normal(size=(3, 3, D)), h0: rng.normal(size=(3, 3))}
            _finite_difference_check(loss, [x, h0] + tf.trainable_variables(), sess, feed)


def test_dropout_wrapper_keeps_or_scales_and_never_drops_lstm_memory():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((50, D)), tf.float64)
        state = rnn_cell.LSTMStateTuple(tf.constant(np.ones((50, H))), tf.constant(np.ones((50, H))))
        base = rnn_cell.BasicLSTMCell(H)
        plain_out, plain_state = base(x, state)
        keep = tf.placeholder(tf.float64, [])
        wrapped = rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, state_keep_prob=keep, seed=3)
        out, new_state = wrapped(x, state)
        identity = rnn_cell.DropoutWrapper(base)  # keep probabilities of 1.0 add no dropout op
        same_out, _ = identity(x, state)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            p, ps, o, s, same = sess.run([plain_out, plain_state, out, new_state, same_out], {keep: 0.25})
            _, s_full = sess.run([out, new_state], {keep: 1.0})
    np.testing.assert_array_equal(same, p)
    assert set(np.unique(np.isclose(o, 2 * p) | (o == 0))) == {True}
    assert 0.3 < np.mean(o == 0) < 0.7
    np.testing.assert_array_equal(s.c, ps.c)  # the memory is never dropped (TF1's state filter)
    assert set(np.unique(np.isclose(s.h, 4 * ps.h) | (s.h == 0))) == {True} and np.any(s.h == 0)
    np.testing.assert_array_equal(s_full.h, ps.h)
    with pytest.raises(ValueError, match="output_keep_prob must be in"):
        rnn_cell.DropoutWrapper(base, output_keep_prob=1.5)


def test_bad_inputs_say_what_is_wrong():
    with tf.Graph().as_default():
        cell = rnn_cell.GRUCell(H)
        with pytest.raises(ValueError, match="dtype must be specified"):
            rnn.dynamic_rnn(cell, tf.placeholder(tf.float32, [1, T, D]))
        with pytest.raises(ValueError, match=r"rank 3 \[batch, time, depth\]"):
            rnn.dynamic_rnn(cell, tf.placeholder(tf.float32, [T, D]), dtype=tf.float32)
        with pytest.raises(ValueError, match="known depth"):
            rnn.dynamic_rnn(cell, tf.placeholder(tf.float32, [1, T, None]), dtype=tf.float32)
        with pytest.raises(TypeError, match="non-empty list"):
            rnn.static_rnn(cell, tf.placeholder(tf.float32, [1, T, D]), dtype=tf.float32)


def test_lstm_learns_to_count_the_ones_in_a_bit_sequence():
    steps, batch, units = 6, 64, 16
    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        bits = tf.placeholder(tf.float32, [None, steps, 1])
        count = tf.placeholder(tf.int32, [None])
        _, state = rnn.dynamic_rnn(rnn_cell.BasicLSTMCell(units), bits, dtype=tf.float32)
        w = tf.get_variable("w", [units, steps + 1])
        b = tf.get_variable("b", [steps + 1], initializer=tf.zeros_initializer())
        logits = tf.matmul(state.h, w) + b
        loss = tf.reduce_mean(nn_loss_ops.sparse_softmax_cross_entropy_with_logits(labels=count, logits=logits))
        train = AdamOptimizer(0.03).minimize(loss)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(argmax(logits, 1), tf.int32), count), tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(400):
                x = rng.integers(0, 2, (batch, steps, 1)).astype(np.float32)
                sess.run(train, {bits: x, count: x.sum((1, 2)).astype(np.int32)})
            x = rng.integers(0, 2, (1000, steps, 1)).astype(np.float32)
            acc = sess.run(accuracy, {bits: x, count: x.sum((1, 2)).astype(np.int32)})
    assert acc >= 0.95, acc
