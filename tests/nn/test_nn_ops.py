"""tf.nn ops: values against float64 numpy references written from the definitions, shapes, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tftk as tf
from tests.nn import run
from tftk.api import nn

RNG = np.random.default_rng(3)


# ---- activations --------------------------------------------------------------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACTIVATIONS = [
    ("relu", nn.relu, lambda x: np.where(x > 0, x, 0.0)),
    ("relu6", nn.relu6, lambda x: np.minimum(np.maximum(x, 0.0), 6.0)),
    ("elu", nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    ("selu", nn.selu, lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1))),
    ("softplus", nn.softplus, lambda x: np.log(1 + np.exp(x))),
    ("softsign", nn.softsign, lambda x: x / (1 + np.abs(x))),
    ("leaky_relu", nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("sigmoid", nn.sigmoid, _sigmoid),
    ("tanh", nn.tanh, np.tanh),
    ("crelu", nn.crelu, lambda x: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], -1)),
    ("softmax", nn.softmax, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("log_softmax", nn.log_softmax, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
]


@pytest.mark.parametrize("name,fn,reference", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_values(name, fn, reference, dtype):
    x = np.array([[-8.0, -1.5, -0.25, 0.0], [0.5, 2.0, 6.5, 9.0]])
    out = run(fn(tf.constant(x.astype(dtype))))
    assert out.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, reference(x), rtol=tol, atol=tol)


def test_softmax_is_stable_for_huge_logits_and_takes_an_axis():
    x = np.array([[1000.0, 1001.0], [-1000.0, -1002.0]])
    np.testing.assert_allclose(run(nn.softmax(tf.constant(x))), [[1 / (1 + math.e), math.e / (1 + math.e)],
                                                                 [1 / (1 + math.exp(-2)), math.exp(-2) / (1 + math.exp(-2))]])
    e = np.exp([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(run(nn.softmax(tf.constant([[1.0, 2.0], [3.0, 5.0]], dtype=tf.float64), axis=0)),
                               e / e.sum(0), rtol=1e-12)


def test_bias_add_relu_layer_xw_plus_b():
    x, w, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=2)
    np.testing.assert_allclose(run(nn.xw_plus_b(x, w, b)), x @ w + b, rtol=1e-12)
    np.testing.assert_allclose(run(nn.relu_layer(x, w, b)), np.maximum(x @ w + b, 0), rtol=1e-12)
    v = RNG.normal(size=(2, 3, 3, 2))
    np.testing.assert_allclose(run(nn.bias_add(v, np.array([1.0, -2.0]))), v + [1.0, -2.0])


def test_bias_add_rejects_mismatched_channels():
    with pytest.raises(ValueError, match="bias has 3 elements but value has 2 channels"):
        nn.bias_add(tf.placeholder(tf.float32, [None, 2]), tf.zeros([3]))


def test_l2_loss_l2_normalize_moments():
    x = RNG.normal(size=(4, 3))
    np.testing.assert_allclose(run(nn.l2_loss(x)), (x ** 2).sum() / 2, rtol=1e-12)
    np.testing.assert_allclose(run(nn.l2_normalize(x, 1)), x / np.sqrt((x ** 2).sum(1, keepdims=True)), rtol=1e-12)
    mean, var = run(list(nn.moments(tf.constant(x), [0])))
    np.testing.assert_allclose(mean, x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(var, ((x - x.mean(0)) ** 2).mean(0), rtol=1e-12)
    m, v = nn.moments(tf.placeholder(tf.float32, [None, 5, 3]), [0, 1], keep_dims=True)
    assert m.shape.as_list() == [1, 1, 3] and v.shape.as_list() == [1, 1, 3]


def test_batch_normalization_follows_the_four_formulas_of_seed_000():
    x = RNG.normal(size=(6, 3)) * 3 + 1
    gamma, beta, eps = np.array([1.0, 2.0, 0.5]), np.array([0.0, -1.0, 3.0]), 1e-3
    mu = x.sum(0) / len(x)                               # (1) mini-batch mean
    sigma2 = ((x - mu) ** 2).sum(0) / len(x)             # (2) mini-batch variance
    x_hat = (x - mu) / np.sqrt(sigma2 + eps)             # (3) normalize
    y = gamma * x_hat + beta                             # (4) scale and shift
    mean, var = nn.moments(tf.constant(x), [0])
    out = run(nn.batch_normalization(tf.constant(x), mean, var, beta, gamma, eps))
    np.testing.assert_allclose(out, y, rtol=1e-12)
    assert out.shape == x.shape


# ---- dropout -----------------------------------------------------------------------------

def test_dropout_fed_keep_prob_one_is_exactly_identity():
    x = RNG.normal(size=(50, 20)).astype(np.float32)
    keep = tf.placeholder(tf.float32, [])
    out = nn.dropout(tf.constant(x), keep)
    with tf.Session() as sess:
        assert np.array_equal(sess.run(out, {keep: 1.0}), x)
        dropped = sess.run(out, {keep: 0.5})
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], x[kept] / 0.5, rtol=1e-6)
    assert 0.4 < kept.mean() < 0.6


def test_dropout_rate_noise_shape_and_seed_reproducibility():
    x = np.ones((40, 6), dtype=np.float32)
    out = nn.dropout(tf.constant(x), rate=0.25, noise_shape=[40, 1], seed=5)
    with tf.Session() as sess:
        first, second = sess.run(out), sess.run(out)
    with tf.Session() as sess:
        again = sess.run(out)
    assert np.array_equal(first, again) and not np.array_equal(first, second)
    assert set(np.unique(first)) <= {0.0, np.float32(1 / 0.75)}
    assert (first == first[:, :1]).all()  # one decision per row with noise_shape [40, 1]


def test_dropout_errors():
    x = tf.zeros([2, 2])
    with pytest.raises(ValueError, match="exactly one of keep_prob and rate"):
        nn.dropout(x)
    with pytest.raises(ValueError, match=r"keep_prob must be a scalar in \(0, 1\]"):
        nn.dropout(x, 0.0)


# ---- convolution -------------------------------------------------------------------------

def conv_reference(x, w, strides, padding, dilations=(1, 1)):
    """output[b,i,j,k] = sum_{di,dj,q} in[b, s*i + d*di - pad, s*j + d*dj - pad, q] * w[di,dj,q,k]."""
    n, h, wd, c = x.shape
    kh, kw, _, co = w.shape
    eff = [(kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1]
    outs, pads = [], []
    for size, k, s in zip((h, wd), eff, strides):
        if padding == "SAME":
            o = math.ceil(size / s)
            total = max((o - 1) * s + k - size, 0)
            pads.append(total // 2)
        else:
            o = math.ceil((size - k + 1) / s)
            pads.append(0)
        outs.append(o)
    y = np.zeros((n, outs[0], outs[1], co))
    for i in range(outs[0]):
        for j in range(outs[1]):
            for di in range(kh):
                for dj in range(kw):
                    r = i * strides[0] + di * dilations[0] - pads[0]
                    c_ = j * strides[1] + dj * dilations[1] - pads[1]
                    if 0 <= r < h and 0 <= c_ < wd:
                        y[:, i, j, :] += x[:, r, c_, :] @ w[di, dj]
    return y


CONV_CASES = [((1, 5, 5, 2), (3, 3, 2, 4), (1, 1), "SAME", (1, 1)),
              ((2, 7, 6, 3), (3, 2, 3, 2), (2, 2), "SAME", (1, 1)),   # odd total padding: extra at the end
              ((2, 8, 8, 1), (5, 5, 1, 3), (3, 2), "VALID", (1, 1)),
              ((1, 9, 9, 2), (3, 3, 2, 2), (1, 1), "SAME", (2, 2)),
              ((1, 9, 7, 2), (2, 3, 2, 2), (1, 1), "VALID", (3, 2))]


@pytest.mark.parametrize("xs,ws,strides,padding,dil", CONV_CASES)
def test_conv2d_matches_definition(xs, ws, strides, padding, dil):
    x, w = RNG.normal(size=xs), RNG.normal(size=ws)
    y = nn.conv2d(tf.constant(x), w, [1, *strides, 1], padding, dilations=[1, *dil, 1])
    expected = conv_reference(x, w, strides, padding, dil)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(y), expected, rtol=1e-10, atol=1e-12)


def test_conv2d_output_sizes_and_none_batch():
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    assert nn.conv2d(x, tf.zeros([5, 5, 1, 16]), [1, 1, 1, 1], "SAME").shape.as_list() == [None, 28, 28, 16]
    assert nn.conv2d(x, tf.zeros([5, 5, 1, 16]), [1, 2, 2, 1], "VALID").shape.as_list() == [None, 12, 12, 16]
    assert nn.conv2d(x, tf.zeros([3, 3, 1, 2]), [1, 3, 3, 1], "SAME").shape.as_list() == [None, 10, 10, 2]
    out = nn.conv2d(tf.placeholder(tf.float32, [None, None, None, 1]), tf.zeros([3, 3, 1, 2]), [1, 1, 1, 1], "SAME")
    assert out.shape.as_list() == [None, None, None, 2]
    assert run(out, {out.op.inputs[0]: np.ones((2, 4, 5, 1), np.float32)}).shape == (2, 4, 5, 2)


@pytest.mark.parametrize("build,message", [
    (lambda: nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 2, 4]), [1, 1, 1, 1], "SAME"),
     "input has 3 channels but the filter expects 2"),
    (lambda: nn.conv2d(tf.zeros([4, 4, 3]), tf.zeros([2, 2, 3, 4]), [1, 1, 1, 1], "SAME"), "input must be 4-D"),
    (lambda: nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 3, 4]), [1, 1, 1, 1], "SAME"), "filter must be 4-D"),
    (lambda: nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 3, 4]), [2, 1, 1, 1], "SAME"), r"strides must be \[1, h, w, 1\]"),
    (lambda: nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 3, 4]), [1, 1, 1, 1], "FULL"), "padding must be"),
    (lambda: nn.conv2d(tf.zeros([1, 2, 2, 3]), tf.zeros([3, 3, 3, 4]), [1, 1, 1, 1], "VALID"), "VALID padding needs"),
    (lambda: nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 3, 4]), [1, 1, 1, 1], "SAME", data_format="NWHC"),
     "data_format must be 'NHWC' or 'NCHW'"),
    (lambda: nn.max_pool(tf.zeros([4, 4, 3]), [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), "value must be 4-D"),
    (lambda: nn.conv2d_transpose(tf.zeros([1, 2, 2, 3]), tf.zeros([2, 2, 5, 4]), [1, 4, 4, 5], [1, 2, 2, 1]),
     "value has 3 channels"),
])
def test_bad_geometry_fails_at_build_time(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    """<conv2d(x, w), y> == <x, conv2d_transpose(y, w)> for every x, y: the definition of the transpose."""
    x, w = RNG.normal(size=(2, 5, 5, 3)), RNG.normal(size=(3, 3, 3, 4))
    y = RNG.normal(size=(2, 3, 3, 4))
    t = nn.conv2d_transpose(tf.constant(y), w, [2, 5, 5, 3], [1, 2, 2, 1], "SAME")
    assert t.shape.as_list() == [2, 5, 5, 3]
    lhs = (conv_reference(x, w, (2, 2), "SAME") * y).sum()
    np.testing.assert_allclose((x * run(t)).sum(), lhs, rtol=1e-10)


def test_conv1d_is_conv2d_of_height_one():
    x, w = RNG.normal(size=(2, 7, 3)), RNG.normal(size=(3, 3, 4))
    y = nn.conv1d(tf.constant(x), w, 2, "SAME")
    assert y.shape.as_list() == [2, 4, 4]
    expected = conv_reference(x[:, None], w[None], (1, 2), "SAME")[:, 0]
    np.testing.assert_allclose(run(y), expected, rtol=1e-10)


# ---- pooling, LRN --------------------------------------------------------------------------

def pool_reference(x, k, s, padding, reduce):
    n, h, w, c = x.shape
    outs, pads = [], []
    for size, kk, ss in zip((h, w), k, s):
        o = math.ceil(size / ss) if padding == "SAME" else math.ceil((size - kk + 1) / ss)
        pads.append(max((o - 1) * ss + kk - size, 0) // 2 if padding == "SAME" else 0)
        outs.append(o)
    y = np.zeros((n, outs[0], outs[1], c))
    for i in range(outs[0]):
        for j in range(outs[1]):
            r0, c0 = i * s[0] - pads[0], j * s[1] - pads[1]
            win = x[:, max(r0, 0):r0 + k[0], max(c0, 0):c0 + k[1], :]
            y[:, i, j, :] = reduce(win.reshape(n, -1, c), axis=1)
    return y


@pytest.mark.parametrize("k,s,padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (1, 2), "SAME")])
def test_pools_match_definition(k, s, padding):
    x = RNG.normal(size=(2, 5, 6, 3))
    mx = nn.max_pool(tf.constant(x), [1, *k, 1], [1, *s, 1], padding)
    av = nn.avg_pool(tf.constant(x), [1, *k, 1], [1, *s, 1], padding)
    np.testing.assert_allclose(run(mx), pool_reference(x, k, s, padding, np.max), rtol=1e-12)
    np.testing.assert_allclose(run(av), pool_reference(x, k, s, padding, np.mean), rtol=1e-12)
    assert mx.shape.as_list() == list(pool_reference(x, k, s, padding, np.max).shape)


def test_max_pool_gradient_goes_to_the_first_of_tied_maxima():
    x = tf.constant(np.array([[1.0, 3.0], [3.0, 0.0]]).reshape(1, 2, 2, 1))
    g = tf.gradients(nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"), x)[0]
    np.testing.assert_array_equal(run(g).reshape(2, 2), [[0.0, 1.0], [0.0, 0.0]])


def test_pool_shapes_with_none_batch():
    x = tf.placeholder(tf.float32, [None, 28, 28, 16])
    assert nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME").shape.as_list() == [None, 14, 14, 16]
    assert nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID").shape.as_list() == [None, 13, 13, 16]


def test_lrn_alexnet_parameters_match_the_formula():
    """b = a / (k + alpha * sum_{j=i-n/2}^{i+n/2} a_j^2) ** beta with k=2, n=5, alpha=1e-4, beta=0.75."""
    x = RNG.normal(size=(2, 3, 3, 8)) * 10
    y = run(nn.local_response_normalization(tf.constant(x), depth_radius=2, bias=2.0, alpha=1e-4, beta=0.75))
    expected = np.empty_like(x)
    for i in range(8):
        window = (x[..., max(0, i - 2):i + 3] ** 2).sum(-1)
        expected[..., i] = x[..., i] / (2.0 + 1e-4 * window) ** 0.75
    np.testing.assert_allclose(y, expected, rtol=1e-12)


# ---- in_top_k, top_k ---------------------------------------------------------------------

def test_in_top_k_counts_ties_as_tf_does():
    predictions = np.array([[0.1, 0.3, 0.3, 0.2], [0.5, 0.5, 0.5, 0.1], [np.nan, 1.0, 0.0, 0.0],
                            [0.4, 0.3, 0.2, 0.1]], dtype=np.float32)
    targets = np.array([2, 2, 0, 7])
    top1 = run(nn.in_top_k(predictions, targets, 1))
    np.testing.assert_array_equal(top1, [True, True, False, False])  # ties at the top all count
    np.testing.assert_array_equal(run(nn.in_top_k(predictions, np.array([3, 3, 1, 1]), 2)),
                                  [False, False, True, True])


def test_in_top_k_mnist_evaluation_counts_correct_predictions():
    logits = RNG.normal(size=(20, 10)).astype(np.float32)
    labels = RNG.integers(0, 10, size=20)
    correct = tf.reduce_sum(tf.cast(nn.in_top_k(logits, labels, 1), tf.int32))
    assert run(correct) == int((logits.argmax(1) == labels).sum())


def test_top_k_sorted_values_and_lower_index_first_on_ties():
    x = np.array([[1.0, 5.0, 3.0, 5.0], [2.0, 2.0, 2.0, 1.0]])
    values, indices = nn.top_k(tf.constant(x), 3)
    v, i = run([values, indices])
    np.testing.assert_array_equal(v, [[5.0, 5.0, 3.0], [2.0, 2.0, 2.0]])
    np.testing.assert_array_equal(i, [[1, 3, 2], [0, 1, 2]])
    assert indices.dtype == tf.int32 and values.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="at least k=5"):
        nn.top_k(tf.constant(x), 5)
