"""The `tf.linalg` namespace."""

from tftk.ops.clip_ops import global_norm
from tftk.ops.einsum_ops import cross, einsum, tensordot
from tftk.ops.linalg_ops import cholesky, cholesky_solve, logdet, matvec, norm, qr, svd
from tftk.ops.linalg_ops import log_matrix_determinant as slogdet
from tftk.ops.linalg_ops import matrix_determinant as det
from tftk.ops.linalg_ops import matrix_inverse as inv
from tftk.ops.linalg_ops import matrix_solve as solve
from tftk.ops.linalg_ops import matrix_solve_ls as lstsq
from tftk.ops.linalg_ops import matrix_triangular_solve as triangular_solve
from tftk.ops.linalg_ops import self_adjoint_eig as eigh
from tftk.ops.linalg_ops import self_adjoint_eigvals as eigvalsh
from tftk.ops.math_ops import matmul
from tftk.ops.matrix_ops import adjoint, eye, matrix_transpose, trace
from tftk.ops.matrix_ops import diag as tensor_diag
from tftk.ops.matrix_ops import diag_part as tensor_diag_part
from tftk.ops.matrix_ops import matrix_band_part as band_part
from tftk.ops.matrix_ops import matrix_diag as diag
from tftk.ops.matrix_ops import matrix_diag_part as diag_part
from tftk.ops.matrix_ops import matrix_set_diag as set_diag
from tftk.ops.matrix_ops import matrix_transpose as transpose
from tftk.ops.nn_ops import l2_normalize
from tftk.ops.linalg_more_ops import (eigh_tridiagonal, expm, logm, lu, lu_matrix_inverse, lu_reconstruct,
                                      lu_solve, matrix_rank, normalize, pinv, sqrtm, tridiagonal_matmul,
                                      tridiagonal_solve)

__all__ = ["adjoint", "band_part", "cholesky", "cholesky_solve", "cross", "det", "diag", "diag_part", "eigh",
           "eigvalsh", "einsum", "eye", "global_norm", "inv", "l2_normalize", "logdet", "lstsq", "matmul",
           "matrix_transpose", "matvec", "norm", "qr", "set_diag", "slogdet", "solve", "svd", "tensor_diag",
           "tensor_diag_part", "tensordot", "trace", "transpose", "triangular_solve", "eigh_tridiagonal", "expm", "logm",
           "lu", "lu_matrix_inverse", "lu_reconstruct", "lu_solve", "matrix_rank", "normalize", "pinv", "sqrtm",
           "tridiagonal_matmul", "tridiagonal_solve"]
from tftk.ops.linear_operators import (LinearOperator, LinearOperatorAdjoint, LinearOperatorBlockDiag,  # noqa: E402
                                       LinearOperatorBlockLowerTriangular, LinearOperatorComposition,
                                       LinearOperatorDiag, LinearOperatorFullMatrix, LinearOperatorHouseholder,
                                       LinearOperatorIdentity, LinearOperatorInversion, LinearOperatorKronecker,
                                       LinearOperatorLowerTriangular, LinearOperatorLowRankUpdate,
                                       LinearOperatorPermutation, LinearOperatorScaledIdentity,
                                       LinearOperatorToeplitz, LinearOperatorTridiag, LinearOperatorZeros)
