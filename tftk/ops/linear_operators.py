"""tf.linalg.LinearOperator and its structured subclasses, computed through their dense matrices.

Each subclass says what its matrix is (`_to_dense`); matmul, solve, determinant, diag_part, trace and
the rest are the dense linear-algebra ops on it, so results (and gradients) are those ops'. TF
exploits the structure for speed; here the structure is only a way to build the matrix.
(The circulant operators, which need complex FFT products, are not here.)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.einsum_ops import einsum
from tftk.ops.linalg_more_ops import _dense_tridiagonal
from tftk.ops.linalg_ops import cholesky, log_matrix_determinant, matrix_determinant, matrix_inverse, matrix_solve
from tftk.ops.matrix_ops import adjoint as _adjoint
from tftk.ops.matrix_ops import eye, matrix_band_part, matrix_diag, matrix_diag_part
from tftk.ops.sequence_ops import one_hot
from tftk.ops.tile_pad_ops import pad

__all__ = ["LinearOperator", "LinearOperatorFullMatrix", "LinearOperatorDiag", "LinearOperatorIdentity",
           "LinearOperatorScaledIdentity", "LinearOperatorLowerTriangular", "LinearOperatorComposition",
           "LinearOperatorAdjoint", "LinearOperatorInversion", "LinearOperatorKronecker", "LinearOperatorBlockDiag",
           "LinearOperatorBlockLowerTriangular", "LinearOperatorZeros", "LinearOperatorPermutation",
           "LinearOperatorHouseholder", "LinearOperatorToeplitz", "LinearOperatorLowRankUpdate",
           "LinearOperatorTridiag"]


class LinearOperator:
    """A matrix (batch of matrices) known by its structure; subclasses define `_to_dense`."""

    def __init__(self, dtype: Any = None, graph_parents: Any = None, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None, parameters: dict | None = None) -> None:
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._is_non_singular, self._is_self_adjoint = is_non_singular, is_self_adjoint
        self._is_positive_definite, self._is_square = is_positive_definite, is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    name = property(lambda self: self._name)
    is_non_singular = property(lambda self: self._is_non_singular)
    is_self_adjoint = property(lambda self: self._is_self_adjoint)
    is_positive_definite = property(lambda self: self._is_positive_definite)
    parameters = property(lambda self: dict(self._parameters))

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype if self._dtype is not None else self.to_dense().dtype

    def _to_dense(self) -> Tensor:
        raise NotImplementedError

    def to_dense(self, name: str = "to_dense") -> Tensor:
        with name_scope(self._name + "/" + name):
            return self._to_dense()

    @property
    def shape(self) -> TensorShape:
        return self.to_dense().shape

    batch_shape = property(lambda self: self.shape[:-2])
    domain_dimension = property(lambda self: self.shape[-1])
    range_dimension = property(lambda self: self.shape[-2])
    tensor_rank = property(lambda self: self.shape.ndims)

    @property
    def is_square(self) -> bool | None:
        if self._is_square is not None:
            return self._is_square
        m, n = self.shape.as_list()[-2:]
        return None if m is None or n is None else m == n

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        return array_ops.shape(self.to_dense())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        return self.shape_tensor()[:-2]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        return self.shape_tensor()[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        return self.shape_tensor()[-2]

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul") -> Any:
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        return math_ops.matmul(self.to_dense(), convert_to_tensor(x, dtype=self.dtype), adjoint_a=adjoint,
                               adjoint_b=adjoint_arg)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        return array_ops.squeeze(self.matmul(array_ops.expand_dims(convert_to_tensor(x, dtype=self.dtype), -1),
                                             adjoint=adjoint), [-1])

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve") -> Tensor:
        b = convert_to_tensor(rhs, dtype=self.dtype)
        return matrix_solve(self.to_dense(), _adjoint(b) if adjoint_arg else b, adjoint=adjoint)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        b = array_ops.expand_dims(convert_to_tensor(rhs, dtype=self.dtype), -1)
        return array_ops.squeeze(self.solve(b, adjoint=adjoint), [-1])

    def determinant(self, name: str = "det") -> Tensor:
        return matrix_determinant(self.to_dense())

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        return log_matrix_determinant(self.to_dense())[1]

    def diag_part(self, name: str = "diag_part") -> Tensor:
        return matrix_diag_part(self.to_dense())

    def trace(self, name: str = "trace") -> Tensor:
        return reduction_ops.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        return self.to_dense() + convert_to_tensor(x, dtype=self.dtype)

    def adjoint(self, name: str = "adjoint") -> "LinearOperator":
        return LinearOperatorAdjoint(self)

    H = property(adjoint)

    def inverse(self, name: str = "inverse") -> "LinearOperator":
        return LinearOperatorInversion(self)

    def cholesky(self, name: str = "cholesky") -> "LinearOperator":
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True)


class LinearOperatorFullMatrix(LinearOperator):
    """A dense matrix."""

    def __init__(self, matrix: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorFullMatrix") -> None:
        self._matrix = convert_to_tensor(matrix, name="matrix")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name, {"matrix": matrix})

    def _to_dense(self) -> Tensor:
        return array_ops.identity(self._matrix)


class LinearOperatorDiag(LinearOperator):
    """diag(d)."""

    def __init__(self, diag: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool = True, name: str = "LinearOperatorDiag"):
        self._diag = convert_to_tensor(diag, name="diag")
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    diag = property(lambda self: self._diag)

    def _to_dense(self) -> Tensor:
        return matrix_diag(self._diag)


class LinearOperatorIdentity(LinearOperator):
    """The identity of size num_rows (batched by batch_shape)."""

    def __init__(self, num_rows: int, batch_shape: Sequence[int] | None = None, dtype: Any = None,
                 is_non_singular: bool = True, is_self_adjoint: bool = True, is_positive_definite: bool = True,
                 is_square: bool = True, assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        self._num_rows, self._batch = int(num_rows), list(batch_shape) if batch_shape is not None else None
        super().__init__(dtype or dtypes.float32, None, True, True, True, True, name)

    def _to_dense(self) -> Tensor:
        return eye(self._num_rows, batch_shape=self._batch, dtype=self._dtype)


class LinearOperatorScaledIdentity(LinearOperator):
    """multiplier * I (multiplier batched)."""

    def __init__(self, num_rows: int, multiplier: Any, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None, is_square: bool = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorScaledIdentity"):
        self._num_rows = int(num_rows)
        self._multiplier = convert_to_tensor(multiplier, name="multiplier")
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name)

    multiplier = property(lambda self: self._multiplier)

    def _to_dense(self) -> Tensor:
        return eye(self._num_rows, dtype=self._dtype) * self._multiplier[..., None, None]


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of `tril` (the rest ignored)."""

    def __init__(self, tril: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorLowerTriangular"):
        self._tril = convert_to_tensor(tril, name="tril")
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    def _to_dense(self) -> Tensor:
        return matrix_band_part(self._tril, -1, 0)


class LinearOperatorZeros(LinearOperator):
    """The zero matrix [num_rows, num_columns] (batched by batch_shape)."""

    def __init__(self, num_rows: int, num_columns: int | None = None, batch_shape: Sequence[int] | None = None,
                 dtype: Any = None, is_non_singular: bool = False, is_self_adjoint: bool = True,
                 is_positive_definite: bool = False, is_square: bool = True, assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorZeros"):
        self._rows = int(num_rows)
        self._cols = self._rows if num_columns is None else int(num_columns)
        self._batch = list(batch_shape or [])
        if is_square and self._rows != self._cols:
            raise ValueError(f"LinearOperatorZeros initialized as is_square=True, but got num_rows({self._rows}) "
                             f"!= num_columns({self._cols})")
        super().__init__(dtype or dtypes.float32, None, False, True, False, self._rows == self._cols, name)

    def _to_dense(self) -> Tensor:
        return array_ops.zeros(self._batch + [self._rows, self._cols], self._dtype)


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P[i, perm[i]] = 1 (rows of the identity in the order perm)."""

    def __init__(self, perm: Any, dtype: Any = dtypes.float32, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None, is_square: bool = True,
                 name: str = "LinearOperatorPermutation"):
        self._perm = convert_to_tensor(perm, name="perm")
        super().__init__(dtype, None, True, is_self_adjoint, is_positive_definite, True, name)

    def _to_dense(self) -> Tensor:
        n = self._perm.shape.as_list()[-1]
        return one_hot(self._perm, n, dtype=self._dtype)


class LinearOperatorHouseholder(LinearOperator):
    """The reflection I - 2 v v^H / (v^H v) through the hyperplane orthogonal to reflection_axis v."""

    def __init__(self, reflection_axis: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorHouseholder"):
        self._v = convert_to_tensor(reflection_axis, name="reflection_axis")
        super().__init__(self._v.dtype, None, True, True, is_positive_definite, True, name)

    def _to_dense(self) -> Tensor:
        v = self._v
        n = v.shape.as_list()[-1]
        outer = v[..., :, None] * v[..., None, :]
        return eye(n, dtype=v.dtype) - 2.0 * outer / reduction_ops.reduce_sum(v * v, axis=-1)[..., None, None]


class LinearOperatorToeplitz(LinearOperator):
    """T[i, j] = col[i - j] below the diagonal and row[j - i] above (col[0] on it)."""

    def __init__(self, col: Any, row: Any, is_non_singular: bool | None = None, is_self_adjoint: bool | None = None,
                 is_positive_definite: bool | None = None, is_square: bool | None = None,
                 name: str = "LinearOperatorToeplitz"):
        self._col = convert_to_tensor(col, name="col")
        self._row = convert_to_tensor(row, dtype=self._col.dtype, name="row")
        super().__init__(self._col.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    def _to_dense(self) -> Tensor:
        n = self._col.shape.as_list()[-1]
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        lower = convert_to_tensor(one_hot_table(np.where(i >= j, i - j, 0), n, i >= j), dtype=self._col.dtype)
        upper = convert_to_tensor(one_hot_table(np.where(i < j, j - i, 0), n, i < j), dtype=self._col.dtype)
        return einsum("...k,ijk->...ij", self._col, lower) + einsum("...k,ijk->...ij", self._row, upper)


def one_hot_table(index: np.ndarray, n: int, mask: np.ndarray) -> np.ndarray:
    """[n, n, n] selector: table[i, j, index[i, j]] = 1 where mask."""
    table = np.zeros(index.shape + (n,))
    i, j = np.nonzero(mask)
    table[i, j, index[i, j]] = 1.0
    return table


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal matrix given as 'compact' [..., 3, N], 'sequence' or 'matrix' diagonals."""

    def __init__(self, diagonals: Any, diagonals_format: str = "compact", is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorTridiag"):
        self._dense = _dense_tridiagonal(diagonals, diagonals_format)
        super().__init__(self._dense.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    def _to_dense(self) -> Tensor:
        return array_ops.identity(self._dense)


class LinearOperatorLowRankUpdate(LinearOperator):
    """base + U diag(diag_update) V^H (V = U when not given; diag_update = 1 when not given)."""

    def __init__(self, base_operator: LinearOperator, u: Any, diag_update: Any = None, v: Any = None,
                 is_diag_update_positive: bool | None = None, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorLowRankUpdate"):
        self._base, self._u = base_operator, convert_to_tensor(u, name="u")
        self._v = self._u if v is None else convert_to_tensor(v, dtype=self._u.dtype, name="v")
        self._d = None if diag_update is None else convert_to_tensor(diag_update, dtype=self._u.dtype)
        super().__init__(self._u.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name)

    def _to_dense(self) -> Tensor:
        u = self._u if self._d is None else self._u * self._d[..., None, :]
        return self._base.to_dense() + math_ops.matmul(u, self._v, adjoint_b=True)


class LinearOperatorComposition(LinearOperator):
    """operators[0] @ operators[1] @ ..."""

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        if not operators:
            raise ValueError("Expected a non-empty list of operators.")
        self._operators = list(operators)
        super().__init__(None, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name or "_o_".join(op.name for op in self._operators))

    operators = property(lambda self: list(self._operators))

    def _to_dense(self) -> Tensor:
        out = self._operators[0].to_dense()
        for op in self._operators[1:]:
            out = math_ops.matmul(out, op.to_dense())
        return out


class LinearOperatorAdjoint(LinearOperator):
    """The conjugate transpose of an operator."""

    def __init__(self, operator: LinearOperator, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        self._operator = operator
        super().__init__(None, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name or operator.name + "_adjoint")

    operator = property(lambda self: self._operator)

    def _to_dense(self) -> Tensor:
        return _adjoint(self._operator.to_dense())


class LinearOperatorInversion(LinearOperator):
    """The inverse of a non-singular square operator."""

    def __init__(self, operator: LinearOperator, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        if operator.is_non_singular is False:
            raise ValueError("operator and its inverse are always non-singular; is_non_singular=False was given")
        self._operator = operator
        super().__init__(None, None, True, is_self_adjoint, is_positive_definite, True,
                         name or operator.name + "_inv")

    operator = property(lambda self: self._operator)

    def _to_dense(self) -> Tensor:
        return matrix_inverse(self._operator.to_dense())


def _kron(a: Tensor, b: Tensor) -> Tensor:
    m, n = a.shape.as_list()[-2:]
    p, q = b.shape.as_list()[-2:]
    product = einsum("...ij,...kl->...ikjl", a, b)
    batch = array_ops.shape(product)[:-4]
    out = array_ops.reshape(product, array_ops.concat([batch, [m * p, n * q]], 0))
    out.set_shape(product.shape[:-4].concatenate([m * p, n * q]))
    return out


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product operators[0] (x) operators[1] (x) ..."""

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str | None = None):
        self._operators = list(operators)
        super().__init__(None, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square,
                         name or "_x_".join(op.name for op in self._operators))

    operators = property(lambda self: list(self._operators))

    def _to_dense(self) -> Tensor:
        out = self._operators[0].to_dense()
        for op in self._operators[1:]:
            out = _kron(out, op.to_dense())
        return out


def _block_rows(blocks: Sequence[Sequence[Tensor]], widths: list[int]) -> Tensor:
    """Rows of blocks placed left-aligned, zero-padded on the right to sum(widths) columns."""
    total = sum(widths)
    rows = []
    for row in blocks:
        dense = array_ops.concat(list(row), -1) if len(row) > 1 else row[0]
        used = sum(widths[:len(row)])
        rank = dense.shape.ndims
        rows.append(pad(dense, [[0, 0]] * (rank - 1) + [[0, total - used]]) if used < total else dense)
    return array_ops.concat(rows, -2)


class LinearOperatorBlockDiag(LinearOperator):
    """Square operators on the diagonal of a block matrix."""

    def __init__(self, operators: Sequence[LinearOperator], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str | None = None):
        self._operators = list(operators)
        super().__init__(None, None, is_non_singular, is_self_adjoint, is_positive_definite, True,
                         name or "_ds_".join(op.name for op in self._operators))

    operators = property(lambda self: list(self._operators))

    def _to_dense(self) -> Tensor:
        widths = [op.shape.as_list()[-1] for op in self._operators]
        rows = []
        for k, op in enumerate(self._operators):
            dense = op.to_dense()
            left = sum(widths[:k])
            rows.append(pad(dense, [[0, 0]] * (dense.shape.ndims - 1) + [[left, sum(widths) - left - widths[k]]]))
        return array_ops.concat(rows, -2)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular matrix: operators[i] lists the blocks of row i (i + 1 of them)."""

    def __init__(self, operators: Sequence[Sequence[LinearOperator]], is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool | None = None, name: str = "LinearOperatorBlockLowerTriangular"):
        self._operators = [list(row) for row in operators]
        for i, row in enumerate(self._operators):
            if len(row) != i + 1:
                raise ValueError(f"Argument `operators[{i}]` must contain `{i + 1}` blocks. Found: {len(row)}")
        super().__init__(None, None, is_non_singular, is_self_adjoint, is_positive_definite, True, name)

    operators = property(lambda self: [list(row) for row in self._operators])

    def _to_dense(self) -> Tensor:
        widths = [row[-1].shape.as_list()[-1] for row in self._operators]
        return _block_rows([[op.to_dense() for op in row] for row in self._operators], widths)
