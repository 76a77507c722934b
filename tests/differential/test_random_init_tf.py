"""tf.random.* and tf.initializers.* against real TensorFlow: static shapes, dtypes and run-time shapes of
the draws, the deterministic initializers' values, and the scale of each random initializer.

The values of the draws are compared in test_random_streams_tf.py (uniform, normal, truncated
normal) and test_random_samplers_tf.py (shuffle, categorical, gamma, poisson); this table checks
their shapes and dtypes through the tf.random.* names.
"""


from tests.differential.op_tables import Row, table_tests

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
fetch = {{'static': tf.constant(y.shape.as_list()), 'dtype': tf.constant(y.dtype.name), 'shape': tf.shape(y)}}
"""

INITIALIZERS = {
    "constant": "tf.initializers.constant([[1.0, 2.0], [3.0, 4.0]])",
    "ones": "tf.initializers.ones()",
    "zeros": "tf.initializers.zeros(dtype=tf.float64)",
    "identity": "tf.initializers.identity(gain=2.0)",
}

INIT_SNIPPET = """
v = tf.get_variable('v', [2, 2], initializer={expr})
fetch = {{'v': v}}
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
mean = tf.reduce_mean(v)
# float16: compared to 1% (the sampling error of these sizes is well below that)
fetch = {{'std': tf.cast(tf.sqrt(tf.reduce_mean(tf.square(v - mean))), tf.float16), 'mean0': tf.abs(mean) < 0.02}}
"""

# The variable initializers under their tf.initializers names (the batch itself initialises with
# tf.global_variables_initializer): each makes a NoOp grouping the variables' initializers.
NAMESPACE = """
v = tf.get_variable('v', [1], initializer=tf.initializers.zeros())
ops = [tf.initializers.global_variables(), tf.initializers.local_variables(), tf.initializers.variables([v])]
fetch = {'types': tf.constant([op.type for op in ops])}
"""

ROWS = [Row(f"draw_{k}", DRAW_SNIPPET.format(expr=v)) for k, v in DRAWS.items()] + \
    [Row(f"init_{k}", INIT_SNIPPET.format(expr=v)) for k, v in INITIALIZERS.items()] + \
    [Row(f"scale_{k}", SCALE_SNIPPET.format(expr=e, shape=s)) for k, (e, s) in SCALED.items()] + \
    [Row("initializers_namespace", NAMESPACE)]

results, test_tftk_agrees_with_tensorflow = table_tests("random_init", ROWS)
