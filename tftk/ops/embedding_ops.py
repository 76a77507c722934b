"""tf.nn.embedding_lookup: rows of one params tensor or of a list of partitions, with a sparse gradient.

With several partitions, id `i` lives in partition `p` at row `r` by TF's strategies:
"mod": p = i % n, r = i // n (5 ids over 3 partitions -> [[0, 3], [1, 4], [2]]);
"div": contiguous blocks, the first (total % n) partitions one row longer ([[0, 1], [2, 3], [4]]).
The gradient for each partition is an IndexedSlices holding only the looked-up rows.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["embedding_lookup", "partition_assignments"]


def partition_assignments(ids: np.ndarray, sizes: Sequence[int], strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """(partition, row within it) of each flat id, for partitions of `sizes` rows (TF's rules)."""
    n = len(sizes)
    if n == 1:
        return np.zeros(ids.shape, dtype=np.int64), ids
    if strategy == "mod":
        return ids % n, ids // n
    total = int(sum(sizes))
    per, extras = total // n, total % n
    if per == 0:
        part = ids.copy()
    else:
        part = np.maximum(ids // (per + 1), (ids - extras) // per)
    first = part < extras
    row = np.where(first, ids % (per + 1), (ids - extras) % per if per else 0)
    return part, row


def _bind_lookup(op, ctx):
    strategy = op.get_attr("partition_strategy")

    def kernel(ids, *params):
        flat = ids.reshape(-1).astype(np.int64, copy=False)
        sizes = [p.shape[0] for p in params]
        total = sum(sizes)
        if flat.size and (flat.min() < 0 or flat.max() >= total):
            bad = int(flat[(flat < 0) | (flat >= total)][0])
            raise InvalidArgumentError(None, op, f"embedding_lookup: id {bad} is not in [0, {total})")
        row_shape = params[0].shape[1:]
        if len(params) == 1:
            return params[0].take(flat, axis=0).reshape(ids.shape + row_shape)
        part, row = partition_assignments(flat, sizes, strategy)
        out = np.empty((flat.size,) + row_shape, dtype=params[0].dtype)
        for p, values in enumerate(params):
            mask = part == p
            rows = row[mask]
            if rows.size and rows.max() >= values.shape[0]:
                raise InvalidArgumentError(None, op, f"embedding_lookup: partition {p} has {values.shape[0]} "
                                                     f"rows but id needs row {int(rows.max())} ({strategy})")
            out[mask] = values[rows]
        return out.reshape(ids.shape + row_shape)
    return kernel


def _bind_lookup_grad(op, ctx):
    strategy = op.get_attr("partition_strategy")

    def kernel(grad, ids, *params):
        flat = ids.reshape(-1).astype(np.int64, copy=False)
        rows = grad.reshape((flat.size,) + params[0].shape[1:])
        if len(params) == 1:
            return rows, flat
        part, row = partition_assignments(flat, [p.shape[0] for p in params], strategy)
        out = []
        for p in range(len(params)):
            mask = part == p
            out.extend((rows[mask], row[mask]))
        return tuple(out)
    return kernel


registry.register_op("EmbeddingLookup", _bind_lookup)
registry.register_op("EmbeddingLookupGrad", _bind_lookup_grad)
registry.not_differentiable("EmbeddingLookupGrad")


def _dense_shape(t: Tensor) -> Tensor:
    if t.shape.is_fully_defined():
        from tftk.ops.constant_op import constant
        return constant(np.asarray(t.shape.as_list(), dtype=np.int64))
    return array_ops.shape(t, out_type=dtypes.int64)


@registry.register_gradient("EmbeddingLookup")
def _lookup_grad(op, grad):
    ids, params = op.inputs[0], op.inputs[1:]
    specs = []
    for p in params:
        specs += [(grad.dtype, TensorShape([None]).concatenate(p.shape[1:])), (dtypes.int64, [None])]
    grad_op = make_multi_op("EmbeddingLookupGrad", [grad, ids, *params], specs, None, dict(op.attrs))
    outs = grad_op.outputs
    return [None] + [IndexedSlices(outs[2 * i], outs[2 * i + 1], _dense_shape(p)) for i, p in enumerate(params)]


def _clip_rows(x: Tensor, ids: Tensor, max_norm: float) -> Tensor:
    """Scale each looked-up embedding down to L2 norm max_norm (rows already shorter stay exact)."""
    rank = x.shape.ndims
    axes = list(range(ids.shape.ndims, rank))
    norm2 = reduction_ops.reduce_sum(math_ops.square(x), axes, keepdims=True)
    limit = float(max_norm)
    scale = math_ops.realdiv(limit, math_ops.sqrt(math_ops.maximum(norm2, limit * limit)))
    return math_ops.multiply(x, scale)


def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod", name: str | None = None,
                     validate_indices: bool = True, max_norm: float | None = None) -> Tensor:
    """Rows `ids` of `params` (a tensor/variable, or a list of partitions); shape ids.shape + params.shape[1:].

    Args:
      params: one tensor, or a list whose tensors share every dimension but the first.
      ids: int32/int64 tensor of ids into the (concatenated) params.
      partition_strategy: "mod" or "div" (only matters with more than one partition).
      max_norm: if set, each looked-up embedding with a larger L2 norm is scaled down to it.
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f'embedding_lookup: partition_strategy must be "mod" or "div", got {partition_strategy!r}')
    parts = list(params) if isinstance(params, (list, tuple)) else [params]
    if not parts:
        raise ValueError("embedding_lookup: params must not be empty")
    with name_scope(name, "embedding_lookup", parts + [ids]) as scope:
        tensors = [convert_to_tensor(p, name="params") for p in parts]
        tensors = [convert_to_tensor(t, dtype=tensors[0].dtype) for t in tensors]
        ids_t = convert_to_tensor(ids, name="ids")
        if not ids_t.dtype.is_integer:
            raise TypeError(f"embedding_lookup: ids must be int32 or int64, got {ids_t.dtype.name}")
        row = tensors[0].shape[1:] if tensors[0].shape.ndims else TensorShape(None)
        for t in tensors:
            if t.shape.ndims == 0:
                raise ValueError(f"embedding_lookup: params must be at least 1-D, got shape {t.shape}")
            if t.shape.ndims is not None and not t.shape[1:].is_compatible_with(row):
                raise ValueError(f"embedding_lookup: partitions must share every dimension but the first, "
                                 f"got shapes {[str(x.shape) for x in tensors]}")
        out_shape = ids_t.shape.concatenate(row)
        # named as the scope (`embedding_lookup`), as TF names the lookup's result
        out = make_op("EmbeddingLookup", [ids_t, *tensors], tensors[0].dtype, out_shape,
                      scope if max_norm is None else None, {"partition_strategy": partition_strategy})
        if max_norm is not None:
            out = _clip_rows(out, ids_t, max_norm)
        return out
