"""Ops on SparseTensors: from_dense, reorder, retain, add, concat, slice, split, fill_empty_rows, reshape,
transpose, expand_dims, eye, reset_shape, reduce_sum/max, sparse_dense_matmul, to_indicator.

Index bookkeeping (sorting, merging, selecting, reshaping coordinates) is done by small numpy
kernels with no gradient; values always move through gather_nd, concat, unsorted_segment_sum or
sparse_to_dense, so gradients with respect to a SparseTensor's values (and dense operands) come
from those ops' rules.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.gather_ops import gather, gather_nd, where
from tftk.ops.op_builder import make_multi_op
from tftk.ops.segment_ops import unsorted_segment_sum
from tftk.ops.sequence_ops import range as range_op
from tftk.ops.sparse_ops import sparse_to_dense

__all__ = ["from_dense", "sparse_reorder", "sparse_retain", "sparse_add", "sparse_concat", "sparse_slice",
           "sparse_split", "sparse_fill_empty_rows", "sparse_reshape", "sparse_transpose", "sparse_expand_dims",
           "sparse_eye", "sparse_reset_shape", "sparse_reduce_sum", "sparse_reduce_sum_sparse", "sparse_reduce_max",
           "sparse_tensor_dense_matmul", "sparse_to_indicator"]


def _sparse(sp: Any, what: str) -> SparseTensor:
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"{what}: expected a SparseTensor, got {type(sp).__name__}")
    return sp


def _take(values: Tensor, positions: Tensor) -> Tensor:
    """values[positions] with a dense gradient (TF's sparse ops give dense value gradients)."""
    return gather_nd(values, array_ops.expand_dims(positions, -1))


def _lexsort(indices: np.ndarray) -> np.ndarray:
    return np.lexsort(indices.T[::-1]) if indices.size else np.arange(indices.shape[0])


# ---- index kernels ---------------------------------------------------------------------------------

def _reorder_kernel(indices, shape):
    return _lexsort(indices).astype(np.int64)


def _union_kernel(indices, shape):
    """Sorted distinct rows of `indices` and, for every input row, the position of its row among them."""
    if not indices.size:
        return indices.reshape(0, shape.size), np.zeros(0, np.int32)
    unique, inverse = np.unique(indices, axis=0, return_inverse=True)
    return unique.astype(np.int64), inverse.reshape(-1).astype(np.int32)


def _slice_kernel(indices, shape, start, size):
    end = np.minimum(start + size, shape)
    keep = np.all((indices >= start) & (indices < end), axis=1)
    return np.flatnonzero(keep).astype(np.int64), np.maximum(end - start, 0).astype(np.int64)


def _empty_rows_kernel(indices, shape):
    rows = int(shape[0])
    present = np.zeros(rows, bool)
    present[indices[:, 0]] = True
    empty = np.flatnonzero(~present)
    filler = np.zeros((empty.size, shape.size), np.int64)
    filler[:, 0] = empty
    return filler, ~present


def _reshape_kernel(indices, shape, new_shape):
    new_shape = new_shape.astype(np.int64)
    total = int(np.prod(shape))
    unknown = np.flatnonzero(new_shape == -1)
    if unknown.size > 1:
        raise InvalidArgumentError(None, None, f"only one output dimension may be -1, got {new_shape.tolist()}")
    if unknown.size:
        known = int(np.prod(new_shape[new_shape != -1]))
        if known == 0 or total % known:
            raise InvalidArgumentError(None, None, f"cannot reshape a SparseTensor of {total} entries into "
                                                   f"{new_shape.tolist()}")
        new_shape = new_shape.copy()
        new_shape[unknown[0]] = total // known
    if int(np.prod(new_shape)) != total:
        raise InvalidArgumentError(None, None, f"cannot reshape a SparseTensor of shape {shape.tolist()} "
                                               f"({total} entries) into {new_shape.tolist()}")
    flat = np.ravel_multi_index(tuple(indices.T), tuple(shape)) if indices.size else np.zeros(0, np.int64)
    out = np.stack(np.unravel_index(flat, tuple(new_shape)), axis=1) if indices.size else \
        np.zeros((0, new_shape.size), np.int64)
    return out.astype(np.int64), new_shape


_KERNELS = {"SparseReorderPermutation": _reorder_kernel, "SparseIndexUnion": _union_kernel,
            "SparseSliceSelect": _slice_kernel, "SparseEmptyRows": _empty_rows_kernel,
            "SparseReshapeIndices": _reshape_kernel}
for _op_type, _kernel in _KERNELS.items():
    registry.register_op(_op_type, lambda op, ctx, k=_kernel: k)
registry.not_differentiable(*_KERNELS)


def _index_op(op_type: str, inputs: list[Tensor], specs: list[tuple], name: str | None = None) -> list[Tensor]:
    return list(make_multi_op(op_type, inputs, specs, name).outputs)


def _rank(sp: SparseTensor) -> int | None:
    return sp.indices.shape.as_list()[1] if sp.indices.shape.ndims == 2 else None


# ---- construction and ordering ------------------------------------------------------------------------

def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The SparseTensor of the non-zero entries of a dense tensor."""
    with name_scope(name, "dense_to_sparse", [tensor]):
        t = convert_to_tensor(tensor)
        zero = np.zeros((), t.dtype.as_numpy_dtype) if t.dtype is not dtypes.string else b""
        indices = where(math_ops.not_equal(t, zero))
        return SparseTensor(indices, gather_nd(t, indices), array_ops.shape(t, out_type=dtypes.int64))


def sparse_reorder(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """The same SparseTensor with its entries in lexicographic (row-major) order."""
    sp = _sparse(sp_input, "sparse_reorder")
    with name_scope(name, "SparseReorder", [sp.indices, sp.values]):
        perm = _index_op("SparseReorderPermutation", [sp.indices, sp.dense_shape], [(dtypes.int64, [None])])[0]
        return SparseTensor(gather(sp.indices, perm), _take(sp.values, perm), sp.dense_shape)


def sparse_retain(sp_input: SparseTensor, to_retain: Any) -> SparseTensor:
    """The entries of `sp_input` where the boolean vector `to_retain` is true."""
    sp = _sparse(sp_input, "sparse_retain")
    keep = convert_to_tensor(to_retain)
    if keep.dtype is not dtypes.bool:
        raise TypeError(f"sparse_retain: to_retain must be bool, got {keep.dtype.name}")
    with name_scope(None, "SparseRetain", [sp.indices, keep]):
        positions = array_ops.reshape(where(keep), [-1])
        return SparseTensor(gather(sp.indices, positions), _take(sp.values, positions), sp.dense_shape)


def sparse_reset_shape(sp_input: SparseTensor, new_shape: Any = None) -> SparseTensor:
    """`sp_input` with dense_shape `new_shape`, or the tightest shape holding its indices."""
    sp = _sparse(sp_input, "sparse_reset_shape")
    with name_scope(None, "SparseResetShape", [sp.indices]):
        if new_shape is None:
            shape = math_ops.add(reduction_ops.reduce_max(sp.indices, axis=0), 1)
        else:
            shape = convert_to_tensor(new_shape, dtype=dtypes.int64)
        return SparseTensor(sp.indices, sp.values, shape)


# ---- arithmetic ----------------------------------------------------------------------------------------

def sparse_add(a: Any, b: Any, thresh: Any = 0, threshold: Any = None) -> Any:
    """a + b: SparseTensor + SparseTensor (entries merged; merged sums with |sum| < thresh dropped), or
    SparseTensor + dense -> dense."""
    thresh = threshold if threshold is not None else thresh
    if not isinstance(a, SparseTensor):
        a, b = b, a
    a = _sparse(a, "sparse_add")
    if not isinstance(b, SparseTensor):
        with name_scope(None, "SparseTensorDenseAdd", [a.values, b]):
            dense = convert_to_tensor(b, dtype=a.dtype)
            return math_ops.add(sparse_to_dense(a.indices, a.dense_shape, a.values, validate_indices=False), dense)
    with name_scope(None, "SparseAdd", [a.values, b.values]):
        indices = array_ops.concat([a.indices, b.indices], 0)
        values = array_ops.concat([a.values, b.values], 0)
        merged, segments = _index_op("SparseIndexUnion", [indices, a.dense_shape],
                                     [(dtypes.int64, [None, _rank(a)]), (dtypes.int32, [None])])
        sums = unsorted_segment_sum(values, segments, array_ops.shape(merged)[0])
        result = SparseTensor(merged, sums, a.dense_shape)
        if constant_value(thresh) is not None and float(constant_value(thresh)) == 0:
            return result
        # As TF's kernel: only entries present in both inputs are dropped when |a + b| < thresh.
        counts = unsorted_segment_sum(array_ops.ones_like(segments), segments, array_ops.shape(merged)[0])
        large = math_ops.greater_equal(math_ops.abs(sums), math_ops.cast(thresh, sums.dtype))
        return sparse_retain(result, math_ops.logical_or(large, math_ops.equal(counts, 1)))


def sparse_tensor_dense_matmul(sp_a: SparseTensor, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                               name: str | None = None) -> Tensor:
    """SparseTensor (rank 2) @ dense matrix, optionally with either side (conjugate-)transposed."""
    sp = _sparse(sp_a, "sparse_tensor_dense_matmul")
    with name_scope(name, "SparseTensorDenseMatMul", [sp.values, b]):
        dense_a = sparse_to_dense(sp.indices, sp.dense_shape, sp.values, validate_indices=False)
        return math_ops.matmul(dense_a, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


def sparse_reduce_sum(sp_input: SparseTensor, axis: Any = None, keepdims: bool | None = None,
                      reduction_axes: Any = None, keep_dims: bool | None = None) -> Tensor:
    """The dense sum of a SparseTensor's entries over `axis` (all when None)."""
    sp = _sparse(sp_input, "sparse_reduce_sum")
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, "SparseReduceSum", [sp.values]):
        dense = sparse_to_dense(sp.indices, sp.dense_shape, sp.values, validate_indices=False)
        return reduction_ops.reduce_sum(dense, axis=axis, keepdims=keep)


def sparse_reduce_sum_sparse(sp_input: SparseTensor, axis: Any = None, keepdims: bool | None = None,
                             reduction_axes: Any = None, keep_dims: bool | None = None) -> SparseTensor:
    """sparse_reduce_sum as a SparseTensor of the non-zero sums."""
    return from_dense(sparse_reduce_sum(sp_input, axis, keepdims, reduction_axes, keep_dims))


def sparse_reduce_max(sp_input: SparseTensor, axis: Any = None, keepdims: bool | None = None,
                      reduction_axes: Any = None, keep_dims: bool | None = None) -> Tensor:
    """The dense max over `axis` of the entries present (implicit zeros do not count; an empty group gives 0)."""
    sp = _sparse(sp_input, "sparse_reduce_max")
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    npd = sp.dtype.as_numpy_dtype
    lowest = npd(-np.inf) if sp.dtype.is_floating else np.iinfo(npd).min
    with name_scope(None, "SparseReduceMax", [sp.values]):
        dense = sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value=lowest, validate_indices=False)
        result = reduction_ops.reduce_max(dense, axis=axis, keepdims=keep)
        return where(math_ops.equal(result, lowest), array_ops.zeros_like(result), result)


def sparse_reduce_max_sparse(sp_input: SparseTensor, axis: Any = None, keepdims: bool | None = None,
                             reduction_axes: Any = None, keep_dims: bool | None = None) -> SparseTensor:
    """sparse_reduce_max as a SparseTensor with one entry per group that has entries (a max of 0 stays)."""
    sp = _sparse(sp_input, "sparse_reduce_max_sparse")
    axis = reduction_axes if axis is None else axis
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, "SparseReduceMaxSparse", [sp.values]):
        maxima = sparse_reduce_max(sp, axis, keep)
        present = sparse_to_dense(sp.indices, sp.dense_shape, array_ops.ones_like(sp.values, dtype=dtypes.int32),
                                  default_value=0, validate_indices=False)
        occupied = math_ops.greater(reduction_ops.reduce_max(present, axis=axis, keepdims=keep), 0)
        indices = where(occupied)
        return SparseTensor(indices, gather_nd(maxima, indices), array_ops.shape(maxima, out_type=dtypes.int64))


# ---- shape manipulation -------------------------------------------------------------------------------

def sparse_concat(axis: int, sp_inputs: Sequence[SparseTensor], name: str | None = None,
                  expand_nonconcat_dim: bool = False, concat_dim: int | None = None) -> SparseTensor:
    """SparseTensors joined along `axis` (other dimensions equal, or their max with expand_nonconcat_dim)."""
    axis = concat_dim if concat_dim is not None else axis
    sps = [_sparse(sp, "sparse_concat") for sp in sp_inputs]
    if not sps:
        raise ValueError("sparse_concat: needs at least one SparseTensor")
    rank = _rank(sps[0])
    if rank is None:
        raise ValueError("sparse_concat needs SparseTensors of known rank")
    axis = int(axis) % rank
    with name_scope(name, "SparseConcat", [sp.values for sp in sps]):
        column = np.eye(rank, dtype=np.int64)[axis]
        offset = convert_to_tensor(np.int64(0))
        indices, shapes = [], []
        for sp in sps:
            indices.append(math_ops.add(sp.indices, math_ops.multiply(offset, column)))
            offset = math_ops.add(offset, sp.dense_shape[axis])
            shapes.append(sp.dense_shape)
        stacked = array_ops.stack(shapes)
        if expand_nonconcat_dim:
            shape = math_ops.add(math_ops.multiply(reduction_ops.reduce_max(stacked, axis=0), 1 - column),
                                 math_ops.multiply(offset, column))
        else:
            shape = math_ops.add(math_ops.multiply(shapes[0], 1 - column), math_ops.multiply(offset, column))
        joined = SparseTensor(array_ops.concat(indices, 0), array_ops.concat([sp.values for sp in sps], 0), shape)
        return sparse_reorder(joined)


def sparse_slice(sp_input: SparseTensor, start: Any, size: Any, name: str | None = None) -> SparseTensor:
    """The entries inside [start, start + size) (clipped to the dense shape), re-based at start."""
    sp = _sparse(sp_input, "sparse_slice")
    with name_scope(name, "SparseSlice", [sp.indices, sp.values]):
        st = convert_to_tensor(start, dtype=dtypes.int64)
        sz = convert_to_tensor(size, dtype=dtypes.int64)
        positions, shape = _index_op("SparseSliceSelect", [sp.indices, sp.dense_shape, st, sz],
                                     [(dtypes.int64, [None]), (dtypes.int64, [_rank(sp)])])
        return SparseTensor(math_ops.subtract(gather(sp.indices, positions), st), _take(sp.values, positions), shape)


def sparse_split(keyword_required: Any = None, sp_input: SparseTensor | None = None, num_split: int | None = None,
                 axis: int | None = None, name: str | None = None, split_dim: int | None = None) -> list[SparseTensor]:
    """`num_split` slices along `axis` (the first ones one longer when the size does not divide)."""
    sp = _sparse(sp_input, "sparse_split")
    axis = split_dim if axis is None else axis
    if num_split is None or axis is None:
        raise ValueError("sparse_split: sp_input, num_split and axis are required keyword arguments")
    shape = constant_value(sp.dense_shape)
    if shape is None:
        raise ValueError("sparse_split needs the dense shape known when the graph is built")
    rank = len(shape)
    axis = int(axis) % rank
    size = int(shape[axis])
    base, extra = divmod(size, int(num_split))
    with name_scope(name, "SparseSplit", [sp.values]):
        out, begin = [], 0
        for i in range(int(num_split)):
            length = base + (1 if i < extra else 0)
            start = [0] * rank
            start[axis] = begin
            sizes = [int(d) for d in shape]
            sizes[axis] = length
            out.append(sparse_slice(sp, start, sizes))
            begin += length
        return out


def sparse_fill_empty_rows(sp_input: SparseTensor, default_value: Any,
                           name: str | None = None) -> tuple[SparseTensor, Tensor]:
    """(sp with [row, 0, ...] = default_value added for every empty row, empty-row indicator)."""
    sp = _sparse(sp_input, "sparse_fill_empty_rows")
    with name_scope(name, "SparseFillEmptyRows", [sp.indices, sp.values]):
        filler, empty = _index_op("SparseEmptyRows", [sp.indices, sp.dense_shape],
                                  [(dtypes.int64, [None, _rank(sp)]), (dtypes.bool, [None])])
        default = convert_to_tensor(default_value, dtype=sp.dtype)
        fill_values = array_ops.fill(array_ops.shape(filler)[:1], default)
        joined = SparseTensor(array_ops.concat([sp.indices, filler], 0), array_ops.concat([sp.values, fill_values], 0),
                              sp.dense_shape)
        return sparse_reorder(joined), empty


def sparse_reshape(sp_input: SparseTensor, shape: Any, name: str | None = None) -> SparseTensor:
    """The same entries in a dense shape of as many elements (one dimension may be -1)."""
    sp = _sparse(sp_input, "sparse_reshape")
    with name_scope(name, "SparseReshape", [sp.indices]):
        new_shape = convert_to_tensor(shape, dtype=dtypes.int64)
        rank = new_shape.shape.as_list()[0] if new_shape.shape.ndims == 1 else None
        indices, out_shape = _index_op("SparseReshapeIndices", [sp.indices, sp.dense_shape, new_shape],
                                       [(dtypes.int64, [None, rank]), (dtypes.int64, [rank])])
        return SparseTensor(indices, sp.values, out_shape)


def sparse_transpose(sp_input: SparseTensor, perm: Any = None, name: str | None = None) -> SparseTensor:
    """Dimensions permuted by `perm` (reversed when None), entries re-sorted."""
    sp = _sparse(sp_input, "sparse_transpose")
    rank = _rank(sp)
    if perm is None:
        if rank is None:
            raise ValueError("sparse_transpose without perm needs a known rank")
        perm = list(range(rank))[::-1]
    with name_scope(name, "SparseTranspose", [sp.indices, sp.values]):
        p = convert_to_tensor(perm, dtype=dtypes.int32)
        moved = SparseTensor(gather(sp.indices, p, axis=1), sp.values, gather(sp.dense_shape, p))
        return sparse_reorder(moved)


def sparse_expand_dims(sp_input: SparseTensor, axis: int | None = None, name: str | None = None) -> SparseTensor:
    """A new dimension of size 1 inserted at `axis`."""
    sp = _sparse(sp_input, "sparse_expand_dims")
    rank = _rank(sp)
    if rank is None:
        raise ValueError("sparse_expand_dims needs a SparseTensor of known rank")
    axis = 0 if axis is None else int(axis)
    axis = axis + rank + 1 if axis < 0 else axis
    with name_scope(name, "ExpandDims", [sp.indices]):
        zeros = array_ops.zeros_like(sp.indices[:, :1])
        indices = array_ops.concat([sp.indices[:, :axis], zeros, sp.indices[:, axis:]], 1)
        shape = array_ops.concat([sp.dense_shape[:axis], np.array([1], np.int64), sp.dense_shape[axis:]], 0)
        return SparseTensor(indices, sp.values, shape)


def sparse_eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32,
               name: str | None = None) -> SparseTensor:
    """A SparseTensor identity matrix [num_rows, num_columns]."""
    with name_scope(name, "eye"):
        rows = convert_to_tensor(num_rows, dtype=dtypes.int64)
        cols = rows if num_columns is None else convert_to_tensor(num_columns, dtype=dtypes.int64)
        n = math_ops.minimum(rows, cols)
        diag = range_op(n, dtype=dtypes.int64)
        indices = array_ops.stack([diag, diag], axis=1)
        ones = array_ops.fill(array_ops.reshape(math_ops.cast(n, dtypes.int32), [1]),
                              np.ones((), dtypes.as_dtype(dtype).as_numpy_dtype))
        return SparseTensor(indices, ones, array_ops.stack([rows, cols]))


def sparse_to_indicator(sp_input: SparseTensor, vocab_size: Any, name: str | None = None) -> Tensor:
    """Dense bool [..., vocab_size]: true at [row..., id] for every id in the row's entries."""
    sp = _sparse(sp_input, "sparse_to_indicator")
    if not sp.dtype.is_integer:
        raise TypeError(f"sparse_to_indicator: ids must be integers, got {sp.dtype.name}")
    with name_scope(name, "SparseToIndicator", [sp.indices, sp.values]):
        ids = array_ops.expand_dims(math_ops.cast(sp.values, dtypes.int64), 1)
        indices = array_ops.concat([sp.indices[:, :-1], ids], 1)
        shape = array_ops.concat([sp.dense_shape[:-1], array_ops.reshape(
            convert_to_tensor(vocab_size, dtype=dtypes.int64), [1])], 0)
        return sparse_to_dense(indices, shape, True, default_value=False, validate_indices=False)
