"""`Dataset.batch` and `Dataset.padded_batch`: stack consecutive elements along a new dimension."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from tftk.framework import dtypes, errors
from tftk.framework.ops import convert_to_tensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.data import structure as nest
from tftk.data.dataset_ops import Dataset, Element, Env, scalar_input, static_int
from tftk.data.transformations import MapDataset, _UnaryDataset

__all__ = ["BatchDataset", "PaddedBatchDataset"]


class BatchDataset(_UnaryDataset):
    def __init__(self, input_dataset: Dataset, batch_size: Any, drop_remainder: bool):
        self._batch_size = scalar_input(batch_size, dtypes.int64, "batch_size")
        self._drop = bool(drop_remainder)
        dim = static_int(self._batch_size) if self._drop else None
        specs: list = []
        for group, sparse in zip(nest.group_components(input_dataset._sparse, input_dataset._specs),
                                 input_dataset._sparse):
            if sparse:  # a batch of SparseTensors is one SparseTensor with a leading batch dimension
                dtype, shape = nest.leaf_type_and_shape(group, True)
                specs += nest.sparse_specs(dtype, TensorShape([dim]).concatenate(shape))
            else:
                specs.append((group[0], TensorShape([dim]).concatenate(group[1])))
        super().__init__(input_dataset, input_dataset._structure, specs, [self._batch_size])

    def _size(self, env: Env) -> int:
        size = int(env.value(self._batch_size))
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, f"Batch size must be greater than zero, got {size}")
        return size

    def _rows(self, env: Env) -> Iterator[list[Element]]:
        size = self._size(env)
        rows: list[Element] = []
        for element in self._input._elements(env):
            rows.append(element)
            if len(rows) == size:
                yield rows
                rows = []
        if rows and not self._drop:
            yield rows

    def _elements(self, env: Env) -> Iterator[Element]:
        if isinstance(self._input, MapDataset) and self._input.vectorized:
            yield from self._map_and_batch(env)
            return
        for rows in self._rows(env):
            yield self._stack_rows(rows)

    def _map_and_batch(self, env: Env) -> Iterator[Element]:
        """map followed by batch, fused: the vectorised function's results are the batches."""
        size = self._size(env)
        for chunk in self._input._mapped_chunks(env, size):
            if chunk.batch is not None:
                if len(chunk.batch[0]) == size or not self._drop:
                    yield chunk.batch
                continue
            if chunk.error is not None:  # the batch holding the failing element fails, as unfused
                raise chunk.error
            if len(chunk.rows) == size or not self._drop:
                yield self._stack_rows(chunk.rows)

    def _stack_rows(self, rows: list[Element]) -> Element:
        batch, k = [], 0
        for sparse in self._input._sparse:
            if sparse:
                batch += _batch_sparse([row[k:k + 3] for row in rows])
                k += 3
            else:
                batch.append(_stack([row[k] for row in rows], k))
                k += 1
        return batch


def _batch_sparse(parts: list) -> list[np.ndarray]:
    """indices/values/dense_shape of SparseTensors stacked along a new first dimension."""
    rank = len(np.asarray(parts[0][2]))
    indices = [np.concatenate([np.full((len(ix), 1), b, np.int64), np.reshape(ix, (len(ix), rank))], axis=1)
               for b, (ix, _, _) in enumerate(parts)]
    values = np.concatenate([np.asarray(v) for _, v, _ in parts])
    shape = np.max(np.stack([np.asarray(sh) for _, _, sh in parts]), axis=0)
    return [np.concatenate(indices).astype(np.int64), values,
            np.concatenate([[len(parts)], shape]).astype(np.int64)]


def _stack(parts: list, component: int) -> np.ndarray:
    first = np.shape(parts[0])
    for i, p in enumerate(parts[1:], start=1):
        if np.shape(p) != first:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch tensors with different shapes in component {component}. "
                f"First element had shape {list(first)} and element {i} had shape {list(np.shape(p))}.")
    return np.stack(parts)


class PaddedBatchDataset(BatchDataset):
    """Pad every component to `padded_shapes` (None/-1 dims: the longest in the batch) and stack."""

    def __init__(self, input_dataset: Dataset, batch_size: Any, padded_shapes: Any, padding_values: Any,
                 drop_remainder: bool):
        structure, specs = input_dataset._structure, input_dataset._specs
        if any(input_dataset._sparse):
            raise TypeError("Dataset.padded_batch() does not take SparseTensor components; use batch()")
        if padded_shapes is None:
            shapes = [TensorShape([None] * s.ndims) if s.ndims is not None else s for _, s in specs]
        else:
            shapes = [_padded_shape(p) for p in nest.flatten_up_to(structure, padded_shapes)]
        for (_, s), p in zip(specs, shapes):
            if s.ndims is not None and p.ndims is not None and s.ndims != p.ndims or p.ndims is None:
                raise ValueError(f"The padded shape {p} is not compatible with the component shape {s}")
            if not p.is_compatible_with(s) and not all(
                    a is None or b is None or a >= b for a, b in zip(p.as_list(), s.as_list())):
                raise ValueError(f"The padded shape {p} is not compatible with the component shape {s}")
        if padding_values is None:
            values = [np.array(b"" if dt is dtypes.string else 0, dtype=dt.as_numpy_dtype) for dt, _ in specs]
        else:
            values = [np.asarray(convert_to_tensor(v, dtype=dt).op.get_attr("value"))
                      for v, (dt, _) in zip(nest.flatten_up_to(structure, padding_values), specs)]
        self._padded = shapes
        self._padding = values
        super().__init__(input_dataset, batch_size, drop_remainder)
        self._specs = [(dt, TensorShape([d[0]]).concatenate(p))
                       for (dt, d), p in zip(self._specs, shapes)]

    def _elements(self, env: Env) -> Iterator[Element]:
        for rows in self._rows(env):
            yield [self._pad([np.asarray(row[k]) for row in rows], k) for k in range(len(self._specs))]

    def _pad(self, parts: list[np.ndarray], k: int) -> np.ndarray:
        wanted = self._padded[k].as_list()
        longest = [max(p.shape[d] for p in parts) for d in range(len(wanted))]
        target = [longest[d] if w is None else w for d, w in enumerate(wanted)]
        for d, (w, m) in enumerate(zip(wanted, longest)):
            if w is not None and m > w:
                raise errors.InvalidArgumentError(
                    None, None, f"Attempted to pad to a smaller size than the input element: component "
                    f"{k} has size {m} in dimension {d}, padded shape is {self._padded[k]}")
        out = np.full([len(parts)] + target, self._padding[k], dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            out[(i,) + tuple(slice(0, n) for n in p.shape)] = p
        return out


def _padded_shape(value: Any) -> TensorShape:
    if hasattr(value, "op"):  # a shape tensor: known only if constant
        from tftk.ops.constant_value import constant_value
        static = constant_value(value)
        if static is None:
            raise ValueError("padded_shapes must be known when the graph is built")
        value = static.tolist()
    dims = as_shape(value).as_list()
    return TensorShape([None if d is None or d < 0 else d for d in dims])
