"""Matrix, linear-algebra and contraction ops: float64 gradient checks, values and errors."""

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(5)


def arr(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape)


def general(*batch, n=3):
    return RNG.normal(size=batch + (n, n)) + 3 * np.eye(n)


def sym(x):
    return 0.5 * (x + tf.matrix_transpose(x))


def spd_of(x):
    n = x.shape.as_list()[-1]
    return tf.matmul(x, x, transpose_b=True) + n * tf.eye(n, dtype=tf.float64)


GRADIENT_CASES = [
    GradientCase("MatrixDiag", lambda d: tf.matrix_diag(d), [arr(2, 3)]),
    GradientCase("MatrixSetDiag", lambda x, d: tf.matrix_set_diag(x, d), [arr(2, 3, 3), arr(2, 3)]),
    GradientCase("Diag", lambda d: tf.diag(d), [arr(2, 2)]),
    GradientCase("DiagPart", lambda x: tf.diag_part(x), [arr(2, 3, 2, 3)]),
    GradientCase("MatrixBandPart", lambda x: tf.matrix_band_part(x, 1, 0), [arr(3, 4)]),
    GradientCase("MatrixInverse", lambda x: tf.matrix_inverse(x), [general(2)]),
    GradientCase("MatrixInverse_adjoint", lambda x: tf.matrix_inverse(x, adjoint=True), [general()]),
    GradientCase("MatrixDeterminant", lambda x: tf.matrix_determinant(x), [general(2)]),
    GradientCase("LogMatrixDeterminant", lambda x: tf.linalg.slogdet(x)[1], [general(2)]),
    GradientCase("MatrixSolve", lambda a, b: tf.matrix_solve(a, b), [general(2), arr(2, 3, 2)]),
    GradientCase("MatrixSolve_adjoint", lambda a, b: tf.matrix_solve(a, b, adjoint=True), [general(), arr(3, 2)]),
    GradientCase("MatrixTriangularSolve", lambda a, b: tf.matrix_triangular_solve(a, b), [general(), arr(3, 2)]),
    GradientCase("MatrixTriangularSolve_upper_adjoint",
                 lambda a, b: tf.matrix_triangular_solve(a, b, lower=False, adjoint=True), [general(), arr(3, 2)]),
    GradientCase("Cholesky", lambda x: tf.cholesky(spd_of(x)), [arr(2, 3, 3)]),
    GradientCase("Cholesky_second_order", lambda x: tf.gradients(tf.reduce_sum(tf.cholesky(sym(x))), x)[0],
                 [general() + 3 * np.eye(3)]),
    GradientCase("Qr", lambda x: tf.qr(x)[0] * 2.0 + tf.reduce_sum(tf.qr(x)[1]), [arr(2, 4, 3)]),
    GradientCase("Svd", lambda x: tf.concat([tf.reshape(t, [-1]) for t in tf.svd(x)], 0), [arr(4, 3)]),
    GradientCase("Svd_wide_full", lambda x: tf.concat([tf.reshape(t, [-1]) for t in tf.svd(x, full_matrices=True)], 0),
                 [arr(3, 4)]),
    GradientCase("Svd_values_only", lambda x: tf.svd(x, compute_uv=False), [arr(2, 3, 4)]),
    GradientCase("SelfAdjointEigV2", lambda x: tf.concat([tf.reshape(t, [-1]) for t in tf.self_adjoint_eig(x)], 0),
                 [arr(3, 3)]),
    GradientCase("SelfAdjointEigV2_values", lambda x: tf.self_adjoint_eigvals(x), [arr(2, 3, 3)]),
    GradientCase("Einsum", lambda a, b: tf.einsum("bij,jk->bik", a, b), [arr(2, 2, 3), arr(3, 2)]),
    GradientCase("Einsum_reduce_broadcast", lambda a, b: tf.einsum("ij,k->ik", a, b), [arr(2, 3), arr(4)]),
    GradientCase("Cross", lambda a, b: tf.cross(a, b), [arr(2, 3), arr(2, 3)]),
    GradientCase("logdet", lambda x: tf.linalg.logdet(spd_of(x)), [arr(3, 3)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)


@pytest.mark.parametrize("build, expected", [
    (lambda: tf.eye(2, 3, dtype=tf.int32), np.eye(2, 3, dtype=np.int32)),
    (lambda: tf.matrix_band_part(tf.ones([3, 3]), 0, 0), np.eye(3, dtype=np.float32)),
    (lambda: tf.linalg.tensor_diag_part(tf.diag([1.0, 2.0])), np.array([1.0, 2.0], np.float32)),
    (lambda: tf.einsum("ii->", tf.constant([[1.0, 2.0], [3.0, 4.0]])), np.float32(5.0)),
    (lambda: tf.linalg.lstsq(tf.constant([[1.0], [1.0]]), tf.constant([[1.0], [3.0]])), np.array([[2.0]], np.float32)),
])
def test_values(build, expected):
    with tf.Graph().as_default(), tf.Session() as s:
        out = s.run(build())
        assert out.dtype == expected.dtype
        np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("build, error, message", [
    (lambda: tf.matrix_inverse(tf.ones([2, 3])), ValueError, "must be a square matrix"),
    (lambda: tf.matrix_inverse(tf.ones([2, 2], tf.int32)), TypeError, "must be a float or complex matrix"),
    (lambda: tf.matrix_solve(tf.eye(2), tf.ones([3, 1])), ValueError, "does not fit a matrix of shape"),
    (lambda: tf.einsum("ij,jk->ik", tf.ones([2, 3]), tf.ones([2, 3])), ValueError, "dimension 'j' has sizes 3 and 2"),
    (lambda: tf.einsum("ij->i", tf.ones([2, 3]), tf.ones([2])), ValueError, "names 1 operands, got 2"),
    (lambda: tf.cross(tf.ones([2, 2]), tf.ones([2, 2])), ValueError, "last dimension must be 3"),
    (lambda: tf.diag_part(tf.ones([2, 3])), ValueError, "even rank with matching halves"),
])
def test_bad_input_is_refused_at_build_time(build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()


@pytest.mark.parametrize("build, message", [
    (lambda: tf.cholesky(-tf.eye(2)), "Cholesky decomposition was not successful"),
    (lambda: tf.matrix_inverse(tf.zeros([2, 2])), "Input is not invertible"),
    (lambda: tf.matrix_solve(tf.zeros([2, 2]), tf.ones([2, 1])), "Input matrix is not invertible"),
])
def test_singular_input_fails_when_run(build, message):
    with tf.Graph().as_default(), tf.Session() as s, pytest.raises(InvalidArgumentError, match=message):
        s.run(build())
