"""embedding_lookup_sparse: the embeddings of a SparseTensor of ids combined per row (sum, mean or
sqrtn, optionally weighted by a SparseTensor of weights), as TF builds it from segment ops."""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops import array_ops, math_ops
from tftk.ops.embedding_ops import embedding_lookup
from tftk.ops.safe_math_ops import divide_no_nan
from tftk.ops.segment_ops import segment_sum

__all__ = ["embedding_lookup_sparse"]


def embedding_lookup_sparse(params: Any, sp_ids: SparseTensor, sp_weights: SparseTensor | None,
                            partition_strategy: str = "mod", name: str | None = None, combiner: str | None = None,
                            max_norm: float | None = None) -> Tensor:
    """Row i of the result combines params[id] for the ids in row i of sp_ids (rows are the first index);
    rows past the last non-empty one are absent, as in TF."""
    combiner = combiner or "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    with name_scope(name, "embedding_lookup_sparse", [params, sp_ids.indices, sp_ids.values]):
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        rows = embedding_lookup(params, sp_ids.values, partition_strategy=partition_strategy, max_norm=max_norm)
        weights = array_ops.ones_like(rows[:, 0]) if sp_weights is None else \
            math_ops.cast(sp_weights.values, rows.dtype)
        extra = rows.shape.ndims - 1 if rows.shape.ndims is not None else 1
        column = lambda t: array_ops.reshape(t, [-1] + [1] * extra)  # noqa: E731
        total = segment_sum(rows * column(weights), segment_ids)
        if combiner == "sum":
            return total
        if combiner == "mean":  # empty rows (between non-empty ones) stay 0, as TF's div_no_nan leaves them
            return divide_no_nan(total, column(segment_sum(weights, segment_ids)))
        return divide_no_nan(total, column(math_ops.sqrt(segment_sum(weights * weights, segment_ids))))
