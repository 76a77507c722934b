"""Random values against real TensorFlow: with the same graph and op seeds, tftk's uniform, normal
and truncated-normal draws (and the initializers and dropout built on them) are TF's own values,
run after run in one session (each run moves the Philox stream on as TF does), also when no op seed is
given, and graph files carry the seeds between the two."""

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf

TWO_RUNS = """
tf.set_random_seed({graph_seed})
y = {expr}
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    outputs = {{'first': s.run(y), 'second': s.run(y)}}
"""

DRAWS = {  # name: (graph seed, expression)
    "uniform_f32": (1, "tf.random_uniform([3, 5], seed=3)"),
    "uniform_range_f32": (1, "tf.random_uniform([7], -2.5, 4.0, seed=3)"),
    "uniform_f64": (2, "tf.random_uniform([5], dtype=tf.float64, seed=9)"),
    "uniform_f16": (2, "tf.random_uniform([9], dtype=tf.float16, seed=9)"),
    "uniform_int32": (3, "tf.random_uniform([11], -5, 17, dtype=tf.int32, seed=1)"),
    "uniform_int64": (3, "tf.random_uniform([6], 0, 1000, dtype=tf.int64, seed=1)"),
    "normal_f32": (4, "tf.random_normal([2, 3, 5], mean=1.0, stddev=2.0, seed=8)"),
    "normal_f64": (4, "tf.random_normal([7], dtype=tf.float64, seed=8)"),
    "truncated_f32": (5, "tf.truncated_normal([1000], seed=2)"),
    "truncated_f64": (5, "tf.truncated_normal([9], stddev=0.1, dtype=tf.float64, seed=2)"),
    # large enough that numpy's vectorised float64 log/sin/cos would differ from libm's in ~300 values
    "normal_f64_large": (4, "tf.random_normal([200000], dtype=tf.float64, seed=8)"),
    "truncated_f64_large": (4, "tf.truncated_normal([200000], dtype=tf.float64, seed=8)"),
    "op_seed_only": (None, "tf.random_uniform([4], seed=123)"),
    "large_seeds": (2**40 + 5, "tf.random_normal([4], seed=2**33 + 1)"),
    "zero_seeds": (0, "tf.random_uniform([4], seed=0)"),
    "glorot_uniform": (7, "tf.get_variable('w', [6, 4], initializer=tf.glorot_uniform_initializer(seed=1))"),
    "he_normal": (7, "tf.get_variable('w', [3, 3, 2, 4], initializer=tf.initializers.he_normal(seed=2))"),
    "truncated_initializer": (7, "tf.Variable(tf.truncated_normal([5, 3], stddev=0.1, seed=4))"),
    "dropout": (8, "tf.nn.dropout(tf.ones([4, 6]), keep_prob=0.5, seed=5)"),
    "stateless_uniform": (None, "tf.random.stateless_uniform([3, 4], seed=[1, 2])"),
    "stateless_uniform_range_f64": (None, "tf.random.stateless_uniform([5], [7, -8], -2.0, 3.0, tf.float64)"),
    "stateless_uniform_int64": (None, "tf.random.stateless_uniform([6], seed=tf.constant([9, 10], tf.int64),"
                                      " minval=-4, maxval=90, dtype=tf.int64)"),
    "stateless_normal": (None, "tf.random.stateless_normal([2, 5], seed=[3, 4], mean=1.0, stddev=0.5)"),
    "stateless_truncated_normal": (None, "tf.random.stateless_truncated_normal([300], seed=[2**40, 6])"),
}

CASES = {name: (TWO_RUNS.format(graph_seed=seed, expr=expr), {}) for name, (seed, expr) in DRAWS.items()}

# The orthogonal initializer factorises TF's normal draw; TF's QR (Eigen's Householder) and LAPACK's
# round differently, so these agree to float rounding rather than bit for bit.
ORTHOGONAL = {  # name: (graph seed, expression)
    "orthogonal_tall": (1, "tf.get_variable('w', [6, 4], initializer=tf.orthogonal_initializer(seed=3))"),
    "orthogonal_wide_gain": (1, "tf.get_variable('w', [4, 6], initializer=tf.orthogonal_initializer(1.5, seed=3))"),
    "orthogonal_conv": (2, "tf.get_variable('w', [3, 3, 2, 8], initializer=tf.initializers.orthogonal())"),
    "orthogonal_f64": (3, "tf.get_variable('w', [5, 5], initializer=tf.orthogonal_initializer(dtype=tf.float64))"),
}
ORTHOGONAL_CASES = {name: (TWO_RUNS.format(graph_seed=seed, expr=expr), {})
                    for name, (seed, expr) in ORTHOGONAL.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf({**CASES, **ORTHOGONAL_CASES})


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seeds_give_tensorflows_values(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    for run in ("first", "second"):
        assert got.outputs[run].dtype == expected.outputs[run].dtype
        np.testing.assert_array_equal(got.outputs[run], expected.outputs[run], err_msg=f"{name}, {run} run")


@pytest.mark.parametrize("name", sorted(ORTHOGONAL_CASES))
def test_orthogonal_initializer_gives_tensorflows_values(oracle, name):
    expected, got = both_succeeded(oracle, ORTHOGONAL_CASES, name)
    value = got.outputs["first"]
    assert value.dtype == expected.outputs["first"].dtype
    np.testing.assert_allclose(value, expected.outputs["first"], rtol=0, atol=2e-6 if value.dtype == np.float32 else 1e-13)


GRAPH_FILE_RUN = """
graph_def = tf.GraphDef()
graph_def.ParseFromString(inputs['graph'].tobytes())
tf.import_graph_def(graph_def, name='')
g = tf.get_default_graph()
with tf.Session() as s:
    outputs = {name: s.run(g.get_tensor_by_name(name + ':0')) for name in %r}
"""

EXPORTED = {
    "philox_fills": {"w": "tf.truncated_normal([4, 3], stddev=0.5)", "u": "tf.random_uniform([5], -1.0, 2.0)",
                     "i": "tf.random_uniform([6], 3, 40, dtype=tf.int64)", "n": "tf.random_normal([3], seed=11)"},
    "samplers": {"s": "tf.random_shuffle(tf.constant(list(range(9))))", "m": "tf.multinomial([[0.0, 1.0, 0.5]], 6)",
                 "g": "tf.random_gamma([3], [0.5, 2.0], beta=[[1.0], [3.0]])",
                 "p": "tf.random_poisson([3.0, 30.0], [2], dtype=tf.int64)",
                 "c": "tf.random.categorical(tf.constant([[1.0, 2.0]], tf.float64), 3, dtype=tf.int32, seed=4)"},
}


@pytest.mark.parametrize("kind", sorted(EXPORTED))
def test_graph_files_carry_the_seeds_both_ways(kind):
    """A graph tftk writes runs in TF with tftk's values, and a graph TF writes runs in tftk with TF's."""
    import tftk

    exported = EXPORTED[kind]

    def build(tf):
        tf.set_random_seed(5)
        return {name: tf.identity(eval(expr, {"tf": tf}), name=name) for name, expr in exported.items()}

    with tftk.Graph().as_default() as graph:
        fetches = build(tftk)
        with tftk.Session() as sess:
            ours = sess.run(fetches)
        blob = np.frombuffer(graph.as_graph_def().SerializeToString(), np.uint8)
    writer = ("def build(tf):\n    tf.set_random_seed(5)\n    return {name: tf.identity(eval(expr, {'tf': tf}), name=name)"
              f" for name, expr in {exported!r}.items()}}\n"
              "fetches = build(tf)\nwith tf.Session() as s:\n    outputs = dict(s.run(fetches))\n"
              "outputs['graph'] = np.frombuffer(tf.get_default_graph().as_graph_def().SerializeToString(), np.uint8)\n")
    cases = {"tftk_graph_in_tf": (GRAPH_FILE_RUN % sorted(exported), {"graph": blob}), "tf_graph": (writer, {})}
    oracle = run_in_tf(cases)
    for name in ("tftk_graph_in_tf", "tf_graph"):
        assert oracle[name].error is None, oracle[name].message
    theirs = oracle["tf_graph"].outputs
    got_in_tftk = run_in_tftk_graph(theirs["graph"], sorted(exported))
    for name in exported:
        np.testing.assert_array_equal(oracle["tftk_graph_in_tf"].outputs[name], ours[name], err_msg=name)
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
        np.testing.assert_array_equal(got_in_tftk[name], theirs[name], err_msg=name)


def run_in_tftk_graph(blob: np.ndarray, names: list) -> dict:
    import tftk

    with tftk.Graph().as_default() as graph:
        graph_def = tftk.GraphDef()
        graph_def.ParseFromString(blob.tobytes())
        tftk.import_graph_def(graph_def, name="")
        with tftk.Session() as sess:
            return {name: sess.run(graph.get_tensor_by_name(name + ":0")) for name in names}
