"""tf.random.* and tf.initializers.* against real TensorFlow: static shapes, dtypes and run-time shapes of
the draws, the deterministic initializers' values, and the scale of each random initializer.

Values of random draws are not compared: tftk's streams are not TF's Philox streams.
"""

import pytest

from tests.tf_oracle import run_in_tf, run_in_tftk
from tests.differential.op_tables import compare

DRAWS = {
    "normal": "tf.random.normal([3, 4], mean=1.0, stddev=2.0, seed=1)",
    "uniform_int": "tf.random.uniform([5], minval=2, maxval=9, dtype=tf.int32, seed=1)",
    "truncated_normal": "tf.random.truncated_normal([2, 2], dtype=tf.float64, seed=3)",
    "shuffle": "tf.random.shuffle(tf.range(6), seed=4)",
    "categorical": "tf.random.categorical(tf.log([[0.5, 0.5], [0.1, 0.9]]), 7, seed=5)",
    "multinomial_int32": "tf.random.multinomial(tf.zeros([3, 4]), 2, output_dtype=tf.int32, seed=5)",
    "gamma": "tf.random.gamma([4], [1.0, 3.0], seed=6)",
    "poisson": "tf.random.poisson([2.0, 5.0], [3], seed=7)",
    "poisson_int": "tf.random.poisson([2.0], [4, 2], dtype=tf.int64, seed=7)",
}

DRAW_SNIPPET = """
y = {expr}
with tf.Session() as s:
    v = s.run(y)
outputs = {{'static': np.array(y.shape.as_list()), 'dtype': np.array(y.dtype.name), 'shape': np.array(v.shape)}}
"""

INITIALIZERS = {
    "constant": "tf.initializers.constant([[1.0, 2.0], [3.0, 4.0]])",
    "ones": "tf.initializers.ones()",
    "zeros": "tf.initializers.zeros(dtype=tf.float64)",
    "identity": "tf.initializers.identity(gain=2.0)",
}

INIT_SNIPPET = """
v = tf.get_variable('v', [2, 2], initializer={expr})
with tf.Session() as s:
    s.run(tf.initializers.global_variables())
    outputs = {{'v': s.run(v)}}
"""

# Scale checks: the sample std of a large draw matches the initializer's definition in both.
SCALED = {
    "he_normal": ("tf.initializers.he_normal(seed=1)", [200, 300]),
    "he_uniform": ("tf.initializers.he_uniform(seed=1)", [200, 300]),
    "lecun_normal": ("tf.initializers.lecun_normal(seed=1)", [3, 3, 40, 50]),
    "lecun_uniform": ("tf.initializers.lecun_uniform(seed=1)", [100, 80]),
    "glorot_normal": ("tf.initializers.glorot_normal(seed=1)", [150, 250]),
    "glorot_uniform": ("tf.initializers.glorot_uniform(seed=1)", [150, 250]),
    "variance_scaling_fan_avg": ("tf.initializers.variance_scaling(3.0, 'fan_avg', 'uniform', seed=1)", [120, 90]),
    "truncated_normal": ("tf.initializers.truncated_normal(stddev=0.5, seed=1)", [300, 200]),
    "orthogonal": ("tf.initializers.orthogonal(gain=1.5, seed=1)", [40, 60]),
}

SCALE_SNIPPET = """
v = tf.get_variable('v', {shape}, initializer={expr})
with tf.Session() as s:
    s.run(tf.initializers.variables([v]))
    value = s.run(v)
# float16: compared to 1% (the sampling error of these sizes is well below that)
outputs = {{'std': np.float16(value.std()), 'mean0': np.array(abs(float(value.mean())) < 0.02)}}
"""

CASES = {f"draw_{k}": (DRAW_SNIPPET.format(expr=v), {}) for k, v in DRAWS.items()}
CASES.update({f"init_{k}": (INIT_SNIPPET.format(expr=v), {}) for k, v in INITIALIZERS.items()})
CASES.update({f"scale_{k}": (SCALE_SNIPPET.format(expr=e, shape=s), {}) for k, (e, s) in SCALED.items()})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
