"""tftk against real TensorFlow, op by op: math, array and nn ops (values, shapes, names, gradients).

One row per op; tests/differential/table.py turns rows into snippets over shapes x dtypes x
static/dynamic shapes. All snippets go to one TensorFlow process (module fixture).
"""

import numpy as np
import pytest

from tests.differential.table import (FLOATS, INTS, OpRow, SnippetRow, compare, expand, first_cases,
                                      oracle_fixture)
from tests.tf_oracle import run_in_tftk

S23, S3 = (2, 3), (3,)
UNARY = [("abs", "tf.abs(x)"), ("negative", "tf.negative(x)"), ("square", "tf.square(x)"),
         ("exp", "tf.exp(x)"), ("expm1", "tf.expm1(x)"), ("sin", "tf.sin(x)"), ("cos", "tf.cos(x)"),
         ("tan", "tf.tan(x * 0.5)"), ("atan", "tf.atan(x)"), ("sinh", "tf.sinh(x)"),
         ("cosh", "tf.cosh(x)"), ("tanh", "tf.tanh(x)"), ("sigmoid", "tf.sigmoid(x)"),
         ("erf", "tf.erf(x)"), ("sign", "tf.sign(x)"), ("floor", "tf.floor(x)"),
         ("ceil", "tf.ceil(x)"), ("round", "tf.round(x)"), ("relu", "tf.nn.relu(x)"),
         ("relu6", "tf.nn.relu6(x * 4)"), ("elu", "tf.nn.elu(x)"), ("softplus", "tf.nn.softplus(x)"),
         ("softsign", "tf.nn.softsign(x)"), ("selu", "tf.nn.selu(x)"),
         ("leaky_relu", "tf.nn.leaky_relu(x, 0.1)"), ("softmax", "tf.nn.softmax(x)"),
         ("log_softmax", "tf.nn.log_softmax(x)"), ("l2_normalize", "tf.nn.l2_normalize(x, 1)")]
POSITIVE = [("sqrt", "tf.sqrt(x)"), ("rsqrt", "tf.rsqrt(x)"), ("log", "tf.log(x)"),
            ("log1p", "tf.log1p(x)"), ("reciprocal", "tf.reciprocal(x)"),
            ("asin", "tf.asin(x - 1.25)"), ("acos", "tf.acos(x - 1.25)")]
BINARY = [("add", "tf.add(x, y)"), ("subtract", "tf.subtract(x, y)"),
          ("multiply", "tf.multiply(x, y)"), ("maximum", "tf.maximum(x, y)"),
          ("minimum", "tf.minimum(x, y)"), ("squared_difference", "tf.squared_difference(x, y)"),
          ("op_add", "x + y"), ("op_sub", "x - y"), ("op_mul", "x * y")]
DIVIDING = [("realdiv", "tf.realdiv(x, y)"), ("truediv", "tf.truediv(x, y)"), ("div", "tf.div(x, y)"),
            ("pow", "tf.pow(x, y)"), ("floormod", "tf.floormod(x, y)")]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_logsumexp"]

ROWS = ([OpRow(n, e, [(S23,), ((4,),)]) for n, e in UNARY]
        + [OpRow(n, e, [(S23,)], domain=(0.5, 2.0)) for n, e in POSITIVE]
        + [OpRow(n, e, [(S23, S23), (S23, S3)], dtypes=FLOATS + INTS) for n, e in BINARY]
        + [OpRow(n, e, [(S23, S23), (S23, S3)], domain=(0.5, 2.0)) for n, e in DIVIDING]
        + [OpRow(f"{r}_axis{n}", f"tf.{r}(x, axis={a}, keepdims={k})", [((2, 3, 4),)])
           for r in REDUCE for n, a, k in (("all", None, False), ("1", 1, False), ("02", "[0, 2]", True))]
        + [OpRow("reduce_sum_int", "tf.reduce_sum(x, 1)", [(S23,)], dtypes=INTS),
           OpRow("cumsum", "tf.cumsum(x, axis=1)", [((2, 4),)]),
           OpRow("cumsum_excl_rev", "tf.cumsum(x, axis=1, exclusive=True, reverse=True)", [((2, 4),)]),
           OpRow("cumprod", "tf.cumprod(x, axis=0)", [((3, 2),)]),
           OpRow("matmul", "tf.matmul(x, y)", [((2, 3), (3, 4))]),
           OpRow("matmul_tt", "tf.matmul(x, y, transpose_a=True, transpose_b=True)", [((3, 2), (4, 3))]),
           OpRow("matmul_batched", "tf.matmul(x, y)", [((2, 2, 3), (2, 3, 2))]),
           OpRow("tensordot", "tf.tensordot(x, y, 1)", [((2, 3), (3, 2))]),
           OpRow("add_n", "tf.add_n([x, y, x])", [(S23, S23)]),
           OpRow("clip_by_value", "tf.clip_by_value(x, -0.5, 0.7)", [(S23,)]),
           OpRow("clip_by_norm", "tf.clip_by_norm(x, 1.0)", [(S23,)]),
           OpRow("argmax", "tf.argmax(x, 1)", [(S23,)], grad=False),
           OpRow("argmin", "tf.argmin(x, 0)", [(S23,)], grad=False),
           OpRow("equal", "tf.equal(x, y)", [(S23, S23)], dtypes=INTS, domain=(0, 1)),
           OpRow("less", "tf.less(x, y)", [(S23, S3)], grad=False),
           OpRow("greater_equal", "tf.greater_equal(x, y)", [(S23, S3)], grad=False),
           OpRow("cast_int", "tf.cast(x, tf.int32)", [(S23,)], grad=False),
           OpRow("cast_f64", "tf.cast(x, tf.float64)", [(S23,)]),
           OpRow("reshape", "tf.reshape(x, [3, -1])", [(S23,)]),
           OpRow("transpose", "tf.transpose(x, [2, 0, 1])", [((2, 3, 4),)], dtypes=FLOATS + INTS),
           OpRow("transpose_default", "tf.transpose(x)", [(S23,)]),
           OpRow("expand_dims", "tf.expand_dims(x, -1)", [(S23,)]),
           OpRow("squeeze", "tf.squeeze(x, [1])", [((2, 1, 3),)]),
           OpRow("stack", "tf.stack([x, y], axis=1)", [(S23, S23)]),
           OpRow("unstack", "tf.unstack(x, axis=1)", [(S23,)], dynamic=False),
           OpRow("concat", "tf.concat([x, y], 1)", [((2, 3), (2, 1))]),
           OpRow("split", "tf.split(x, 2, axis=1)", [((2, 4),)], dynamic=False),
           OpRow("split_sizes", "tf.split(x, [1, 3], 1)", [((2, 4),)]),
           OpRow("slice", "tf.slice(x, [1, 0], [1, -1])", [((3, 4),)]),
           OpRow("strided_slice", "x[1:, ::-1]", [((3, 4),)]),
           OpRow("strided_slice_newaxis", "x[..., 1::2, tf.newaxis, 0]", [((2, 4, 3),)]),
           OpRow("tile", "tf.tile(x, [2, 3])", [((2, 2),)]),
           OpRow("pad", "tf.pad(x, [[1, 0], [2, 1]])", [(S23,)]),
           OpRow("pad_reflect", "tf.pad(x, [[2, 1], [1, 2]], 'REFLECT')", [((3, 4),)]),
           OpRow("reverse", "tf.reverse(x, [0])", [(S23,)]),
           OpRow("gather", "tf.gather(x, y)", [((4, 3), (3,))], fixed={"y": np.array([2, 0, 2], np.int32)}),
           OpRow("gather_axis1", "tf.gather(x, y, axis=1)", [((2, 3, 2), (3,))],
                 fixed={"y": np.array([1, 1, 0], np.int32)}),
           OpRow("gather_nd", "tf.gather_nd(x, y)", [((3, 2, 2), (3, 2))],
                 fixed={"y": np.array([[0, 1], [2, 0], [0, 1]], np.int32)}),
           OpRow("one_hot", "tf.one_hot(x, 4)", [((3,),)], dtypes=("int32",), domain=(0, 3), grad=False),
           OpRow("where_select", "tf.where(x > 0, x, y)", [(S23, S23)]),
           OpRow("zeros_like", "tf.zeros_like(x)", [(S23,)], grad=False),
           OpRow("ones_like", "tf.ones_like(x)", [(S23,)], grad=False),
           OpRow("identity", "tf.identity(x)", [(S23,)]),
           OpRow("stop_gradient", "tf.stop_gradient(x) * x", [(S23,)]),
           OpRow("bias_add", "tf.nn.bias_add(x, y)", [(S23, S3)]),
           OpRow("softmax_xent", "tf.nn.softmax_cross_entropy_with_logits(logits=x, labels=tf.nn.softmax(y))",
                 [(S23, S23)]),
           OpRow("sigmoid_xent", "tf.nn.sigmoid_cross_entropy_with_logits(logits=x, labels=tf.sigmoid(y))",
                 [(S23, S23)]),
           OpRow("sparse_softmax_xent", "tf.nn.sparse_softmax_cross_entropy_with_logits(logits=x, labels=y)",
                 [(S23, (2,))], fixed={"y": np.array([2, 0], np.int32)}),
           OpRow("l2_loss", "tf.nn.l2_loss(x)", [(S23,)]),
           OpRow("conv2d", "tf.nn.conv2d(x, y, [1, 1, 1, 1], 'SAME')", [((1, 4, 4, 2), (3, 3, 2, 3))],
                 dynamic=False),
           OpRow("conv2d_valid_s2", "tf.nn.conv2d(x, y, [1, 2, 2, 1], 'VALID')", [((1, 5, 5, 1), (2, 2, 1, 2))],
                 dynamic=False),
           OpRow("max_pool", "tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], 'VALID')", [((1, 4, 4, 2),)]),
           OpRow("avg_pool", "tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME')", [((1, 5, 5, 1),)]),
           OpRow("moments", "tf.nn.moments(x, [0])", [(S23,)], dynamic=False),
           ])

SNIPPETS = [
    SnippetRow("error_matmul_shapes", "tf.matmul(tf.ones([2, 3]), tf.ones([2, 3]))\noutputs = {}\n"),
    SnippetRow("error_add_dtypes", "tf.add(tf.ones([2]), tf.ones([2], tf.int32))\noutputs = {}\n"),
    SnippetRow("error_reshape_size", "tf.reshape(tf.ones([2, 3]), [4])\noutputs = {}\n"),
    SnippetRow("error_concat_rank", "tf.concat([tf.ones([2, 3]), tf.ones([2])], 0)\noutputs = {}\n"),
    SnippetRow("error_feed_shape",
               "p = tf.placeholder(tf.float32, [2])\nwith tf.Session() as s:\n    s.run(p, {p: np.ones(3)})\n"),
    SnippetRow("error_uninitialized",
               "v = tf.Variable(1.0)\nwith tf.Session() as s:\n    s.run(v)\n"),
    SnippetRow("error_fetch_none", "tf.constant(1)\nwith tf.Session() as s:\n    s.run(None)\n"),
    SnippetRow("names_scopes",
               "with tf.name_scope('a'):\n    c = tf.constant(1.0, name='c')\n    d = tf.identity(c)\n"
               "    e = tf.identity(c)\nwith tf.variable_scope('v'):\n    w = tf.get_variable('w', [2])\n"
               "outputs = {'names': np.array([c.op.name, d.op.name, e.op.name, w.op.name, w.name])}\n"),
    SnippetRow("collections_variables",
               "a = tf.Variable(1.0, name='a')\nb = tf.Variable(2.0, trainable=False, name='b')\n"
               "with tf.variable_scope('s'):\n    c = tf.get_variable('c', [1], collections=[tf.GraphKeys.LOCAL_VARIABLES])\n"
               "g = tf.train.get_or_create_global_step()\n"
               "names = lambda k: np.array([v.op.name for v in tf.get_collection(k)] or ['-'])\n"
               "outputs = {'global': names(tf.GraphKeys.GLOBAL_VARIABLES), "
               "'trainable': names(tf.GraphKeys.TRAINABLE_VARIABLES), "
               "'local': names(tf.GraphKeys.LOCAL_VARIABLES), 'step': names(tf.GraphKeys.GLOBAL_STEP)}\n"),
    SnippetRow("shape_inference",
               "p = tf.placeholder(tf.float32, [None, 3])\nq = tf.matmul(p, tf.ones([3, 5]))\n"
               "r = tf.reduce_sum(q, 1, keepdims=True)\ns = tf.reshape(p, [-1])\n"
               "f = lambda t: np.array([-1 if d is None else d for d in t.shape.as_list()])\n"
               "outputs = {'q': f(q), 'r': f(r), 's': f(s)}\n"),
]

# Rows whose values agree but whose op names differ from TF's; each is someone's open item.
NAME_DIFFERENCES: dict[str, str] = {}

# Snippets whose outcome differs from TF's; each is someone's open item.
DIFFERENCES: dict[str, str] = {}


def _known(names):
    """Case names, those in DIFFERENCES marked as strict expected failures with the reason."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=DIFFERENCES[n])) if n in DIFFERENCES else n
            for n in names]

CASES = expand(ROWS + SNIPPETS)
QUICK = first_cases(ROWS + SNIPPETS)
SLOW = sorted(set(CASES) - set(QUICK))
NAMED = [name for name in first_cases(ROWS)]


oracle_quick = oracle_fixture(CASES, QUICK)
oracle_slow = oracle_fixture(CASES, SLOW)

@pytest.mark.parametrize("name", _known(QUICK))
def test_core_op_matches_tensorflow(oracle_quick, name):
    compare(run_in_tftk(*CASES[name]), oracle_quick[name], names=False)


@pytest.mark.slow
@pytest.mark.parametrize("name", _known(SLOW))
def test_core_op_matches_tensorflow_all_shapes_dtypes(oracle_slow, name):
    compare(run_in_tftk(*CASES[name]), oracle_slow[name], names=False)


def _row_of(case: str) -> str:
    return case.split("-")[0]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(
    strict=True, reason=NAME_DIFFERENCES[_row_of(n)])) if _row_of(n) in NAME_DIFFERENCES else n for n in NAMED])
def test_core_op_names_match_tensorflow(oracle_quick, name):
    got, want = run_in_tftk(*CASES[name]), oracle_quick[name]
    assert got.outputs is not None and want.outputs is not None, (got, want)
    names = sorted(k for k in want.outputs if k.startswith("name"))
    assert [str(got.outputs[k]) for k in names] == [str(want.outputs[k]) for k in names]
