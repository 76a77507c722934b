"""Bessel I0/I1, erfinv/ndtri/erfcinv, polyval, cumulative_logsumexp and TF's small numeric helpers
(nextafter, rint, truncatediv/mod, conj, angle and accumulate_n) against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import op_row, table_tests

RNG = np.random.default_rng(1301)
WIDE = np.array([-40.0, -7.5, -1.0, -1e-3, 0.0, 0.3, 2.0, 9.0, 55.0, 300.0])
# Gradient rows stay where the loss sin(y + 0.5) is not ruled by rounding of huge outputs, and off
# x = 0, where TF's I1 gradient returns 1.0 instead of I1'(0) = 0.5 (the float64 finite-difference
# case in tests/ops/test_coverage_gradients.py checks 0.5 there).
MODERATE = np.array([-4.5, -1.0, -1e-3, 0.3, 2.0, 3.5])
P = np.array([1e-12, 0.01, 0.2, 0.5, 0.77, 0.999, 1 - 1e-9])
COMPLEX = (RNG.uniform(-1, 1, 6) + 1j * RNG.uniform(-1, 1, 6))

OPS = [
    ("bessel_i0_wide", "tf.math.bessel_i0(x)", {"x": WIDE}, False),
    ("bessel_i0e_wide", "tf.math.bessel_i0e(x)", {"x": WIDE}, False),
    ("bessel_i1_wide", "tf.math.bessel_i1(x)", {"x": WIDE}, False),
    ("bessel_i1e_wide", "tf.math.special.bessel_i1e(x)", {"x": WIDE}, False),
    ("bessel_i0", "tf.math.bessel_i0(x)", {"x": MODERATE}, True),
    ("bessel_i0e", "tf.math.bessel_i0e(x)", {"x": MODERATE}, True),
    ("bessel_i1", "tf.math.bessel_i1(x)", {"x": MODERATE}, True),
    ("bessel_i1e", "tf.math.special.bessel_i1e(x)", {"x": MODERATE}, True),
    ("bessel_i0_f32", "tf.math.special.bessel_i0(x)", {"x": MODERATE.astype(np.float32)}, True),
    ("erfinv", "tf.math.erfinv(x)", {"x": 2 * P - 1}, True),
    ("erfinv_edges", "tf.math.erfinv(x)", {"x": np.array([-1.0, 1.0, 1.5, 0.0])}, False),
    ("erfinv_f32", "tf.math.erfinv(x)", {"x": (2 * P[1:-1] - 1).astype(np.float32)}, True),
    ("ndtri", "tf.math.ndtri(x)", {"x": P}, True),
    ("erfcinv", "tf.math.erfcinv(x)", {"x": 2 * P}, True),
    ("polyval", "tf.math.polyval([x, 2.0 * x, y], y)", {"x": RNG.uniform(-1, 1, 4), "y": RNG.uniform(-1, 1, 4)}, True),
    ("polyval_empty", "tf.math.polyval([], x)", {"x": RNG.uniform(-1, 1, 3)}, False),
    ("cumulative_logsumexp", "tf.math.cumulative_logsumexp(x, axis=1)", {"x": RNG.uniform(-30, 30, (2, 5))}, True),
    ("cumulative_logsumexp_reverse", "tf.math.cumulative_logsumexp(x, axis=0, reverse=True)",
     {"x": RNG.uniform(-3, 3, (4, 2))}, True),
    ("cumulative_logsumexp_exclusive", "tf.math.cumulative_logsumexp(x, exclusive=True)", {"x": RNG.uniform(-3, 3, 5)},
     False),
    ("nextafter", "tf.math.nextafter(x, y)", {"x": np.array([0.0, 1.0, -2.0]), "y": np.array([1.0, 0.0, -2.0])}, False),
    ("nextafter_f32", "tf.math.nextafter(x, 5.0)", {"x": np.array([0.0, 1.0], np.float32)}, False),
    ("rint", "tf.rint(x) + tf.math.rint(x)", {"x": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7])}, False),
    ("truncatediv", "tf.truncatediv(x, y)", {"x": np.array([7, -7, 7, -7, 0]), "y": np.array([2, 2, -2, -2, 3])}, False),
    ("truncatemod", "tf.truncatemod(x, y)", {"x": np.array([7, -7, 7, -7, 0]), "y": np.array([2, 2, -2, -2, 3])}, False),
    ("truncatemod_float", "tf.truncatemod(x, y)", {"x": np.array([5.5, -5.5]), "y": np.array([2.0, 2.0])}, False),
    ("conj", "tf.conj(x)", {"x": COMPLEX}, True),
    ("conj_real", "tf.math.conj(x)", {"x": RNG.uniform(-1, 1, 3)}, True),
    ("conj_string", "tf.conj(x)", {"x": np.array(["a"])}, False),
    ("angle", "tf.angle(x)", {"x": COMPLEX}, True),
    ("angle_real", "tf.math.angle(x)", {"x": np.array([-1.0, 0.0, 2.0])}, False),
    ("accumulate_n", "tf.accumulate_n([x, y, x])", {"x": RNG.uniform(-1, 1, (2, 3)), "y": RNG.uniform(-1, 1, (2, 3))},
     True),
    ("accumulate_n_dtype", "tf.math.accumulate_n([x], tensor_dtype=tf.float32)", {"x": RNG.uniform(-1, 1, 2)}, False),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS]

results, test_tftk_agrees_with_tensorflow = table_tests("special_math_more", ROWS)
