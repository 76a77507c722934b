"""tf.linalg.LinearOperator* against real TensorFlow: each operator's dense matrix, shape, matmul/matvec,
solve, determinant, diag_part, trace, and the composed operators (adjoint, inverse, composition)."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(1314)
A = RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
B = RNG.uniform(-1, 1, (2, 2)) + 2 * np.eye(2)
L = "tf.linalg"


def op_row(name: str, make: str, square: bool = True, extra: str = "") -> Row:
    lines = ["a, b = tf.constant(inputs['a']), tf.constant(inputs['b'])", f"op = {make}",
             "d = op.to_dense()", "x = tf.constant(np.cos(np.arange(d.shape.as_list()[-1] * 2.0)).reshape(-1, 2), d.dtype)",
             "fetch = {'dense': d, 'shape': tf.constant(op.shape.as_list()), 'matmul': op.matmul(x), "
             "'matvec': op.matvec(x[:, 0]), 'diag': op.diag_part(), 'adj': op.adjoint().to_dense()}"]
    if square:
        lines.append("fetch.update({'det': op.determinant(), 'logdet': op.log_abs_determinant(), 'trace': op.trace(), "
                     "'solve': op.solve(x), 'inv': op.inverse().to_dense()})")
    return Row(name, "\n".join(lines) + "\n" + extra, {"a": A, "b": B})


ROWS = [
    op_row("full_matrix", f"{L}.LinearOperatorFullMatrix(a)"),
    op_row("full_matrix_rect", f"{L}.LinearOperatorFullMatrix(a[:, :2])", square=False),
    op_row("diag", f"{L}.LinearOperatorDiag(a[0])"),
    op_row("identity", f"{L}.LinearOperatorIdentity(3, dtype=tf.float64)"),
    op_row("scaled_identity", f"{L}.LinearOperatorScaledIdentity(3, a[0, 0])"),
    op_row("lower_triangular", f"{L}.LinearOperatorLowerTriangular(a)"),
    op_row("zeros", f"{L}.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False, dtype=tf.float64)", square=False),
    Row("zeros_not_square", f"{L}.LinearOperatorZeros(3, 2)\nfetch = {{}}\n"),
    op_row("permutation", f"{L}.LinearOperatorPermutation([2, 0, 1], dtype=tf.float64)"),
    op_row("householder", f"{L}.LinearOperatorHouseholder(a[1])"),
    op_row("toeplitz", f"{L}.LinearOperatorToeplitz(a[0], a[1])"),
    op_row("tridiag", f"{L}.LinearOperatorTridiag(a)"),
    op_row("low_rank_update", f"{L}.LinearOperatorLowRankUpdate({L}.LinearOperatorDiag(a[0] + 3.0), a[:, :2], "
           "diag_update=b[0])"),
    op_row("composition", f"{L}.LinearOperatorComposition([{L}.LinearOperatorFullMatrix(a), {L}.LinearOperatorDiag(a[2])])"),
    op_row("adjoint", f"{L}.LinearOperatorAdjoint({L}.LinearOperatorFullMatrix(a))"),
    op_row("inversion", f"{L}.LinearOperatorInversion({L}.LinearOperatorFullMatrix(a))"),
    op_row("kronecker", f"{L}.LinearOperatorKronecker([{L}.LinearOperatorFullMatrix(a), {L}.LinearOperatorFullMatrix(b)])"),
    op_row("block_diag", f"{L}.LinearOperatorBlockDiag([{L}.LinearOperatorFullMatrix(a), {L}.LinearOperatorFullMatrix(b)])"),
    op_row("block_lower_triangular", f"{L}.LinearOperatorBlockLowerTriangular([[{L}.LinearOperatorFullMatrix(b)], "
           f"[{L}.LinearOperatorFullMatrix(a[:, :2]), {L}.LinearOperatorFullMatrix(a)]])"),
    Row("base_class_flags", f"op = {L}.LinearOperatorFullMatrix(tf.eye(2), is_self_adjoint=True)\n"
        f"fetch = {{'sa': tf.constant(op.is_self_adjoint), 'sq': tf.constant(op.is_square), "
        f"'sub': tf.constant(isinstance(op, {L}.LinearOperator))}}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("linear_operators", ROWS)
