"""Embedding columns: a categorical column's ids as combined rows of a learned table.

`embedding_column` owns its table, the variable `embedding_weights` in the scope its model opens
(`input_layer/<col>_embedding/embedding_weights`). `shared_embedding_columns` gives several
categorical columns (of one kind, with as many buckets) one table: the first of them to be built
creates it in its model's scope named after the shared collection
(`input_layer/<a>_<b>_shared_embedding/embedding_weights`) and puts it in a graph collection of that
name, where the others find it, as TF1 does.
"""

from __future__ import annotations

import collections
import math
from typing import Any, Callable, Sequence

from tftk.feature_column.base import CategoricalColumn, DenseColumn
from tftk.feature_column.categorical_columns import _WeightedCategoricalColumn
from tftk.framework import dtypes
from tftk.framework.ops import Tensor, add_to_collection, get_collection
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.init_ops import truncated_normal_initializer
from tftk.ops.sparse_embedding_ops import safe_embedding_lookup_sparse
from tftk.ops.variable_scope import get_variable

__all__ = ["embedding_column", "shared_embedding_columns"]

_FIELDS = ["categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from", "tensor_name_in_ckpt",
           "max_norm", "trainable"]


class _Embedding(DenseColumn):
    """What both embedding columns share: the spec, the shape and the lookup of a table."""

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs: Any) -> Any:
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    def _table_shape(self) -> tuple[int, int]:
        return self.categorical_column._num_buckets, self.dimension

    def _new_table(self, weight_collections: Any, trainable: Any) -> Any:
        return get_variable("embedding_weights", shape=self._table_shape(), dtype=dtypes.float32,
                            initializer=self.initializer,
                            trainable=self.trainable and (trainable is None or bool(trainable)),
                            collections=weight_collections)

    def _lookup(self, table: Any, inputs: Any, weight_collections: Any, trainable: Any) -> Tensor:
        pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections, trainable)
        if self.ckpt_to_load_from is not None:
            from tftk.train.checkpoint_utils import init_from_checkpoint
            init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: table})
        return safe_embedding_lookup_sparse(table, pair.id_tensor, sparse_weights=pair.weight_tensor,
                                            combiner=self.combiner, name=f"{self.name}_weights",
                                            max_norm=self.max_norm)


class _EmbeddingColumn(_Embedding, collections.namedtuple("_EmbeddingColumn", _FIELDS)):
    """A categorical column's ids as the combined rows of its own [num_buckets, dimension] table."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    def _get_dense_tensor(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> Tensor:
        return self._lookup(self._new_table(weight_collections, trainable), inputs, weight_collections, trainable)


class _SharedEmbeddingColumn(_Embedding, collections.namedtuple(
        "_SharedEmbeddingColumn", _FIELDS + ["shared_embedding_collection_name"])):
    """A categorical column's ids as the combined rows of a table shared with other columns."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self) -> str:
        return self.shared_embedding_collection_name

    def _get_dense_tensor(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> Tensor:
        shared = get_collection(self.shared_embedding_collection_name)
        if len(shared) > 1:
            raise ValueError(f"Collection {self.shared_embedding_collection_name} can only contain one variable: "
                             f"choose another shared_embedding_collection_name, or add no variable to it.")
        if shared:
            table = shared[0]
            if table.shape.as_list() != list(self._table_shape()):
                raise ValueError(f"Shared embedding collection {self.shared_embedding_collection_name} contains "
                                 f"variable {table.name} of shape {table.shape}; expected {self._table_shape()}.")
        else:
            table = self._new_table(weight_collections, trainable)
            add_to_collection(self.shared_embedding_collection_name, table)
        return self._lookup(table, inputs, weight_collections, trainable)


def _check_embedding_args(dimension: int, combiner: str, initializer: Any, ckpt_to_load_from: Any,
                          tensor_name_in_ckpt: Any, what: str) -> Callable:
    """Check the arguments both embedding kinds take; return the initializer (default truncated normal)."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f'combiner must be one of "mean", "sqrtn" or "sum", got {combiner!r}')
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: {what}")
    return initializer or truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))


def embedding_column(categorical_column: CategoricalColumn, dimension: int, combiner: str = "mean",
                     initializer: Callable | None = None, ckpt_to_load_from: str | None = None,
                     tensor_name_in_ckpt: str | None = None, max_norm: float | None = None,
                     trainable: bool = True) -> _EmbeddingColumn:
    """A categorical column's ids embedded in `dimension` floats, combined per example by `combiner`.

    Args:
      categorical_column: the ids to embed.
      dimension: the embedding's size.
      combiner: "mean", "sqrtn" or "sum" over an example's (weighted) ids.
      initializer: of the variable `embedding_weights`; default truncated normal, stddev 1/sqrt(dimension).
      ckpt_to_load_from, tensor_name_in_ckpt: initialise the table from this tensor of a checkpoint.
      max_norm: clip each looked-up embedding to this L2 norm.
    """
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"embedding_column needs a categorical column, got {categorical_column}")
    initializer = _check_embedding_args(dimension, combiner, initializer, ckpt_to_load_from, tensor_name_in_ckpt,
                                        categorical_column.name)
    return _EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, ckpt_to_load_from,
                            tensor_name_in_ckpt, max_norm, trainable)


def _base_column(column: CategoricalColumn) -> CategoricalColumn:
    """A weighted column's categorical column (its kind decides whether tables may be shared)."""
    while isinstance(column, _WeightedCategoricalColumn):
        column = column.categorical_column
    return column


def shared_embedding_columns(categorical_columns: Sequence[CategoricalColumn], dimension: int,
                             combiner: str = "mean", initializer: Callable | None = None,
                             shared_embedding_collection_name: str | None = None,
                             ckpt_to_load_from: str | None = None, tensor_name_in_ckpt: str | None = None,
                             max_norm: float | None = None, trainable: bool = True) -> list[_SharedEmbeddingColumn]:
    """Embedding columns, one per categorical column, all looking up one table.

    The columns must be of one kind (weighted ones count as their categorical column's kind) and
    have as many buckets. The table's scope and collection is `shared_embedding_collection_name`,
    by default the columns' sorted names joined by '_' plus '_shared_embedding'.
    """
    columns = list(categorical_columns)
    initializer = _check_embedding_args(dimension, combiner, initializer, ckpt_to_load_from, tensor_name_in_ckpt,
                                        ", ".join(getattr(c, "name", str(c)) for c in columns))
    ordered = sorted(columns, key=lambda c: c.name)
    if not ordered or not isinstance(ordered[0], CategoricalColumn):
        raise ValueError(f"All categorical_columns must be subclasses of _CategoricalColumn. Given: "
                         f"{ordered[0] if ordered else columns}")
    first = _base_column(ordered[0])
    for column in ordered[1:]:
        if not isinstance(_base_column(column), type(first)):
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same type, or be "
                             f"weighted_categorical_column of the same type. Given column: {first} of type: "
                             f"{type(first)} does not match given column: {column} of type: {type(column)}")
        if column._num_buckets != ordered[0]._num_buckets:
            raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same number of "
                             f"buckets. Given column: {ordered[0]} with buckets: {ordered[0]._num_buckets} does not "
                             f"match column: {column} with buckets: {column._num_buckets}")
    name = shared_embedding_collection_name or "_".join(c.name for c in ordered) + "_shared_embedding"
    return [_SharedEmbeddingColumn(c, int(dimension), combiner, initializer, ckpt_to_load_from, tensor_name_in_ckpt,
                                   max_norm, trainable, name) for c in columns]
