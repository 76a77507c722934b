"""tf.distributions against real TensorFlow: log_prob, prob, cdf, moments, mode, entropy, KL divergences
(values and gradients w.r.t. the parameters), sample shapes, and the errors of bad arguments."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(1307)
D = "tf.distributions"


def dist_row(name: str, make: str, params: dict, value: np.ndarray | None, methods: tuple, grad: bool = True,
             sample: bool = True) -> Row:
    """Build `d = make` over float64 parameter constants; fetch each method and d log_prob / d params."""
    lines = [f"{k} = tf.constant(inputs[{k!r}])" for k in params]
    lines.append(f"d = {make}")
    fetch = []
    if value is not None:
        lines.append("v = tf.constant(inputs['v'])")
        for m in methods:
            if m in ("log_prob", "prob", "cdf", "log_cdf", "survival_function"):
                fetch.append(f"'{m}': d.{m}(v)")
    for m in methods:
        if m in ("mean", "variance", "stddev", "entropy", "mode"):
            fetch.append(f"'{m}': d.{m}()")
    lines.append("fetch = {" + ", ".join(fetch) + "}")
    lines.append("fetch['batch'] = tf.constant(d.batch_shape.as_list() or [-1])")
    lines.append("fetch['event'] = tf.constant(d.event_shape.as_list() or [-1])")
    if sample:
        lines.append("fetch['sample_shape'] = tf.shape(d.sample([4, 2], seed=3))")
    if grad and value is not None:
        floats = [k for k, v in params.items() if np.asarray(v).dtype.kind == "f"]
        lines.append(f"g = tf.gradients(tf.reduce_sum(d.log_prob(v)) + tf.reduce_sum(d.entropy()), [{', '.join(floats)}])")
        lines.append(f"fetch.update({{'d_' + k: t for k, t in zip({floats!r}, g) if t is not None}})")
    inputs = {k: np.asarray(v) for k, v in params.items()}
    if value is not None:
        inputs["v"] = np.asarray(value)
    return Row(name, "\n".join(lines) + "\n", inputs)


ALL = ("log_prob", "prob", "cdf", "mean", "variance", "stddev", "entropy", "mode")
ROWS = [
    dist_row("Normal", f"{D}.Normal(loc, scale)", {"loc": RNG.uniform(-1, 1, (2, 3)), "scale": RNG.uniform(0.5, 2, 3)},
             RNG.uniform(-2, 2, (2, 3)), ALL + ("log_cdf", "survival_function")),
    dist_row("Laplace", f"{D}.Laplace(loc, scale)", {"loc": RNG.uniform(-1, 1, 3), "scale": RNG.uniform(0.5, 2, 3)},
             RNG.uniform(-2, 2, 3), ALL),
    dist_row("StudentT", f"{D}.StudentT(df, loc, scale)", {"df": np.array([0.8, 1.5, 3.0, 7.0], np.float32),
             "loc": RNG.uniform(-1, 1, 4).astype(np.float32), "scale": RNG.uniform(0.5, 2, 4).astype(np.float32)},
             RNG.uniform(-2, 2, 4).astype(np.float32),
             ("log_prob", "prob", "mean", "variance", "entropy", "mode")),
    dist_row("Uniform", f"{D}.Uniform(low, high)", {"low": np.array([0.0, -1.0, 2.0]), "high": np.array([1.0, 3.0, 5.0])},
             np.array([0.5, 3.5, 2.0]), ("prob", "cdf", "mean", "variance", "stddev", "entropy"), grad=False),
    dist_row("Gamma", f"{D}.Gamma(a, b)", {"a": np.array([0.5, 1.0, 2.5, 4.0]), "b": np.array([1.0, 2.0, 0.5, 3.0])},
             np.array([0.3, 1.2, 2.0, 0.9]), ("log_prob", "prob", "cdf", "mean", "variance", "entropy")),
    dist_row("Gamma_mode", f"{D}.Gamma(a, b)", {"a": np.array([2.0, 4.5]), "b": np.array([1.0, 2.0])}, None, ("mode",)),
    dist_row("Exponential", f"{D}.Exponential(rate)", {"rate": np.array([0.5, 1.0, 3.0])}, np.array([0.2, 1.5, 0.1]),
             ("log_prob", "prob", "cdf", "mean", "variance", "entropy")),
    dist_row("Beta", f"{D}.Beta(a, b)", {"a": np.array([0.5, 2.0, 3.0]), "b": np.array([1.5, 2.0, 0.7])},
             np.array([0.2, 0.5, 0.9]), ("log_prob", "prob", "cdf", "mean", "variance", "entropy")),
    dist_row("Beta_mode", f"{D}.Beta(a, b)", {"a": np.array([2.0, 5.0]), "b": np.array([3.0, 1.5])}, None, ("mode",)),
    dist_row("Bernoulli_logits", f"{D}.Bernoulli(logits=l)", {"l": RNG.uniform(-3, 3, (2, 3))},
             np.array([[0, 1, 1], [1, 0, 0]], np.int32), ("log_prob", "prob", "mean", "variance", "entropy", "mode")),
    dist_row("Bernoulli_probs", f"{D}.Bernoulli(probs=p, dtype=tf.float64)", {"p": np.array([0.2, 0.7, 0.5])},
             np.array([1.0, 0.0, 1.0]), ("log_prob", "mean", "entropy", "mode")),
    dist_row("Categorical_logits", f"{D}.Categorical(logits=l)", {"l": RNG.uniform(-2, 2, (3, 4))},
             np.array([0, 3, 2], np.int32), ("log_prob", "prob", "entropy", "mode")),
    dist_row("Categorical_probs", f"{D}.Categorical(probs=p)", {"p": np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])},
             np.array([1, 2], np.int32), ("log_prob", "entropy", "mode")),
    dist_row("Dirichlet", f"{D}.Dirichlet(c)", {"c": np.array([[0.5, 1.5, 2.0], [3.0, 1.0, 1.0]])},
             np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]), ("log_prob", "prob", "mean", "variance", "entropy")),
    dist_row("Multinomial", f"{D}.Multinomial(n, logits=l)", {"n": np.array([5.0, 3.0]), "l": RNG.uniform(-1, 1, (2, 3))},
             np.array([[2.0, 2.0, 1.0], [0.0, 3.0, 0.0]]), ("log_prob", "prob", "mean", "variance"), grad=False, sample=False),
    dist_row("DirichletMultinomial", f"{D}.DirichletMultinomial(n, c)", {"n": np.array([4.0]), "c": np.array([[0.5, 1.0, 2.0]])},
             np.array([[1.0, 1.0, 2.0]]), ("log_prob", "prob", "mean", "variance"), grad=False, sample=False),
    Row("kl_divergences",
        f"n1, n2 = {D}.Normal(0.5, 1.5), {D}.Normal(-0.2, 0.7)\n"
        f"b1, b2 = {D}.Bernoulli(logits=0.3), {D}.Bernoulli(probs=0.8)\n"
        f"c1, c2 = {D}.Categorical(logits=[0.1, 0.5, -1.0]), {D}.Categorical(probs=[0.2, 0.3, 0.5])\n"
        f"g1, g2 = {D}.Gamma(2.0, 1.5), {D}.Gamma(0.7, 3.0)\n"
        f"e1, e2 = {D}.Beta(2.0, 1.5), {D}.Beta(0.7, 3.0)\n"
        f"d1, d2 = {D}.Dirichlet([1.0, 2.0, 0.5]), {D}.Dirichlet([0.3, 1.0, 4.0])\n"
        "fetch = {'n': tf.distributions.kl_divergence(n1, n2), 'n_method': n1.kl_divergence(n2), "
        "'b': tf.distributions.kl_divergence(b1, b2), 'c': tf.distributions.kl_divergence(c1, c2), "
        "'g': tf.distributions.kl_divergence(g1, g2), 'e': tf.distributions.kl_divergence(e1, e2), "
        "'d': tf.distributions.kl_divergence(d1, d2), 'x': n1.cross_entropy(n2)}\n"),
    Row("kl_not_registered", f"tf.distributions.kl_divergence({D}.Normal(0.0, 1.0), {D}.Gamma(1.0, 1.0))\nfetch = {{}}\n"),
    Row("register_kl", "class MyNormal(tf.distributions.Normal):\n    pass\n"
        "@tf.distributions.RegisterKL(MyNormal, tf.distributions.Gamma)\ndef _kl(a, b, name=None):\n"
        "    return tf.constant(42.0)\n"
        "fetch = {'k': tf.distributions.kl_divergence(MyNormal(0.0, 1.0), tf.distributions.Gamma(1.0, 1.0)), "
        "'inherited': tf.distributions.kl_divergence(MyNormal(0.0, 1.0), tf.distributions.Normal(1.0, 1.0))}\n"),
    Row("reparameterization", "fetch = {'n': tf.constant(tf.distributions.Normal(0.0, 1.0).reparameterization_type is "
        "tf.distributions.FULLY_REPARAMETERIZED), 'name': tf.constant(tf.distributions.Normal(0.0, 1.0, name='N').name)}\n"),
    Row("bernoulli_both_params", "tf.distributions.Bernoulli(logits=0.1, probs=0.5)\nfetch = {}\n"),
    Row("sample_moments", "tf.set_random_seed(1)\nd = tf.distributions.Normal([0.0, 10.0], [1.0, 0.1])\n"
        "s = d.sample(20000, seed=2)\nm = tf.reduce_mean(s, 0)\n"
        "fetch = {'close': tf.reduce_all(tf.abs(m - [0.0, 10.0]) < 0.05), 'shape': tf.shape(s)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("distributions", ROWS)
