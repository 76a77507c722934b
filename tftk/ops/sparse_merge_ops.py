"""`tf.sparse.merge` (TF1's `tf.sparse_merge`): ids and weights SparseTensors into one
[batch..., vocab_size] SparseTensor whose last index is the id and whose value is the weight.

This is how TF1 feature code turned (id, weight) lists into a sparse row per example.
"""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops import array_ops, math_ops
from tftk.ops.slicing_ops import slice as slice_op
from tftk.ops.sparse_math_ops import sparse_reorder


def sparse_merge(sp_ids: SparseTensor | Sequence[SparseTensor], sp_values: SparseTensor,
                 vocab_size: Any, name: str | None = None, already_sorted: bool = False) -> SparseTensor:
    """Entries (index[:-1] of `sp_ids`, id) -> the matching `sp_values` value, shape [..., vocab_size].

    A list of ids tensors with a list of vocab sizes gives one trailing index per list entry.
    Set `already_sorted` when the ids are already in order within each row to skip the reorder.
    """
    if isinstance(sp_ids, SparseTensor):
        if isinstance(vocab_size, (list, tuple)):
            raise TypeError("sparse_merge: with a single sp_ids SparseTensor, vocab_size must be a scalar")
        sp_ids, vocab_size = [sp_ids], [vocab_size]
    sp_ids = list(sp_ids)
    if not isinstance(vocab_size, (list, tuple)) or len(vocab_size) != len(sp_ids):
        raise ValueError("sparse_merge: pass one vocab_size per sp_ids tensor")
    for sp in [*sp_ids, sp_values]:
        if not isinstance(sp, SparseTensor):
            raise TypeError(f"sparse_merge: expected SparseTensors for sp_ids and sp_values, got {type(sp).__name__}")
    with name_scope(name, "SparseMerge", [sp.values for sp in sp_ids] + [sp_values.values]):
        rank = array_ops.shape(sp_ids[0].indices)[1]
        outer = slice_op(sp_ids[0].indices, [0, 0], array_ops.stack([-1, rank - 1]))
        ids = [array_ops.reshape(_as_int64(sp.values), [-1, 1]) for sp in sp_ids]
        indices = array_ops.concat([outer] + ids, 1)
        sizes = array_ops.stack([_as_int64(convert_to_tensor(v)) for v in vocab_size])
        shape = array_ops.concat([slice_op(sp_ids[0].dense_shape, [0], array_ops.reshape(rank - 1, [1])),
                                  sizes], 0)
        merged = SparseTensor(indices, sp_values.values, shape)
        return merged if already_sorted else sparse_reorder(merged)


def _as_int64(t: Tensor) -> Tensor:
    return t if t.dtype is dtypes.int64 else math_ops.cast(t, dtypes.int64)
