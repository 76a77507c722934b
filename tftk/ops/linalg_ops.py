"""Linear algebra on the innermost matrices: inverse, determinants, solves, decompositions, norm.

Forward kernels are numpy.linalg (batched over leading dimensions). Gradients of inverse,
determinants, solves and Cholesky are graph rules (so they differentiate again); those of QR,
SVD and the symmetric eigendecomposition are numpy kernels of TF's formulas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.matrix_ops import adjoint, eye, matrix_band_part, matrix_diag, matrix_diag_part
from tftk.ops.op_builder import broadcast_shape, make_multi_op, make_op

__all__ = ["matrix_inverse", "matrix_determinant", "log_matrix_determinant", "logdet", "matrix_solve",
           "matrix_triangular_solve", "cholesky", "cholesky_solve", "qr", "svd", "self_adjoint_eig",
           "self_adjoint_eigvals", "matrix_solve_ls", "norm", "matvec"]


def _square(x: Any, op_type: str, name: str | None, float_only: bool = True) -> Tensor:
    t = convert_to_tensor(x)
    if float_only and not (t.dtype.is_floating or t.dtype.is_complex):
        raise TypeError(f"{op_type} '{name or op_type}': input must be a float or complex matrix, got {t.dtype.name}")
    dims = t.shape.as_tuple()
    if dims is not None and (len(dims) < 2 or None not in dims[-2:] and dims[-1] != dims[-2]):
        raise ValueError(f"{op_type} '{name or op_type}': input must be a square matrix (or a batch of them), "
                         f"got shape {t.shape}")
    return t


def _rhs(matrix: Tensor, rhs: Any, op_type: str, name: str | None) -> Tensor:
    b = convert_to_tensor(rhs, dtype=matrix.dtype)
    ma, mb = matrix.shape.as_tuple(), b.shape.as_tuple()
    if ma is not None and mb is not None and (len(mb) < 2 or ma[-1] is not None and mb[-2] is not None
                                              and ma[-1] != mb[-2]):
        raise ValueError(f"{op_type} '{name or op_type}': rhs of shape {b.shape} does not fit a matrix of shape "
                         f"{matrix.shape}")
    return b


def _batch_scalar(x: Tensor) -> Tensor:
    """[...] -> [..., 1, 1], to scale each matrix of a batch."""
    return array_ops.expand_dims(array_ops.expand_dims(x, -1), -1)


def _linalg_error(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def _checked(fn, what: str):
    def kernel(*arrays):
        try:
            return fn(*arrays)
        except np.linalg.LinAlgError as e:
            raise _linalg_error(f"{what}: {e}") from None
    return kernel


# ---- inverse / determinants ----------------------------------------------------------------------

def _inverse(x, adjoint_):
    x = np.conj(np.swapaxes(x, -1, -2)) if adjoint_ else x
    return np.linalg.inv(x)


registry.register_op("MatrixInverse", lambda op, ctx: _checked(
    lambda x: _inverse(x, op.get_attr("adjoint")), "Input is not invertible."))
registry.register_op("MatrixDeterminant", lambda op, ctx: lambda x: np.asarray(np.linalg.det(x), x.dtype))
registry.register_op("LogMatrixDeterminant", lambda op, ctx: lambda x: tuple(
    np.asarray(v, x.dtype) for v in np.linalg.slogdet(x)))


@registry.register_gradient("MatrixInverse")
def _inverse_grad(op, grad):
    ainv = op.outputs[0]
    if op.get_attr("adjoint"):
        return [math_ops.negative(math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_a=True)))]
    return [math_ops.negative(math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_b=True), adjoint_a=True))]


@registry.register_gradient("MatrixDeterminant")
def _determinant_grad(op, grad):
    a, det = op.inputs[0], op.outputs[0]
    return [math_ops.multiply(_batch_scalar(math_ops.multiply(grad, det)), matrix_inverse(a, adjoint=True))]


@registry.register_gradient("LogMatrixDeterminant")
def _slogdet_grad(op, _sign_grad, grad):
    return [math_ops.multiply(_batch_scalar(grad), matrix_inverse(op.inputs[0], adjoint=True))]


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """The inverse (of the adjoint, when `adjoint`) of each square matrix."""
    x = _square(input, "MatrixInverse", name)
    return make_op("MatrixInverse", [x], x.dtype, x.shape, name, {"adjoint": bool(adjoint)})


def _batch_shape(x: Tensor) -> TensorShape:
    return TensorShape(None) if x.shape.ndims is None else TensorShape(x.shape.as_list()[:-2])


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:
    """The determinant of each square matrix: shape [...]."""
    x = _square(input, "MatrixDeterminant", name)
    return make_op("MatrixDeterminant", [x], x.dtype, _batch_shape(x), name)


def log_matrix_determinant(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(sign, log|det|) of each square matrix."""
    x = _square(input, "LogMatrixDeterminant", name)
    op = make_multi_op("LogMatrixDeterminant", [x], [(x.dtype, _batch_shape(x))] * 2, name)
    return op.outputs[0], op.outputs[1]


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """log(det(matrix)) of Hermitian positive-definite matrices, via the Cholesky factor."""
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return math_ops.multiply(2.0, reduction_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=-1))


# ---- solves --------------------------------------------------------------------------------------

def _solve(a, b, adjoint_):
    a = np.conj(np.swapaxes(a, -1, -2)) if adjoint_ else a
    return np.linalg.solve(a, b)


def _triangular_solve(a, b, lower, adjoint_):
    tri = np.tril(a) if lower else np.triu(a)
    return _solve(tri, b, adjoint_)


registry.register_op("MatrixSolve", lambda op, ctx: _checked(
    lambda a, b: _solve(a, b, op.get_attr("adjoint")), "Input matrix is not invertible."))
registry.register_op("MatrixTriangularSolve", lambda op, ctx: _checked(
    lambda a, b: _triangular_solve(a, b, op.get_attr("lower"), op.get_attr("adjoint")),
    "Input matrix is not invertible."))


@registry.register_gradient("MatrixSolve")
def _solve_grad(op, grad):
    a, _ = op.inputs
    x = op.outputs[0]
    adj = op.get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adj)
    if adj:
        return [math_ops.negative(math_ops.matmul(x, grad_b, adjoint_b=True)), grad_b]
    return [math_ops.negative(math_ops.matmul(grad_b, x, adjoint_b=True)), grad_b]


@registry.register_gradient("MatrixTriangularSolve")
def _triangular_solve_grad(op, grad):
    a, _ = op.inputs
    x = op.outputs[0]
    adj, lower = op.get_attr("adjoint"), op.get_attr("lower")
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adj)
    if adj:
        grad_a = math_ops.negative(math_ops.matmul(x, grad_b, adjoint_b=True))
    else:
        grad_a = math_ops.negative(math_ops.matmul(grad_b, x, adjoint_b=True))
    return [matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1), grad_b]


def _solve_shape(a: Tensor, b: Tensor) -> TensorShape:
    if a.shape.ndims is None or b.shape.ndims is None:
        return TensorShape(None)
    batch = broadcast_shape(TensorShape(a.shape.as_list()[:-2]), TensorShape(b.shape.as_list()[:-2]))
    return batch.concatenate(b.shape.as_list()[-2:])


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """X with matrix @ X = rhs (adjoint(matrix) @ X = rhs when `adjoint`)."""
    a = _square(matrix, "MatrixSolve", name)
    b = _rhs(a, rhs, "MatrixSolve", name)
    return make_op("MatrixSolve", [a, b], a.dtype, _solve_shape(a, b), name, {"adjoint": bool(adjoint)})


def matrix_triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: str | None = None) -> Tensor:
    """X with tri(matrix) @ X = rhs, reading only the lower (or upper) triangle of `matrix`."""
    a = _square(matrix, "MatrixTriangularSolve", name)
    b = _rhs(a, rhs, "MatrixTriangularSolve", name)
    return make_op("MatrixTriangularSolve", [a, b], a.dtype, _solve_shape(a, b), name,
                   {"lower": bool(lower), "adjoint": bool(adjoint)})


def matrix_solve_ls(matrix: Any, rhs: Any, l2_regularizer: float = 0.0, fast: bool = True,
                    name: str | None = None) -> Tensor:
    """Least-squares X minimising |matrix @ X - rhs|² + l2 |X|² (normal equations, TF's fast path)."""
    with name_scope(name, "matrix_solve_ls", [matrix, rhs]):
        a = convert_to_tensor(matrix)
        b = convert_to_tensor(rhs, dtype=a.dtype)
        n = a.shape.as_list()[-1]
        if n is None:
            raise ValueError("matrix_solve_ls needs the number of columns of matrix known")
        gram = math_ops.matmul(a, a, adjoint_a=True)
        if l2_regularizer:
            gram = math_ops.add(gram, math_ops.multiply(eye(n, dtype=a.dtype), float(l2_regularizer)))
        return cholesky_solve(cholesky(gram), math_ops.matmul(a, b, adjoint_a=True))


# ---- Cholesky ------------------------------------------------------------------------------------

registry.register_op("Cholesky", lambda op, ctx: _checked(
    lambda x: np.linalg.cholesky(np.tril(x) + np.swapaxes(np.tril(x, -1), -1, -2).conj()),
    "Cholesky decomposition was not successful. The input might not be valid."))


@registry.register_gradient("Cholesky")
def _cholesky_grad(op, grad):
    """TF's rule: Φ(Lᴴ Ḡ) sandwiched by L⁻¹, symmetrised (Murray 2016)."""
    chol = op.outputs[0]
    n = chol.shape.as_list()[-1]
    l_inv = matrix_triangular_solve(chol, eye(n, dtype=chol.dtype) if n is not None else
                                    array_ops.ones_like(chol))
    middle = math_ops.matmul(chol, grad, adjoint_a=True)
    middle = math_ops.subtract(matrix_band_part(middle, -1, 0), math_ops.multiply(
        0.5, matrix_diag(matrix_diag_part(middle))))
    grad_a = math_ops.matmul(math_ops.matmul(l_inv, middle, adjoint_a=True), l_inv)
    return [math_ops.multiply(0.5, math_ops.add(grad_a, adjoint(grad_a)))]


def cholesky(input: Any, name: str | None = None) -> Tensor:
    """The lower-triangular L with L Lᴴ = input, for Hermitian positive-definite matrices."""
    x = _square(input, "Cholesky", name)
    if x.shape.ndims is not None and x.shape.as_list()[-1] is None:
        raise ValueError("Cholesky needs the matrix size known when the graph is built")
    return make_op("Cholesky", [x], x.dtype, x.shape, name)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """X with (L Lᴴ) X = rhs, given the Cholesky factor L."""
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, lower=True, adjoint=False)
        return matrix_triangular_solve(chol, y, lower=True, adjoint=True)


# ---- QR / SVD / eigh: numpy kernels for the forward op and its gradient ---------------------------

def _t(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _qr_grad_kernel(a, q, r, dq, dr):
    """TF's _QrGrad (reduced QR, m >= n)."""
    qdq = _t(q) @ dq
    rdr = r @ _t(dr)
    tril = np.tril(qdq - _t(qdq) + rdr - _t(rdr))

    def solve_right(x):  # x @ inv(r)ᴴ ... as TF: adjoint(triangular_solve(r, adjoint(x), lower=False))
        return _t(np.linalg.solve(np.triu(r), _t(x)))
    return q @ (dr + solve_right(tril)) + solve_right(dq - q @ qdq)


def _safe_reciprocal(x, eps=1e-20):
    return x / (x * x + eps)


def _svd_grad_kernel(compute_uv, full_matrices):
    def kernel(a, s, u, v, ds, du, dv):
        if not compute_uv:
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            return u @ (ds[..., :, None] * vh)
        m, n = a.shape[-2:]
        adjoint_ = m > n
        if adjoint_:
            m, n, u, v, du, dv = n, m, v, u, dv, du
        if full_matrices and abs(m - n) > 1:
            raise _linalg_error("SVD gradient with full_matrices=True needs |m - n| <= 1")
        s2 = s * s
        f = 1.0 / (s2[..., None, :] - s2[..., :, None] + np.eye(s.shape[-1]))
        f = f * (1 - np.eye(s.shape[-1]))
        s_mat = s[..., :, None] * np.eye(s.shape[-1])
        v1, dv1 = v[..., :, :m], dv[..., :, :m]
        f_u = f * (_t(u) @ du)
        f_v = f * (_t(v1) @ dv1)
        inner = ds[..., :, None] * np.eye(s.shape[-1]) + (f_u + _t(f_u)) @ s_mat + s_mat @ (f_v + _t(f_v))
        grad = u @ inner @ _t(v1)
        if m != n:
            gv1t = _t(dv1)
            term = gv1t - (gv1t @ v1) @ _t(v1)
            if full_matrices:
                term = term - (_t(v1) @ dv[..., :, m:n]) @ _t(v[..., :, m:n])
            grad = grad + (u * _safe_reciprocal(s)[..., None, :]) @ term
        return _t(grad) if adjoint_ else grad
    return kernel


def _eigh_grad_kernel(e, v, de, dv):
    """TF's _SelfAdjointEigV2Grad: only the lower triangle of the input is read."""
    k = e.shape[-1]
    f = 1.0 / (e[..., None, :] - e[..., :, None] + np.eye(k)) * (1 - np.eye(k))
    g = v @ ((de[..., :, None] * np.eye(k) + f * (_t(v) @ dv)) @ _t(v))
    g = np.tril(g + _t(g))
    idx = np.arange(k)
    g[..., idx, idx] *= 0.5
    return g


def _bind_svd(op, ctx):
    compute_uv, full = op.get_attr("compute_uv"), op.get_attr("full_matrices")

    def kernel(a):
        if not compute_uv:
            s = np.linalg.svd(a, compute_uv=False)
            return s, np.zeros((0,), a.dtype), np.zeros((0,), a.dtype)
        u, s, vh = np.linalg.svd(a, full_matrices=full)
        return s, u, _t(vh)
    return _checked(kernel, "SVD did not converge")


registry.register_op("Qr", lambda op, ctx: _checked(lambda a: tuple(np.linalg.qr(
    a, mode="complete" if op.get_attr("full_matrices") else "reduced")), "QR failed"))
registry.register_op("QrGrad", lambda op, ctx: _qr_grad_kernel)
registry.register_op("Svd", _bind_svd)
registry.register_op("SvdGrad", lambda op, ctx: _svd_grad_kernel(op.get_attr("compute_uv"),
                                                                  op.get_attr("full_matrices")))
registry.register_op("SelfAdjointEigV2", lambda op, ctx: _checked(
    lambda a: tuple(np.linalg.eigh(a, UPLO="L")) if op.get_attr("compute_v")
    else (np.linalg.eigvalsh(a, UPLO="L"), np.zeros((0,), a.dtype)), "Eigen decomposition failed"))
registry.register_op("SelfAdjointEigV2Grad", lambda op, ctx: _eigh_grad_kernel)
registry.not_differentiable("QrGrad", "SvdGrad", "SelfAdjointEigV2Grad")


@registry.register_gradient("Qr")
def _qr_grad(op, dq, dr):
    a = op.inputs[0]
    dims = a.shape.as_list() if a.shape.ndims is not None else None
    if op.get_attr("full_matrices") or dims is None or None in dims[-2:] or dims[-2] < dims[-1]:
        raise NotImplementedError("QR gradient is defined for full_matrices=False and m >= n (as in TF)")
    q, r = op.outputs
    return [make_op("QrGrad", [a, q, r, dq, dr], a.dtype, a.shape)]


@registry.register_gradient("Svd")
def _svd_grad(op, ds, du, dv):
    a = op.inputs[0]
    return [make_op("SvdGrad", [a, *op.outputs, ds, du, dv], a.dtype, a.shape,
                    attrs={"compute_uv": op.get_attr("compute_uv"), "full_matrices": op.get_attr("full_matrices")})]


@registry.register_gradient("SelfAdjointEigV2")
def _eigh_grad(op, de, dv):
    if not op.get_attr("compute_v"):
        e, v = self_adjoint_eig(op.inputs[0])
        return [make_op("SelfAdjointEigV2Grad", [e, v, de, array_ops.zeros_like(v)], v.dtype, v.shape)]
    return [make_op("SelfAdjointEigV2Grad", [*op.outputs, de, dv], op.inputs[0].dtype, op.inputs[0].shape)]


def _matrix(x: Any, op_type: str, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    if t.shape.ndims is not None and t.shape.ndims < 2:
        raise ValueError(f"{op_type} '{name or op_type}': input must be at least rank 2, got shape {t.shape}")
    return t


def _matrix_dims(x: Tensor) -> tuple[list, Any, Any]:
    if x.shape.ndims is None:
        return None, None, None
    dims = x.shape.as_list()
    return dims[:-2], dims[-2], dims[-1]


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(q, r) with input = q @ r, q orthonormal columns, r upper triangular."""
    x = _matrix(input, "Qr", name)
    batch, m, n = _matrix_dims(x)
    if batch is None:
        specs = [(x.dtype, None)] * 2
    else:
        k = m if full_matrices or m is None or n is None else min(m, n)
        specs = [(x.dtype, batch + [m, k]), (x.dtype, batch + [k, n])]
    op = make_multi_op("Qr", [x], specs, name, {"full_matrices": bool(full_matrices)})
    return op.outputs[0], op.outputs[1]


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None) -> Any:
    """Singular values s (descending), and with compute_uv (s, u, v) where tensor = u diag(s) vᴴ."""
    x = _matrix(tensor, "Svd", name)
    batch, m, n = _matrix_dims(x)
    if batch is None:
        specs = [(x.dtype, None)] * 3
    else:
        k = None if m is None or n is None else min(m, n)
        if compute_uv:
            specs = [(x.dtype, batch + [k]), (x.dtype, batch + [m, m if full_matrices else k]),
                     (x.dtype, batch + [n, n if full_matrices else k])]
        else:
            specs = [(x.dtype, batch + [k]), (x.dtype, [0]), (x.dtype, [0])]
    op = make_multi_op("Svd", [x], specs, name, {"compute_uv": bool(compute_uv),
                                                 "full_matrices": bool(full_matrices)})
    return tuple(op.outputs) if compute_uv else op.outputs[0]


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(e, v): eigenvalues ascending and eigenvectors (columns) of self-adjoint matrices (lower triangle)."""
    x = _square(tensor, "SelfAdjointEigV2", name)
    batch, m, _ = _matrix_dims(x)
    specs = [(x.dtype, None), (x.dtype, None)] if batch is None else [(x.dtype, batch + [m]), (x.dtype, x.shape)]
    op = make_multi_op("SelfAdjointEigV2", [x], specs, name, {"compute_v": True})
    return op.outputs[0], op.outputs[1]


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """Eigenvalues (ascending) of self-adjoint matrices."""
    x = _square(tensor, "SelfAdjointEigV2", name)
    batch, m, _ = _matrix_dims(x)
    specs = [(x.dtype, None if batch is None else batch + [m]), (x.dtype, [0])]
    return make_multi_op("SelfAdjointEigV2", [x], specs, name, {"compute_v": False}).outputs[0]


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: bool | None = None,
         name: str | None = None, keep_dims: bool | None = None) -> Tensor:
    """Vector norm over `axis` (all entries when None): ord 'euclidean'/2, 1 or np.inf."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        if ord in ("euclidean", "fro", 2, 2.0):
            return math_ops.sqrt(reduction_ops.reduce_sum(math_ops.square(x),
                                                     axis=axis, keepdims=keep))
        if ord in (1, 1.0):
            return reduction_ops.reduce_sum(math_ops.abs(x), axis=axis, keepdims=keep)
        if ord == np.inf:
            return reduction_ops.reduce_max(math_ops.abs(x), axis=axis, keepdims=keep)
        if isinstance(ord, (int, float)) and ord > 0:
            p = float(ord)
            return math_ops.pow(reduction_ops.reduce_sum(math_ops.pow(math_ops.abs(x), p), axis=axis, keepdims=keep),
                                1.0 / p)
        raise ValueError(f"norm: ord must be 'euclidean', 'fro', a positive number or np.inf, got {ord!r}")



def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False, a_is_sparse: bool = False,
           b_is_sparse: bool = False, name: str | None = None) -> Tensor:
    """Matrix-vector products a @ b over the last dimensions: [..., M, N] x [..., N] -> [..., M]."""
    with name_scope(name, "MatVec", [a, b]):
        product = math_ops.matmul(a, array_ops.expand_dims(b, -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(product, axis=-1)
