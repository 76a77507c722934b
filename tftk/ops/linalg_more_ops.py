"""More of tf.linalg: expm, logm, sqrtm (matrix_square_root), pinv, matrix_rank, lu and its
solve / reconstruct / inverse, normalize, tridiagonal_solve / tridiagonal_matmul and
eigh_tridiagonal.

expm is Pade(13) with scaling and squaring (Higham 2005), differentiated through the block
matrix [[A^T, G], [0, A^T]]; sqrtm is the Denman-Beavers iteration, differentiated by solving
S^T X + X S^T = G. The rest is built from existing ops (svd, triangular solves, matmul), so their
gradients are those ops'. lu and logm have no gradient here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.gather_ops import gather, where
from tftk.ops.linalg_ops import matrix_solve, matrix_triangular_solve, norm, self_adjoint_eig, self_adjoint_eigvals, svd
from tftk.ops.bessel_erfinv_ops import conj
from tftk.ops.matrix_ops import adjoint, eye, matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag
from tftk.ops.sequence_ops import invert_permutation

__all__ = ["expm", "logm", "sqrtm", "matrix_square_root", "pinv", "matrix_rank", "lu", "lu_solve", "lu_reconstruct",
           "lu_matrix_inverse", "normalize", "tridiagonal_solve", "tridiagonal_matmul", "eigh_tridiagonal"]

_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def _expm_one(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    ident = np.eye(n, dtype=a.dtype)
    scale = max(0, int(np.ceil(np.log2(max(np.linalg.norm(a, 1), 1e-300) / 5.371920351148152))))
    a = a / (2.0 ** scale)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    result = np.linalg.solve(v - u, v + u)
    for _ in range(scale):
        result = result @ result
    return result


def _batched(fn):
    def kernel(x: np.ndarray, *rest: np.ndarray) -> np.ndarray:
        flat = x.reshape((-1,) + x.shape[-2:])
        others = [r.reshape((-1,) + r.shape[-2:]) for r in rest]
        out = [fn(m, *[o[i] for o in others]) for i, m in enumerate(flat)]
        return np.stack(out).reshape(x.shape[:-2] + out[0].shape) if out else np.zeros(x.shape, x.dtype)
    return kernel


def _expm_grad_one(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    block = np.zeros((2 * n, 2 * n), np.result_type(a, g))
    block[:n, :n] = block[n:, n:] = a.conj().T
    block[:n, n:] = g
    return _expm_one(block)[:n, n:]


register_array_op("MatrixExponential", _batched(_expm_one), differentiable=True)
register_array_op("MatrixExponentialGrad", _batched(_expm_grad_one))


@registry.register_gradient("MatrixExponential")
def _expm_gradient(op, grad):
    a = op.inputs[0]
    return [array_op("MatrixExponentialGrad", [a, grad], [(grad.dtype, a.shape)])]


def _square_input(x: Any, what: str) -> Tensor:
    t = convert_to_tensor(x, name="input")
    dims = t.shape.as_list() if t.shape.ndims is not None else None
    if dims is not None and (len(dims) < 2 or (None not in dims[-2:] and dims[-1] != dims[-2])):
        raise ValueError(f"{what}: input must be square matrices [..., N, N], got shape {t.shape}")
    return t


def expm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The matrix exponential of each innermost square matrix."""
    with name_scope(name, "matrix_exponential", [input]):
        x = _square_input(input, "expm")
        return array_op("MatrixExponential", [x], [(x.dtype, x.shape)])


def _logm_one(a: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eig(a)
    return (v * np.log(w.astype(np.complex128))) @ np.linalg.inv(v)


register_array_op("MatrixLogarithm", _batched(_logm_one))


def logm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal matrix logarithm of complex (diagonalisable) square matrices."""
    x = _square_input(input, "logm")
    if not x.dtype.is_complex:
        raise TypeError(f"Value passed to parameter 'input' has DataType {x.dtype.name} not in list of allowed "
                        f"values: complex64, complex128")
    return array_op("MatrixLogarithm", [x], [(x.dtype, x.shape)], name)


def _sqrtm_one(a: np.ndarray) -> np.ndarray:
    y, z = a.astype(np.float64 if a.dtype.kind == "f" else np.complex128), np.eye(a.shape[-1])
    for _ in range(100):
        y_next = 0.5 * (y + np.linalg.inv(z))
        z = 0.5 * (z + np.linalg.inv(y))
        done = np.linalg.norm(y_next - y) <= 1e-14 * max(np.linalg.norm(y_next), 1e-300)
        y = y_next
        if done:
            break
    return y


def _sqrtm_grad_one(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    """X with S^T X + X S^T = G (the adjoint of dS -> S dS + dS S)."""
    n = s.shape[-1]
    st = s.conj().T
    system = np.kron(st, np.eye(n)) + np.kron(np.eye(n), st.T)
    return np.linalg.solve(system, g.reshape(-1)).reshape(n, n)


register_array_op("MatrixSquareRoot", _batched(_sqrtm_one), differentiable=True)
register_array_op("MatrixSquareRootGrad", _batched(_sqrtm_grad_one))


@registry.register_gradient("MatrixSquareRoot")
def _sqrtm_gradient(op, grad):
    s = op.outputs[0]
    return [array_op("MatrixSquareRootGrad", [s, grad], [(grad.dtype, s.shape)])]


def sqrtm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The principal square root of matrices with no eigenvalues on the closed negative real axis."""
    x = _square_input(input, "matrix_square_root")
    return array_op("MatrixSquareRoot", [x], [(x.dtype, x.shape)], name)


matrix_square_root = sqrtm


def _default_rcond(x: Tensor) -> Any:
    m, n = x.shape.as_list()[-2:]
    if m is None or n is None:
        raise ValueError("pinv / matrix_rank need matrices of known size for the default tolerance")
    return 10.0 * max(m, n) * np.finfo(x.dtype.as_numpy_dtype).eps


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, dropping singular values below rcond * the largest."""
    with name_scope(name, "pinv", [a, rcond]):
        x = convert_to_tensor(a, name="a")
        if rcond is None:
            rcond = _default_rcond(x)
        s, u, v = svd(x, full_matrices=False, compute_uv=True)
        cutoff = math_ops.cast(rcond, x.dtype) * reduction_ops.reduce_max(s, axis=-1, keepdims=True)
        keep = math_ops.greater(s, cutoff)
        safe = where(keep, s, array_ops.ones_like(s))
        inverse = where(keep, 1.0 / safe, array_ops.zeros_like(s))
        return math_ops.matmul(v * array_ops.expand_dims(inverse, -2), u, adjoint_b=True)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The number of singular values above tol (default eps * max(M, N) * the largest), as int32."""
    with name_scope(name, "matrix_rank", [a, tol]):
        x = convert_to_tensor(a, name="a")
        s = svd(x, compute_uv=False)
        if tol is None:
            m, n = x.shape.as_list()[-2:]
            threshold = reduction_ops.reduce_max(s, axis=-1, keepdims=True) * (
                max(m, n) * np.finfo(x.dtype.as_numpy_dtype).eps)
        else:
            threshold = math_ops.cast(convert_to_tensor(tol), x.dtype)
        return reduction_ops.reduce_sum(math_ops.cast(math_ops.greater(s, threshold), dtypes.int32), axis=-1)


# ---- LU -----------------------------------------------------------------------------------------------

def _lu_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lu = a.astype(np.result_type(a, np.float64) if a.dtype.kind != "c" else a.dtype).copy()
    n = lu.shape[0]
    perm = np.arange(n)
    for k in range(n):
        pivot = k + int(np.argmax(np.abs(lu[k:, k])))
        if pivot != k:
            lu[[k, pivot]] = lu[[pivot, k]]
            perm[[k, pivot]] = perm[[pivot, k]]
        if lu[k, k] != 0:
            lu[k + 1:, k] /= lu[k, k]
            lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu, perm


def _lu(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = x.reshape((-1,) + x.shape[-2:])
    parts = [_lu_one(m) for m in flat]
    lus = np.stack([p[0] for p in parts]) if parts else np.zeros(flat.shape, x.dtype)
    perms = np.stack([p[1] for p in parts]) if parts else np.zeros(flat.shape[:-1], np.int64)
    return lus.reshape(x.shape), perms.reshape(x.shape[:-1])


register_array_op("Lu", _lu)


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(lu, p): L (unit lower, below the diagonal) and U packed in one matrix, with input[..., p, :] = L @ U."""
    x = _square_input(input, "lu")
    out, perm = array_op("Lu", [x], [(x.dtype, x.shape), (dtypes.as_dtype(output_idx_type),
                                                         None if x.shape.ndims is None else x.shape[:-1])], name)
    return out, perm


def _lower_upper(lower_upper: Tensor) -> tuple[Tensor, Tensor]:
    """(L with its unit diagonal, U) out of lu()'s packed matrix."""
    lower = matrix_set_diag(matrix_band_part(lower_upper, -1, 0), array_ops.ones_like(matrix_diag_part(lower_upper)))
    return lower, matrix_band_part(lower_upper, 0, -1)


def _permute_rows(x: Tensor, perm: Tensor) -> Tensor:
    """x[..., perm, :] for batched perms."""
    if perm.shape.ndims == 1:
        return gather(x, perm, axis=x.shape.ndims - 2)
    from tftk.ops.index_ops import batch_gather
    return batch_gather(x, perm)


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """x with input @ x = rhs, given lu(input)."""
    with name_scope(name, "lu_solve", [lower_upper, perm, rhs]):
        packed = convert_to_tensor(lower_upper, name="lower_upper")
        p = convert_to_tensor(perm, name="perm")
        b = convert_to_tensor(rhs, dtype=packed.dtype, name="rhs")
        lower, upper = _lower_upper(packed)
        y = matrix_triangular_solve(lower, _permute_rows(b, p), lower=True)
        return matrix_triangular_solve(upper, y, lower=False)


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The matrix lu() factored: L @ U with the rows put back in place."""
    with name_scope(name, "lu_reconstruct", [lower_upper, perm]):
        packed = convert_to_tensor(lower_upper, name="lower_upper")
        p = convert_to_tensor(perm, name="perm")
        lower, upper = _lower_upper(packed)
        product = math_ops.matmul(lower, upper)
        if p.shape.ndims == 1:
            return _permute_rows(product, invert_permutation(p))
        from tftk.ops.sort_ops import argsort
        return _permute_rows(product, argsort(p, axis=-1))


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The inverse of the matrix lu() factored."""
    with name_scope(name, "lu_matrix_inverse", [lower_upper, perm]):
        packed = convert_to_tensor(lower_upper, name="lower_upper")
        n = packed.shape.as_list()[-1]
        identity = eye(n, dtype=packed.dtype)
        return lu_solve(packed, perm, identity + array_ops.zeros_like(packed))


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(tensor / norm, norm) with the norm kept as a dimension of size one."""
    with name_scope(name, "normalize", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        n = norm(x, ord=ord, axis=axis, keepdims=True)
        return x / n, n


# ---- tridiagonal ---------------------------------------------------------------------------------------

def _shift(n: int, dtype: dtypes.DType, up: bool) -> Tensor:
    return convert_to_tensor(np.eye(n, k=1 if up else -1), dtype=dtype)


def _dense_tridiagonal(diagonals: Any, diagonals_format: str) -> Tensor:
    if diagonals_format == "matrix":  # only the three diagonals are read
        return matrix_band_part(convert_to_tensor(diagonals, name="diagonals"), 1, 1)
    if diagonals_format == "sequence":
        superdiag, diag, subdiag = (convert_to_tensor(d) for d in diagonals)
    elif diagonals_format == "compact":
        packed = convert_to_tensor(diagonals, name="diagonals")
        superdiag, diag, subdiag = packed[..., 0, :], packed[..., 1, :], packed[..., 2, :]
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    n = diag.shape.as_list()[-1]
    if n is None:
        raise ValueError("tridiagonal ops need a known matrix size")
    return (matrix_diag(diag) + math_ops.matmul(matrix_diag(superdiag), _shift(n, diag.dtype, True))
            + math_ops.matmul(matrix_diag(subdiag), _shift(n, diag.dtype, False)))


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact", transpose_rhs: bool = False,
                      conjugate_rhs: bool = False, name: str | None = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """x with A x = rhs for tridiagonal A given as 'compact' [..., 3, M], 'sequence' or 'matrix'."""
    with name_scope(name, "tridiagonal_solve", [diagonals, rhs]):
        dense = _dense_tridiagonal(diagonals, diagonals_format)
        b = convert_to_tensor(rhs, dtype=dense.dtype, name="rhs")
        vector = b.shape.ndims == dense.shape.ndims - 1
        if transpose_rhs:
            b = adjoint(b) if conjugate_rhs else array_ops.transpose(
                b, list(range(b.shape.ndims - 2)) + [b.shape.ndims - 1, b.shape.ndims - 2])
        elif conjugate_rhs:
            b = conj(b)
        x = matrix_solve(dense, array_ops.expand_dims(b, -1) if vector else b)
        return array_ops.squeeze(x, [-1]) if vector else x


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact", name: str | None = None) -> Tensor:
    """A @ rhs for tridiagonal A."""
    with name_scope(name, "tridiagonal_matmul", [diagonals, rhs]):
        dense = _dense_tridiagonal(diagonals, diagonals_format)
        return math_ops.matmul(dense, convert_to_tensor(rhs, dtype=dense.dtype, name="rhs"))


def eigh_tridiagonal(alpha: Any, beta: Any, eigvals_only: bool = True, select: str = "a", select_range: Any = None,
                     tol: Any = None, name: str | None = None) -> Any:
    """Eigenvalues (ascending; and eigenvectors) of the symmetric tridiagonal matrix with diagonal
    alpha and off-diagonal beta. select='a' (all) only."""
    if select != "a":
        raise ValueError("eigh_tridiagonal: only select='a' (all eigenvalues) is supported here")
    with name_scope(name, "eigh_tridiagonal", [alpha, beta]):
        a = convert_to_tensor(alpha, name="alpha")
        b = convert_to_tensor(beta, dtype=a.dtype, name="beta")
        zero = array_ops.zeros_like(b[..., :1])
        dense = _dense_tridiagonal([array_ops.concat([b, zero], -1), a, array_ops.concat([zero, b], -1)], "sequence")
        return self_adjoint_eigvals(dense) if eigvals_only else self_adjoint_eig(dense)
