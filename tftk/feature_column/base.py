"""What every feature column shares: the three kinds (feature, dense, categorical) and the builder.

A feature column describes how one raw feature (a key of the `features` dict) becomes model
input. `FeatureTransformationCache` (TF's `_LazyBuilder`) is handed to the columns while a model
is built: asked for a string key it returns the raw feature as a Tensor or SparseTensor (a rank-1
feature gets a second dimension of 1, as TF does); asked for a column it returns that column's
transformed feature, built once per cache even when several columns share it (a bucketized column
under both an indicator and a cross).
"""

from __future__ import annotations

import abc
import collections
from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.control_flow_ops import cond
from tftk.ops.gather_ops import gather_nd, where
from tftk.ops.slicing_ops import boolean_mask
from tftk.ops.sparse_math_ops import sparse_reshape

__all__ = ["FeatureColumn", "DenseColumn", "CategoricalColumn", "IdWeightPair", "FeatureTransformationCache",
           "to_sparse_input", "as_feature_tensor"]

IdWeightPair = collections.namedtuple("IdWeightPair", ("id_tensor", "weight_tensor"))


class FeatureColumn(abc.ABC):
    """A feature column: a name, the parsing spec of its raw features, and how to transform them."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The column's name: its variables' scope and its place in the sorted output."""

    @abc.abstractmethod
    def _transform_feature(self, inputs: "FeatureTransformationCache") -> Any:
        """The column's feature built from `inputs` (Tensor, SparseTensor or a pair of them)."""

    @property
    @abc.abstractmethod
    def _parse_example_spec(self) -> dict:
        """{feature key: FixedLenFeature / VarLenFeature} for tf.parse_example."""

    @property
    def _var_scope_name(self) -> str:
        return self.name


class DenseColumn(FeatureColumn):
    """A column giving one dense float tensor per example (input_layer's inputs)."""

    @property
    @abc.abstractmethod
    def _variable_shape(self) -> TensorShape:
        """The shape of one example's output (the batch dimension left out)."""

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs: "FeatureTransformationCache", weight_collections: Any = None,
                          trainable: bool | None = None) -> Tensor:
        """The [batch, ...] float tensor of this column (creating its variables, if it has any)."""


class CategoricalColumn(FeatureColumn):
    """A column giving sparse category ids in [0, _num_buckets), and optionally their weights."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self) -> int:
        """How many distinct ids the column can give."""

    @abc.abstractmethod
    def _get_sparse_tensors(self, inputs: "FeatureTransformationCache", weight_collections: Any = None,
                            trainable: bool | None = None) -> IdWeightPair:
        """The ids (an int64 SparseTensor) and their weights (a float SparseTensor, or None)."""


def as_feature_tensor(value: Any) -> Any:
    """A raw feature as a Tensor or SparseTensor (SparseTensorValues and arrays become constants)."""
    if isinstance(value, (Tensor, SparseTensor)):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor(np.asarray(value.indices, np.int64), value.values, np.asarray(value.dense_shape, np.int64))
    return convert_to_tensor(value)


def _expand_to_2d(feature: Any) -> Any:
    if isinstance(feature, SparseTensor):
        return sparse_reshape(feature, array_ops.stack([feature.dense_shape[0], math_ops.cast(1, dtypes.int64)]))
    return array_ops.expand_dims(feature, -1)


class FeatureTransformationCache:
    """The features dict of one model build, with every column's transformation made once."""

    def __init__(self, features: dict):
        if not isinstance(features, dict):
            raise TypeError(f"features must be a dict of feature name -> Tensor or SparseTensor, "
                            f"got {type(features).__name__}")
        self._features = dict(features)
        self._cache: dict[Any, Any] = {}
        self._building: list[str] = []  # the columns being transformed, innermost last (for errors)

    def get(self, key: Any) -> Any:
        """The raw feature named `key` (a string), or the transformed feature of column `key`."""
        if key in self._cache:
            return self._cache[key]
        if isinstance(key, str):
            if key not in self._features:
                needed_by = f"column {self._building[-1]!r}" if self._building else "the feature columns"
                raise ValueError(f"Feature {key!r} is not in the features dictionary (its keys: "
                                 f"{sorted(map(str, self._features))}); {needed_by} needs it.")
            value = self._raw_feature(key)
        elif isinstance(key, FeatureColumn):
            self._building.append(key.name)
            try:
                value = key._transform_feature(self)
            finally:
                self._building.pop()
            if value is None:
                raise ValueError(f"Column {key.name} is not supported.")
        else:
            raise TypeError(f'"key" must be either a "str" or a feature column. Provided: {key}')
        self._cache[key] = value
        return value

    def _raw_feature(self, key: str) -> Any:
        try:
            feature = as_feature_tensor(self._features[key])
        except (TypeError, ValueError) as exc:
            raise TypeError(f"Feature {key!r} cannot be converted to a Tensor or SparseTensor: {exc}") from None
        rank = feature.shape.ndims
        if rank == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {feature}")
        if rank == 1:
            return _expand_to_2d(feature)
        if rank is None and isinstance(feature, Tensor):
            return cond(math_ops.equal(array_ops.rank(feature), 1), lambda: array_ops.expand_dims(feature, -1),
                        lambda: array_ops.identity(feature))
        return feature


def to_sparse_input(feature: Any, ignore_value: Any = None) -> SparseTensor:
    """A dense feature as a SparseTensor of its entries other than `ignore_value` (SparseTensors pass).

    The default ignore value is '' for strings, -1 for integers and 0 for floats, as TF's.
    """
    if isinstance(feature, SparseTensor):
        return feature
    if ignore_value is None:
        ignore_value = b"" if feature.dtype is dtypes.string else -1 if feature.dtype.is_integer else 0
    ignore = convert_to_tensor(ignore_value, dtype=dtypes.string) if feature.dtype is dtypes.string \
        else math_ops.cast(ignore_value, feature.dtype)
    keep = math_ops.not_equal(feature, ignore)
    indices = where(keep)
    if feature.shape.ndims is None:  # the same entries, row-major as `where` lists them
        values = boolean_mask(array_ops.reshape(feature, [-1]), array_ops.reshape(keep, [-1]))
    else:
        values = gather_nd(feature, indices)
    return SparseTensor(indices, values, array_ops.shape(feature, out_type=dtypes.int64))


def check_string_or_int(dtype: dtypes.DType, what: str) -> None:
    """Raise naming `what` when `dtype` is neither string nor integer (category keys)."""
    if dtype is not dtypes.string and not dtype.is_integer:
        raise ValueError(f"{what} dtype must be string or integer. dtype: {dtype.name}.")


def check_key(key: Any) -> None:
    """Raise when a column's feature key is not a string."""
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")
