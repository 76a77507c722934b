"""Element-wise sparse ops: sparse_softmax (over each row's present entries), sparse_maximum /
sparse_minimum (on the union of two SparseTensors' entries, absent ones counting as 0) and
sparse_mask (IndexedSlices without the masked indices)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.gather_ops import gather
from tftk.ops.sort_ops import setdiff1d

__all__ = ["sparse_softmax", "sparse_maximum", "sparse_minimum", "sparse_mask"]


def _groups(indices: np.ndarray) -> np.ndarray:
    """Group number of each entry: entries sharing all but the last coordinate are one group."""
    if not len(indices):
        return np.zeros(0, np.int64)
    _, inverse = np.unique(indices[:, :-1], axis=0, return_inverse=True)
    return inverse.reshape(-1)


def _softmax(indices: np.ndarray, values: np.ndarray, shape: np.ndarray) -> np.ndarray:
    group = _groups(indices)
    peak = np.full(group.max(initial=-1) + 1, -np.inf)
    np.maximum.at(peak, group, values)
    e = np.exp(values - peak[group])
    total = np.zeros(peak.size)
    np.add.at(total, group, e)
    return e / total[group]


def _softmax_grad(indices: np.ndarray, y: np.ndarray, grad: np.ndarray) -> np.ndarray:
    group = _groups(indices)
    dot = np.zeros(group.max(initial=-1) + 1)
    np.add.at(dot, group, grad * y)
    return y * (grad - dot[group])


register_array_op("SparseSoftmax", _softmax, differentiable=True)
register_array_op("SparseSoftmaxGrad", _softmax_grad)


@registry.register_gradient("SparseSoftmax")
def _sparse_softmax_gradient(op, grad):
    y = op.outputs[0]
    return [None, array_op("SparseSoftmaxGrad", [op.inputs[0], y, grad], [(grad.dtype, grad.shape)]), None]


def sparse_softmax(sp_input: SparseTensor, name: str | None = None) -> SparseTensor:
    """Softmax over the last dimension of each row, counting only the entries present."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sp_input must be a SparseTensor, got {type(sp_input).__name__}")
    with name_scope(name, "SparseSoftmax", [sp_input.indices, sp_input.values]):
        values = array_op("SparseSoftmax", [sp_input.indices, sp_input.values, sp_input.dense_shape],
                          [(sp_input.values.dtype, sp_input.values.shape)])
        return SparseTensor(sp_input.indices, values, sp_input.dense_shape)


def _sparse_extremum(a_idx, a_val, a_shape, b_idx, b_val, b_shape, maximum: bool):
    if a_shape.tolist() != b_shape.tolist():
        raise ValueError(f"Operands' shapes do not match: got {a_shape.tolist()} and {b_shape.tolist()}")
    table: dict[tuple, list] = {}
    for index, value in zip(map(tuple, a_idx.tolist()), a_val.tolist()):
        table.setdefault(index, [0, 0])[0] = value
    for index, value in zip(map(tuple, b_idx.tolist()), b_val.tolist()):
        table.setdefault(index, [0, 0])[1] = value
    keys = sorted(table)
    pick = max if maximum else min
    return (np.array(keys, np.int64).reshape(-1, len(a_shape)), np.array([pick(*table[k]) for k in keys]))


register_array_op("SparseSparseExtremum", _sparse_extremum)


def _extremum(sp_a: SparseTensor, sp_b: SparseTensor, maximum: bool, name: str | None, default: str) -> SparseTensor:
    for sp in (sp_a, sp_b):
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"{default}: operands must be SparseTensors, got {type(sp).__name__}")
    if sp_a.dtype is not sp_b.dtype:
        raise TypeError(f"{default}: operands must have the same dtype, got {sp_a.dtype.name} and {sp_b.dtype.name}")
    with name_scope(name, default, [sp_a.indices, sp_b.indices]):
        indices, values = array_op("SparseSparseExtremum",
                                   [sp_a.indices, sp_a.values, sp_a.dense_shape, sp_b.indices, sp_b.values,
                                    sp_b.dense_shape],
                                   [(dtypes.int64, [None, sp_a.indices.shape.as_list()[1]
                                                    if sp_a.indices.shape.ndims == 2 else None]),
                                    (sp_a.dtype, [None])], attrs={"maximum": maximum})
        return SparseTensor(indices, values, sp_a.dense_shape)


def sparse_maximum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """The element-wise maximum over the union of both operands' entries (absent entries are 0)."""
    return _extremum(sp_a, sp_b, True, name, "SparseSparseMaximum")


def sparse_minimum(sp_a: SparseTensor, sp_b: SparseTensor, name: str | None = None) -> SparseTensor:
    """The element-wise minimum over the union of both operands' entries (absent entries are 0)."""
    return _extremum(sp_a, sp_b, False, name, "SparseSparseMinimum")


def sparse_mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """The slices of `a` whose indices are not in mask_indices."""
    with name_scope(name, "sparse_mask", [a, mask_indices]):
        indices = a.indices
        out_indices, positions = setdiff1d(indices, convert_to_tensor(mask_indices, dtype=indices.dtype))
        return IndexedSlices(gather(a.values, positions), out_indices, a.dense_shape)

