"""expm, logm, sqrtm, pinv, matrix_rank, the LU family, normalize and the tridiagonal ops against real TF."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1305)
A = RNG.uniform(-1, 1, (3, 3))
SPD = A @ A.T + 3 * np.eye(3)
BATCH = RNG.uniform(-1, 1, (2, 4, 4))
TALL = RNG.uniform(-1, 1, (4, 3))
RANK2 = TALL[:, :2] @ RNG.uniform(-1, 1, (2, 3))
COMPACT = np.stack([RNG.uniform(-1, 1, 5), RNG.uniform(2, 3, 5), RNG.uniform(-1, 1, 5)])

OPS = [
    ("expm", "tf.linalg.expm(x)", {"x": A}, True),
    ("expm_batch_large", "tf.linalg.expm(x * 4.0)", {"x": BATCH}, True),
    ("expm_f32", "tf.linalg.expm(x)", {"x": A.astype(np.float32)}, True),
    ("sqrtm_spd", "tf.linalg.sqrtm(x)", {"x": SPD}, True),
    ("matrix_square_root", "tf.matrix_square_root(x)", {"x": BATCH @ np.swapaxes(BATCH, -1, -2) + np.eye(4)}, True),
    ("pinv_tall", "tf.linalg.pinv(x)", {"x": TALL}, True),
    ("pinv_rank_deficient", "tf.linalg.pinv(x)", {"x": RANK2}, False),
    ("pinv_rcond", "tf.linalg.pinv(x, rcond=0.5)", {"x": A}, False),
    ("matrix_rank", "tf.linalg.matrix_rank(x)", {"x": np.stack([RANK2, TALL])}, False),
    ("matrix_rank_tol", "tf.linalg.matrix_rank(x, tol=0.5)", {"x": A}, False),
    ("lu_packed", "tf.linalg.lu(x)[0]", {"x": BATCH}, False),
    ("lu_perm", "tf.linalg.lu(x)[1]", {"x": BATCH}, False),
    ("lu_perm_int64", "tf.linalg.lu(x, output_idx_type=tf.int64)[1]", {"x": A}, False),
    ("lu_solve", "tf.linalg.lu_solve(*tf.linalg.lu(x), y)", {"x": A, "y": RNG.uniform(-1, 1, (3, 2))}, False),
    ("lu_solve_batch", "tf.linalg.lu_solve(*tf.linalg.lu(x), y)", {"x": BATCH, "y": RNG.uniform(-1, 1, (2, 4, 1))}, False),
    ("lu_reconstruct", "tf.linalg.lu_reconstruct(*tf.linalg.lu(x))", {"x": A}, False),
    ("lu_reconstruct_batch", "tf.linalg.lu_reconstruct(*tf.linalg.lu(x))", {"x": BATCH}, False),
    ("lu_matrix_inverse", "tf.linalg.lu_matrix_inverse(*tf.linalg.lu(x))", {"x": BATCH}, False),
    # TF defines no gradient for Lu: differentiate lu_solve w.r.t. the right-hand side only
    ("lu_solve_grad_rhs", "tf.linalg.lu_solve(*[tf.stop_gradient(t) for t in tf.linalg.lu(x)], y)",
     {"x": A, "y": RNG.uniform(-1, 1, (3, 2))}, True),
    ("normalize", "tf.linalg.normalize(x)[0]", {"x": A}, True),
    ("normalize_axis_norm", "tf.linalg.normalize(x, ord=1, axis=1)[1]", {"x": A}, True),
    ("normalize_axis", "tf.linalg.normalize(x, axis=0)[0]", {"x": A}, True),
    ("tridiagonal_solve_compact", "tf.linalg.tridiagonal_solve(x, y)", {"x": COMPACT, "y": RNG.uniform(-1, 1, (5, 2))}, True),
    ("tridiagonal_solve_vector", "tf.linalg.tridiagonal_solve(x, y)", {"x": COMPACT, "y": RNG.uniform(-1, 1, 5)}, True),
    ("tridiagonal_solve_sequence", "tf.linalg.tridiagonal_solve([x[0], x[1], x[2]], y, diagonals_format='sequence')",
     {"x": COMPACT, "y": RNG.uniform(-1, 1, (5, 1))}, True),
    ("tridiagonal_solve_matrix", "tf.linalg.tridiagonal_solve(x, y, diagonals_format='matrix')",
     {"x": np.diag(COMPACT[1]) + np.diag(COMPACT[0, :-1], 1) + np.diag(COMPACT[2, 1:], -1),
      "y": RNG.uniform(-1, 1, (5, 2))}, True),
    ("tridiagonal_solve_transpose_rhs", "tf.linalg.tridiagonal_solve(x, y, transpose_rhs=True)",
     {"x": COMPACT, "y": RNG.uniform(-1, 1, (2, 5))}, True),
    ("tridiagonal_matmul", "tf.linalg.tridiagonal_matmul(x, y)", {"x": COMPACT, "y": RNG.uniform(-1, 1, (5, 3))}, True),
    ("eigh_tridiagonal", "tf.linalg.eigh_tridiagonal(x, y)", {"x": RNG.uniform(-1, 1, 5), "y": RNG.uniform(-1, 1, 4)}, False),
]

COMPLEX = (A + 3 * np.eye(3)) + 0.2j * RNG.uniform(-1, 1, (3, 3))
ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("logm", "fetch = {'y': tf.linalg.logm(tf.constant(inputs['x']))}\n", {"x": COMPLEX}),
    Row("logm_of_expm", "x = tf.cast(tf.constant(inputs['x']), tf.complex128)\nfetch = {'y': tf.linalg.logm(tf.linalg.expm(x))}\n",
        {"x": 0.3 * A}),
    Row("logm_real_rejected", "fetch = {'y': tf.linalg.logm(tf.constant(inputs['x']))}\n", {"x": A}),
    Row("eigh_tridiagonal_vectors", "a, b = tf.constant(inputs['a']), tf.constant(inputs['b'])\n"
        "e, v = tf.linalg.eigh_tridiagonal(a, b, eigvals_only=False)\n"
        "fetch = {'e': e, 'v': tf.abs(v)}\n", {"a": RNG.uniform(-1, 1, 4), "b": RNG.uniform(0.1, 1, 3)}),
    Row("expm_non_square", "fetch = {'y': tf.linalg.expm(tf.zeros([2, 3]))}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("linalg_more", ROWS)
