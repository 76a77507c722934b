"""Dense feature columns: numeric, bucketized and indicator (multi-hot); embeddings are in embedding_columns.

Each column is an immutable namedtuple (hashable, so it can key `cols_to_vars`), as TF1's are,
with TF1's fields and constructor checks. `_get_dense_tensor` gives the float [batch, ...] tensor
that `input_layer` flattens and concatenates.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Sequence

import numpy as np

from tftk.feature_column.base import CategoricalColumn, DenseColumn, IdWeightPair, check_key
from tftk.framework import dtypes
from tftk.framework.ops import Tensor
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.categorical_ops import bucketize
from tftk.ops.parsing_ops import FixedLenFeature
from tftk.ops.scatter_ops import scatter_nd
from tftk.ops.sequence_ops import one_hot, range as range_op
from tftk.ops.sparse_math_ops import sparse_reorder, sparse_retain
from tftk.ops.sparse_ops import sparse_tensor_to_dense

__all__ = ["numeric_column", "bucketized_column", "indicator_column"]


# ---- numeric ---------------------------------------------------------------------------------------

def _check_shape(shape: Any, key: str) -> tuple:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for dimension in shape:
        if not isinstance(dimension, (int, np.integer)):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if dimension < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    return tuple(int(d) for d in shape)


def _check_default_value(shape: tuple, default_value: Any, dtype: dtypes.DType, key: str) -> Any:
    """The default as a nested tuple of `shape` (a scalar is repeated), or None."""
    if default_value is None:
        return None
    if isinstance(default_value, (int, float, np.number)) and not isinstance(default_value, bool):
        if isinstance(default_value, (float, np.floating)) and not dtype.is_floating:
            raise TypeError(f"default_value must be compatible with dtype. default_value: {default_value}, "
                            f"dtype: {dtype.name}, key: {key}")
        return _as_tuple(np.full(shape, default_value).tolist())
    if not isinstance(default_value, (list, tuple, np.ndarray)):
        raise TypeError(f"default_value must be compatible with dtype. default_value: {default_value}, "
                        f"dtype: {dtype.name}, key: {key}")
    array = np.asarray(default_value)
    if array.shape != shape:
        raise ValueError(f"The shape of default_value must be equal to given shape. default_value: "
                         f"{default_value}, shape: {shape}, key: {key}")
    if array.dtype.kind not in "iuf" or (array.dtype.kind == "f" and not dtype.is_floating):
        raise TypeError(f"default_value must be compatible with dtype. default_value: {default_value}, "
                        f"dtype: {dtype.name}, key: {key}")
    return _as_tuple(array.tolist())


def _as_tuple(value: Any) -> Any:
    return tuple(_as_tuple(v) for v in value) if isinstance(value, list) else value


class _NumericColumn(DenseColumn, collections.namedtuple(
        "_NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """A real-valued feature of a fixed shape per example."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_feature(self, inputs: Any) -> Tensor:
        feature = inputs.get(self.key)
        if isinstance(feature, SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. SparseTensor is not "
                             f"supported. key: {self.key}")
        if not (feature.dtype.is_integer or feature.dtype.is_floating or feature.dtype.is_bool):
            raise TypeError(f"numeric_column {self.key!r}: the feature is {feature.dtype.name}; a numeric "
                            f"column needs integer or float values (parse strings with tf.string_to_number)")
        if self.normalizer_fn is not None:
            feature = self.normalizer_fn(feature)
        return math_ops.cast(feature, dtypes.float32)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)

    def _get_dense_tensor(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> Tensor:
        return inputs.get(self)


def numeric_column(key: str, shape: Any = (1,), default_value: Any = None, dtype: Any = dtypes.float32,
                   normalizer_fn: Callable | None = None) -> _NumericColumn:
    """A column of real values: `shape` floats per example, `normalizer_fn` applied, cast to float32.

    Args:
      key: the feature's name in the features dict.
      shape: the shape of one example's value (an int or a tuple of ints).
      default_value: the value parse_example fills in for an example without the feature.
      dtype: the raw feature's type (integer or float).
      normalizer_fn: a function of the raw tensor (e.g. lambda x: (x - 3.0) / 4.2).
    """
    check_key(key)
    shape = _check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype.name}, key: {key}")
    default_value = _check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


# ---- bucketized -----------------------------------------------------------------------------------

class _BucketizedColumn(DenseColumn, CategoricalColumn, collections.namedtuple(
        "_BucketizedColumn", ["source_column", "boundaries"])):
    """A numeric column's values as bucket ids: one-hot when dense, sparse ids when categorical."""

    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def _parse_example_spec(self) -> dict:
        return self.source_column._parse_example_spec

    def _transform_feature(self, inputs: Any) -> Tensor:
        return bucketize(inputs.get(self.source_column), self.boundaries)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    def _get_dense_tensor(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> Tensor:
        return one_hot(inputs.get(self), depth=len(self.boundaries) + 1, on_value=1.0, off_value=0.0)

    @property
    def _num_buckets(self) -> int:
        return int(np.prod(self.source_column.shape)) * (len(self.boundaries) + 1)

    def _get_sparse_tensors(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> IdWeightPair:
        buckets = inputs.get(self)
        batch = array_ops.shape(buckets)[0]
        width = self.source_column.shape[0]
        positions = range_op(0, batch * width)
        rows, columns = positions // width, positions % width
        # the i-th value's buckets are offset by i * (len(boundaries) + 1): ids unique across positions
        ids = array_ops.reshape(buckets, [-1]) + (len(self.boundaries) + 1) * columns
        indices = math_ops.cast(array_ops.transpose(array_ops.stack([rows, columns])), dtypes.int64)
        shape = math_ops.cast(array_ops.stack([batch, width]), dtypes.int64)
        return IdWeightPair(SparseTensor(indices, math_ops.cast(ids, dtypes.int64), shape), None)


def bucketized_column(source_column: _NumericColumn, boundaries: Sequence[float]) -> _BucketizedColumn:
    """A numeric column's values split at sorted `boundaries`: len(boundaries) + 1 buckets per value.

    Bucket i holds boundaries[i-1] <= x < boundaries[i]; as a dense column it is one-hot, as a
    categorical column (in linear_model, crossed_column) it gives the bucket ids.
    """
    if not isinstance(source_column, _NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries or not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    if any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return _BucketizedColumn(source_column, tuple(boundaries))


# ---- indicator ---------------------------------------------------------------------------------------

class _IndicatorColumn(DenseColumn, collections.namedtuple("_IndicatorColumn", ["categorical_column"])):
    """A categorical column as a multi-hot vector (counts, or summed weights) of its ids."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def _parse_example_spec(self) -> dict:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs: Any) -> Tensor:
        pair = self.categorical_column._get_sparse_tensors(inputs)
        depth = self.categorical_column._num_buckets
        if pair.weight_tensor is not None:
            valid = math_ops.greater_equal(pair.id_tensor.values, 0)  # out-of-vocabulary ids (-1) count nowhere
            ids, weights = sparse_retain(pair.id_tensor, valid), sparse_retain(pair.weight_tensor, valid)
            rows = math_ops.cast(ids.indices[:, 0], dtypes.int64)
            positions = array_ops.stack([rows, ids.values], axis=1)
            batch = ids.dense_shape[0]
            return scatter_nd(positions, math_ops.cast(weights.values, dtypes.float32),
                              array_ops.stack([batch, math_ops.cast(depth, dtypes.int64)]))
        dense_ids = sparse_tensor_to_dense(sparse_reorder(pair.id_tensor), default_value=-1)
        rank = pair.id_tensor.dense_shape.shape.as_list()[0] if pair.id_tensor.dense_shape.shape.ndims else None
        dense_ids.set_shape(TensorShape(None if rank is None else [None] * rank))
        return math_ops.reduce_sum(one_hot(dense_ids, depth=depth, on_value=1.0, off_value=0.0), axis=[-2])

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([1, self.categorical_column._num_buckets])

    def _get_dense_tensor(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> Tensor:
        return inputs.get(self)


def indicator_column(categorical_column: CategoricalColumn) -> _IndicatorColumn:
    """A categorical column as a dense multi-hot vector of num_buckets floats (how often each id occurs)."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"indicator_column needs a categorical column, got {categorical_column}")
    return _IndicatorColumn(categorical_column)
