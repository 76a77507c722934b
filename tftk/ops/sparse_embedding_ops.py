"""tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse: combined embeddings of sparse ids.

Each row of a 2-D SparseTensor of ids becomes one embedding: the (weighted) rows of the params
combined by "sum", "mean" (divided by the sum of the weights) or "sqrtn" (divided by the square
root of the sum of the squared weights), built from unique + embedding_lookup + segment sums as
TF1 builds them, so gradients reach the params as IndexedSlices. The safe variant is what
feature columns use: ids of any rank >= 2 (the last dimension is combined), negative ids and
(for mean/sqrtn) non-positive weights dropped, and empty rows giving zeros.
"""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.embedding_ops import embedding_lookup
from tftk.ops.gather_ops import where
from tftk.ops.safe_math_ops import divide_no_nan
from tftk.ops.segment_ops import segment_sum, sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum
from tftk.ops.sequence_ops import unique
from tftk.ops.sparse_math_ops import sparse_fill_empty_rows, sparse_reshape, sparse_retain

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_COMBINERS = ("sum", "mean", "sqrtn")


def _params_list(params: Any) -> list:
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _check_combiner(combiner: str) -> None:
    if combiner not in _COMBINERS:
        raise ValueError(f'combiner must be one of "mean", "sqrtn" or "sum", got {combiner!r}')


def embedding_lookup_sparse(params: Any, sp_ids: SparseTensor, sp_weights: SparseTensor | None,
                            partition_strategy: str = "mod", name: str | None = None, combiner: str | None = None,
                            max_norm: float | None = None) -> Tensor:
    """One combined embedding per row of the 2-D `sp_ids` (rows up to its last non-empty row).

    Args:
      params: the embedding table (or a list of partitions), shape [vocabulary, ...].
      sp_ids: int SparseTensor [batch, n] of ids; rows must be sorted.
      sp_weights: float SparseTensor with the same indices, or None for weight 1 everywhere.
      combiner: "sum", "mean" (the default) or "sqrtn".
    """
    combiner = "mean" if combiner is None else combiner
    _check_combiner(combiner)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"embedding_lookup_sparse: sp_ids must be a SparseTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"embedding_lookup_sparse: sp_weights must be a SparseTensor or None, "
                        f"got {type(sp_weights).__name__}")
    parts = _params_list(params)
    with name_scope(name, "embedding_lookup_sparse", parts + [sp_ids.values]):
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        if sp_weights is None:
            ids, idx = unique(sp_ids.values)
            embeddings = embedding_lookup(parts if len(parts) > 1 else parts[0], ids,
                                          partition_strategy=partition_strategy, max_norm=max_norm)
            reduce = {"sum": sparse_segment_sum, "mean": sparse_segment_mean, "sqrtn": sparse_segment_sqrt_n}[combiner]
            return reduce(embeddings, idx, segment_ids)
        # one row per id occurrence (TF looks up the unique ids and gathers; the values are the same)
        embeddings = embedding_lookup(parts if len(parts) > 1 else parts[0], sp_ids.values,
                                      partition_strategy=partition_strategy, max_norm=max_norm)
        weights = math_ops.cast(sp_weights.values, embeddings.dtype)
        rank = embeddings.shape.ndims
        column = array_ops.reshape(weights, [-1] + [1] * (rank - 1)) if rank is not None else \
            array_ops.reshape(weights, array_ops.concat(
                [array_ops.shape(weights), array_ops.ones([array_ops.rank(embeddings) - 1], dtypes.int32)], 0))
        total = segment_sum(embeddings * column, segment_ids)
        if combiner == "sum":
            return total
        # a row whose weights sum to 0 gives 0, not NaN (TF's div_no_nan)
        if combiner == "mean":
            return divide_no_nan(total, segment_sum(column, segment_ids))
        return divide_no_nan(total, math_ops.sqrt(segment_sum(math_ops.square(column), segment_ids)))


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: SparseTensor,
                                 sparse_weights: SparseTensor | None = None, combiner: str = "mean",
                                 default_id: int | None = None, name: str | None = None,
                                 partition_strategy: str = "div", max_norm: float | None = None) -> Tensor:
    """Combined embeddings of `sparse_ids` (rank >= 2; the last dimension is combined).

    Negative ids are dropped, and so are non-positive weights unless `combiner` is "sum"; a row left
    empty gives zeros (or the embedding of `default_id`). The result has shape
    sparse_ids.dense_shape[:-1] + embedding_weights.shape[1:].
    """
    _check_combiner(combiner)
    parts = _params_list(embedding_weights)
    if not parts or parts[0] is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if not isinstance(sparse_ids, SparseTensor):
        raise TypeError(f"safe_embedding_lookup_sparse: sparse_ids must be a SparseTensor, "
                        f"got {type(sparse_ids).__name__}")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    parts = [convert_to_tensor(p, dtype=dtype) for p in parts]
    inputs = parts + [sparse_ids.values] + ([sparse_weights.values] if sparse_weights is not None else [])
    with name_scope(name, "embedding_lookup", inputs):
        original_shape = sparse_ids.dense_shape
        lead = original_shape[:-1]
        ids = sparse_reshape(sparse_ids, array_ops.stack([reduction_ops.reduce_prod(lead), original_shape[-1]]))
        weights = None if sparse_weights is None else SparseTensor(ids.indices, sparse_weights.values, ids.dense_shape)
        valid = math_ops.greater_equal(ids.values, 0)
        ids, weights = sparse_retain(ids, valid), weights if weights is None else sparse_retain(weights, valid)
        if combiner != "sum" and weights is not None:
            positive = math_ops.greater(weights.values, 0)
            ids, weights = sparse_retain(ids, positive), sparse_retain(weights, positive)
        ids, is_row_empty = sparse_fill_empty_rows(ids, default_id or 0)
        if weights is not None:
            weights, _ = sparse_fill_empty_rows(weights, 1.0)
        result = embedding_lookup_sparse(parts, ids, weights, combiner=combiner,
                                         partition_strategy=partition_strategy, max_norm=max_norm)
        if default_id is None:  # a vector condition selects whole rows (TF1's Select)
            result = where(is_row_empty, array_ops.zeros_like(result), result)
        final = array_ops.reshape(result, array_ops.concat(
            [math_ops.cast(lead, dtypes.int32), array_ops.shape(result)[1:]], 0))
        lead_dims = sparse_ids.shape[:-1] if sparse_ids.shape.ndims is not None else TensorShape(None)
        final.set_shape(lead_dims.concatenate(result.shape[1:]))
        return final
