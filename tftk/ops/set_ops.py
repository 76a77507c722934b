"""tf.sets: intersection, union, difference and size of the sets held in a tensor's last dimension.

A set is the distinct values of one row ``a[i, j, ..., :]``: of a dense tensor every entry, of a
SparseTensor the entries present. Results are SparseTensors whose last dimension lists each row's
result in ascending order (dense shape: the batch shape plus the largest result), as TF's
DenseToDenseSetOperation and its sparse variants give them. Not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.array_function import array_op, register_array_op

__all__ = ["set_size", "set_intersection", "set_union", "set_difference", "size", "intersection",
           "union", "difference"]

_SET_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
               dtypes.string)


def _rows(parts: list[np.ndarray], sparse: bool) -> tuple[tuple, dict]:
    """(batch shape, batch index -> set of values) of one dense or sparse operand."""
    if not sparse:
        (dense,) = parts
        if dense.ndim < 2:
            raise ValueError(f"a set operand must have rank >= 2, got shape {list(dense.shape)}")
        flat = dense.reshape(-1, dense.shape[-1])
        batch = dense.shape[:-1]
        return batch, {idx: set(flat[k].tolist()) for k, idx in enumerate(np.ndindex(*batch))}
    indices, values, shape = parts
    if len(shape) < 2:
        raise ValueError(f"a set operand must have rank >= 2, got dense shape {shape.tolist()}")
    rows: dict = {}
    for index, value in zip(indices.tolist(), values.tolist()):
        rows.setdefault(tuple(index[:-1]), set()).add(value)
    return tuple(shape[:-1].tolist()), rows


def _set_operation(*arrays: np.ndarray, operation: str, a_sparse: bool, b_sparse: bool):
    split = 3 if a_sparse else 1
    batch_a, rows_a = _rows(list(arrays[:split]), a_sparse)
    batch_b, rows_b = _rows(list(arrays[split:]), b_sparse)
    if batch_a != batch_b:
        raise ValueError(f"set operands must have the same batch shape, got {list(batch_a)} and {list(batch_b)}")
    combine = {"intersection": set.intersection, "union": set.union, "a-b": set.difference,
               "b-a": lambda a, b: b - a}[operation]
    indices, values, width = [], [], 0
    for idx in np.ndindex(*batch_a):
        result = sorted(combine(rows_a.get(idx, set()), rows_b.get(idx, set())))
        width = max(width, len(result))
        indices += [idx + (k,) for k in range(len(result))]
        values += result
    rank = len(batch_a) + 1
    return (np.array(indices, np.int64).reshape(-1, rank), np.array(values),
            np.array(batch_a + (width,), np.int64))


def _set_size(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> np.ndarray:
    batch, rows = _rows([indices, values, shape], True)
    sizes = np.zeros(batch, np.int32)
    for idx, row in rows.items():
        sizes[idx] = len(row)
    return sizes


register_array_op("SetOperation", _set_operation)
register_array_op("SetSize", _set_size)


def _operand(x: Any, what: str) -> tuple[list[Tensor], bool, int | None]:
    """(parts, is sparse, static rank) of a set operand."""
    if isinstance(x, SparseTensor):
        parts, rank = [x.indices, x.values, x.dense_shape], x.shape.ndims
    else:
        t = convert_to_tensor(x, name=what)
        parts, rank = [t], t.shape.ndims
    dtype = parts[1 if isinstance(x, SparseTensor) else 0].dtype
    if dtype not in _SET_DTYPES:
        raise TypeError(f"tf.sets: invalid dtype {dtype.name} for {what} (integers or strings)")
    if rank is not None and rank < 2:
        raise ValueError(f"tf.sets: {what} must have rank >= 2, got rank {rank}")
    return parts, isinstance(x, SparseTensor), rank


def _combine(a: Any, b: Any, operation: str, name: str | None, default: str) -> SparseTensor:
    if not isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        a, b = b, a  # TF computes dense-with-sparse as sparse-with-dense
        operation = {"a-b": "b-a", "b-a": "a-b"}.get(operation, operation)
    with name_scope(name, default, [a, b]):
        parts_a, sparse_a, rank = _operand(a, "a")
        parts_b, sparse_b, rank_b = _operand(b, "b")
        dtype_a = parts_a[1 if sparse_a else 0].dtype
        dtype_b = parts_b[1 if sparse_b else 0].dtype
        if dtype_a is not dtype_b:
            raise TypeError(f"tf.sets: a and b must have the same dtype, got {dtype_a.name} and {dtype_b.name}")
        rank = rank if rank is not None else rank_b
        indices, values, shape = array_op(
            "SetOperation", parts_a + parts_b,
            [(dtypes.int64, [None, rank]), (dtype_a, [None]), (dtypes.int64, [rank])],
            attrs={"operation": operation, "a_sparse": sparse_a, "b_sparse": sparse_b})
        return SparseTensor(indices, values, shape)


def set_size(a: SparseTensor, validate_indices: bool = True) -> Tensor:
    """The number of distinct values in each row of the SparseTensor `a` (int32, batch shape)."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    rank = a.shape.ndims
    with name_scope(None, "size", [a]):
        return array_op("SetSize", [a.indices, a.values, a.dense_shape],
                        [(dtypes.int32, TensorShape(None if rank is None else [None] * (rank - 1)))])


def set_intersection(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The values present in both a's and b's rows."""
    return _combine(a, b, "intersection", None, "intersection")


def set_union(a: Any, b: Any, validate_indices: bool = True) -> SparseTensor:
    """The values present in a's or b's rows."""
    return _combine(a, b, "union", None, "union")


def set_difference(a: Any, b: Any, aminusb: bool = True, validate_indices: bool = True) -> SparseTensor:
    """a's rows minus b's rows (or b minus a with ``aminusb=False``)."""
    return _combine(a, b, "a-b" if aminusb else "b-a", None, "difference")


size, intersection, union, difference = set_size, set_intersection, set_union, set_difference
