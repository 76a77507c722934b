"""Gradients through complex arithmetic against real TensorFlow.

TF's gradient of a holomorphic op f at z is the incoming gradient times conj(f'(z)) (so that the
gradient of a real loss points along steepest ascent); each row builds complex operands from real
inputs with tf.complex, so the gradients that reach the real inputs show the convention.
"""

import numpy as np

from tests.differential.op_tables import op_row, table_tests

RNG = np.random.default_rng(2411)


def _parts(*names: str, shape=(2, 3), scale: float = 1.0, offset: float = 0.0) -> dict:
    return {n: RNG.uniform(-1, 1, shape) * scale + offset for n in names}


Z = "tf.complex(a, b)"
W = "tf.complex(c, d)"
OPS = [
    ("multiply", f"{Z} * {W}", _parts("a", "b", "c", "d")),
    ("multiply_broadcast", f"{Z} * tf.complex(c, d)", {**_parts("a", "b"), **_parts("c", "d", shape=(3,))}),
    ("divide", f"{Z} / {W}", {**_parts("a", "b"), **_parts("c", "d", offset=2.0)}),
    ("div_no_nan", f"tf.math.divide_no_nan({Z}, {W})", {**_parts("a", "b"), **_parts("c", "d", offset=2.0)}),
    ("matmul", f"tf.matmul({Z}, {W}, transpose_b=True)", _parts("a", "b", "c", "d")),
    ("matmul_adjoint", f"tf.matmul({Z}, {W}, adjoint_a=True)", _parts("a", "b", "c", "d")),
    ("square", f"tf.square({Z})", _parts("a", "b")),
    ("exp", f"tf.exp({Z})", _parts("a", "b")),
    ("log", f"tf.log({Z})", _parts("a", "b", offset=1.5)),
    ("log1p", f"tf.log1p({Z})", _parts("a", "b", offset=1.5)),
    ("reciprocal", f"tf.reciprocal({Z})", _parts("a", "b", offset=1.5)),
    ("sqrt", f"tf.sqrt({Z})", _parts("a", "b", offset=1.5)),
    ("rsqrt", f"tf.rsqrt({Z})", _parts("a", "b", offset=1.5)),
    ("tanh", f"tf.tanh({Z})", _parts("a", "b", scale=0.5)),
    ("sigmoid", f"tf.sigmoid({Z})", _parts("a", "b", scale=0.5)),
    ("sin", f"tf.sin({Z})", _parts("a", "b")),
    ("cos", f"tf.cos({Z})", _parts("a", "b")),
    ("pow", f"tf.pow({Z}, {W})", {**_parts("a", "b", offset=1.5), **_parts("c", "d", scale=0.5)}),
    ("abs", f"tf.abs({Z})", _parts("a", "b", offset=0.5)),
    ("reduce_sum", f"tf.reduce_sum({Z} * {W}, axis=1)", _parts("a", "b", "c", "d")),
    ("reduce_mean", f"tf.reduce_mean({Z} * {W})", _parts("a", "b", "c", "d")),
    ("reduce_prod", f"tf.reduce_prod({Z}, axis=0)", _parts("a", "b", offset=0.5)),
    ("conj", f"tf.conj({Z}) * {W}", _parts("a", "b", "c", "d")),
    ("real_imag", f"tf.real({Z} * {W}) + 2.0 * tf.imag({Z} * {Z})", _parts("a", "b", "c", "d")),
    ("angle", f"tf.angle({Z} * {W})", _parts("a", "b", "c", "d", offset=0.5)),
    ("add_sub", f"{Z} + {W} - {Z} * 2.0", _parts("a", "b", "c", "d")),
    ("squared_difference", f"tf.squared_difference({Z}, {W})", _parts("a", "b", "c", "d")),
    ("fft", f"tf.signal.fft({Z} * {W})", _parts("a", "b", "c", "d", shape=(2, 4))),
    ("imag_of_real", "tf.imag(a) + a", _parts("a")),
    ("abs_dtype", f"tf.stack([tf.abs({Z}), tf.abs(a)])", _parts("a", "b", offset=0.5)),
]

ROWS = [op_row(name, build, inputs) for name, build, inputs in OPS]

results, test_tftk_agrees_with_tensorflow = table_tests("complex_gradients", ROWS)
