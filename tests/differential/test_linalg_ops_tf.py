"""Matrix and linear-algebra ops, einsum, tensordot and cross against real TensorFlow (values and gradients)."""

import numpy as np
import pytest

from tests.differential.op_tables import compare, op_case
from tests.tf_oracle import run_in_tf, run_in_tftk

RNG = np.random.default_rng(11)


def general(*batch, n=3, dtype=np.float64):
    return (RNG.normal(size=batch + (n, n)) + 3 * np.eye(n)).astype(dtype)


def spd(*batch, n=3, dtype=np.float64):
    b = RNG.normal(size=batch + (n, n))
    return (b @ np.swapaxes(b, -1, -2) + n * np.eye(n)).astype(dtype)


def vec(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


# (name, build expression over the inputs, inputs, gradient?)
ROWS = [
    ("eye", "tf.eye(3, 4, batch_shape=[2], dtype=tf.float64) + a", {"a": vec(2, 3, 4)}, True),
    ("diag", "tf.diag(a)", {"a": vec(2, 3)}, True),
    ("diag_part", "tf.diag_part(a)", {"a": vec(2, 3, 2, 3)}, True),
    ("matrix_diag", "tf.matrix_diag(a)", {"a": vec(2, 4)}, True),
    ("matrix_diag_part", "tf.matrix_diag_part(a)", {"a": vec(2, 3, 4)}, True),
    ("matrix_set_diag", "tf.matrix_set_diag(a, d)", {"a": vec(2, 3, 3), "d": vec(2, 3)}, True),
    ("matrix_band_part", "tf.matrix_band_part(a, 1, 0)", {"a": vec(2, 4, 4)}, True),
    ("matrix_band_part_all_upper", "tf.matrix_band_part(a, 0, -1)", {"a": vec(3, 5)}, True),
    ("matrix_transpose", "tf.matrix_transpose(a)", {"a": vec(2, 3, 4)}, True),
    ("trace", "tf.trace(a)", {"a": vec(2, 3, 3)}, True),
    ("matrix_inverse", "tf.matrix_inverse(a)", {"a": general(2)}, True),
    ("matrix_inverse_adjoint", "tf.matrix_inverse(a, adjoint=True)", {"a": general()}, True),
    ("matrix_inverse_f32", "tf.matrix_inverse(a)", {"a": general(dtype=np.float32)}, True),
    ("matrix_determinant", "tf.matrix_determinant(a)", {"a": general(2)}, True),
    ("slogdet", "tf.linalg.slogdet(a)[1] * tf.linalg.slogdet(a)[0]", {"a": general(2)}, True),
    ("logdet", "tf.linalg.logdet(a)", {"a": spd(2)}, True),
    ("matrix_solve", "tf.matrix_solve(a, b)", {"a": general(2), "b": vec(2, 3, 2)}, True),
    ("matrix_solve_adjoint", "tf.matrix_solve(a, b, adjoint=True)", {"a": general(), "b": vec(3, 2)}, True),
    ("triangular_solve_lower", "tf.matrix_triangular_solve(a, b)", {"a": general(2), "b": vec(2, 3, 2)}, True),
    ("triangular_solve_upper_adjoint", "tf.matrix_triangular_solve(a, b, lower=False, adjoint=True)",
     {"a": general(), "b": vec(3, 4)}, True),
    ("cholesky", "tf.cholesky(a)", {"a": spd(2)}, True),
    ("cholesky_f32", "tf.cholesky(a)", {"a": spd(dtype=np.float32)}, False),
    ("cholesky_solve", "tf.cholesky_solve(tf.cholesky(a), b)", {"a": spd(), "b": vec(3, 2)}, True),
    ("matrix_solve_ls", "tf.matrix_solve_ls(a, b, l2_regularizer=0.1)", {"a": vec(5, 3), "b": vec(5, 2)}, True),
    ("qr_r_times_q", "tf.matmul(tf.qr(a)[0] * tf.qr(a)[0], tf.qr(a)[1] * tf.qr(a)[1])", {"a": vec(2, 4, 3)}, True),
    ("svd_values", "tf.svd(a, compute_uv=False)", {"a": vec(2, 4, 3)}, True),
    ("svd_vectors_squared", "tf.concat([tf.reshape(tf.svd(a)[1] ** 2, [-1]), tf.reshape(tf.svd(a)[2] ** 2, [-1])], 0)"
     " * 1.0 + tf.reduce_sum(tf.svd(a)[0])", {"a": vec(4, 3)}, True),
    ("svd_wide", "tf.svd(a)[0] + tf.reduce_sum(tf.svd(a)[2] ** 2 * 0.5)", {"a": vec(3, 5)}, True),
    ("self_adjoint_eig", "tf.concat([tf.self_adjoint_eig(a)[0], tf.reshape(tf.self_adjoint_eig(a)[1] ** 2, [-1])], 0)",
     {"a": spd()}, True),
    ("self_adjoint_eigvals", "tf.self_adjoint_eigvals(a)", {"a": spd(2)}, True),
    ("linalg_matvec", "tf.linalg.matvec(a, b)", {"a": vec(2, 3, 4), "b": vec(2, 4)}, True),
    ("linalg_norm", "tf.linalg.norm(a, axis=-1)", {"a": vec(3, 4)}, True),
    ("einsum_matmul", "tf.einsum('ij,jk->ik', a, b)", {"a": vec(2, 3), "b": vec(3, 4)}, True),
    ("einsum_batch_ellipsis", "tf.einsum('...ij,...jk->...ik', a, b)", {"a": vec(2, 2, 3), "b": vec(2, 3, 4)}, True),
    ("einsum_implicit_transpose", "tf.einsum('ij', a) + tf.einsum('ji', b)", {"a": vec(2, 3), "b": vec(3, 2)}, True),
    ("einsum_outer_sum", "tf.einsum('i,j->ij', a, b) + tf.einsum('ij->j', c)", {"a": vec(3), "b": vec(4), "c": vec(2, 4)}, True),
    ("einsum_three_operands", "tf.einsum('bi,ij,bj->b', a, w, c)", {"a": vec(2, 3), "w": vec(3, 4), "c": vec(2, 4)}, True),
    ("tensordot", "tf.tensordot(a, b, [[1], [0]])", {"a": vec(2, 3, 4), "b": vec(3, 5)}, True),
    ("cross", "tf.cross(a, b)", {"a": vec(4, 3), "b": vec(4, 3)}, True),
]

ERRORS = {
    "inverse_of_singular": "with tf.Session() as s:\n    s.run(tf.matrix_inverse(tf.zeros([2, 2])))\noutputs = {}\n",
    # Not here: Cholesky of a non-positive-definite matrix. TF 1.x raised InvalidArgumentError (as
    # tftk does, tests/ops/test_linalg_ops.py); TF 2.21's CPU kernel returns without an error.
    "inverse_not_square": "tf.matrix_inverse(tf.ones([2, 3]))\noutputs = {}\n",
}

CASES = {name: op_case(build, inputs, grad) for name, build, inputs, grad in ROWS}
CASES.update({name: (src, {}) for name, src in ERRORS.items()})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tftk_agrees_with_tensorflow(oracle, name):
    compare(oracle[name], run_in_tftk(*CASES[name]))
