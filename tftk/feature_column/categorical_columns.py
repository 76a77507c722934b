"""Categorical feature columns: ids from identity, hash buckets, vocabularies, crosses, plus weights.

Each gives `_get_sparse_tensors`: an int64 SparseTensor of ids in [0, _num_buckets) (and a float
SparseTensor of weights for `weighted_categorical_column`). A dense input is made sparse first,
dropping '' (strings) or -1 (integers), as TF1 does. Hash buckets use Fingerprint64 and crosses
FingerprintCat64, so ids are TF's own.
"""

from __future__ import annotations

import collections
import os
from typing import Any, Sequence

import numpy as np

from tftk.feature_column.base import (CategoricalColumn, FeatureColumn, IdWeightPair, check_key,
                                      check_string_or_int, to_sparse_input)
from tftk.framework import dtypes
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops import array_ops, math_ops
from tftk.ops.categorical_ops import sparse_cross_hashed, vocabulary_lookup
from tftk.ops.check_ops import assert_greater_equal, assert_less
from tftk.ops.control_flow_ops import with_dependencies
from tftk.ops.gather_ops import where
from tftk.ops.parsing_ops import VarLenFeature
from tftk.ops.string_ops import as_string, string_to_hash_bucket_fast

__all__ = ["categorical_column_with_identity", "categorical_column_with_hash_bucket",
           "categorical_column_with_vocabulary_list", "categorical_column_with_vocabulary_file",
           "weighted_categorical_column", "crossed_column"]


def _sparse_ids_input(inputs: Any, key: str, column_dtype: dtypes.DType | None = None) -> SparseTensor:
    """The raw feature `key` as a SparseTensor, its dtype checked against the column's."""
    feature = to_sparse_input(inputs.get(key))
    if feature.dtype is not dtypes.string and not feature.dtype.is_integer:
        raise ValueError(f"feature {key!r} is {feature.dtype.name}; categorical columns need string or integer "
                         f"values")
    if column_dtype is not None and column_dtype.is_integer != feature.dtype.is_integer:
        raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {key}, column dtype: "
                         f"{column_dtype.name}, tensor dtype: {feature.dtype.name}")
    return feature


class _SingleKeyCategorical(CategoricalColumn):
    """A categorical column of one raw feature: its name is the key, its ids the transformed feature."""

    @property
    def name(self) -> str:
        return self.key

    def _get_sparse_tensors(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> IdWeightPair:
        return IdWeightPair(inputs.get(self), None)


# ---- identity ---------------------------------------------------------------------------------------

class _IdentityCategoricalColumn(_SingleKeyCategorical, collections.namedtuple(
        "_IdentityCategoricalColumn", ["key", "num_buckets", "default_value"])):
    """Integer features used as ids directly."""

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(dtypes.int64)}

    @property
    def _num_buckets(self) -> int:
        return self.num_buckets

    def _transform_feature(self, inputs: Any) -> SparseTensor:
        feature = to_sparse_input(inputs.get(self.key))
        if not feature.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {feature.dtype.name}")
        values = math_ops.cast(feature.values, dtypes.int64)
        if self.default_value is None:
            checks = [assert_less(values, np.int64(self.num_buckets), data=[values],
                                  message=f"{self.key}: ids must be < num_buckets {self.num_buckets}"),
                      assert_greater_equal(values, np.int64(0), data=[values], message=f"{self.key}: ids must be >= 0")]
            values = with_dependencies(checks, values)
        else:
            out_of_range = math_ops.logical_or(values < 0, values >= self.num_buckets)
            values = where(out_of_range, array_ops.fill(array_ops.shape(values), np.int64(self.default_value)), values)
        return SparseTensor(feature.indices, values, feature.dense_shape)


def categorical_column_with_identity(key: str, num_buckets: int, default_value: int | None = None
                                     ) -> _IdentityCategoricalColumn:
    """Integer features as ids in [0, num_buckets); others become `default_value` (or fail when None)."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    check_key(key)
    return _IdentityCategoricalColumn(key, int(num_buckets), default_value)


# ---- hash bucket ------------------------------------------------------------------------------------

class _HashedCategoricalColumn(_SingleKeyCategorical, collections.namedtuple(
        "_HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):
    """String (or integer, as its decimal string) features hashed into hash_bucket_size ids."""

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs: Any) -> SparseTensor:
        feature = _sparse_ids_input(inputs, self.key, self.dtype)
        values = feature.values if self.dtype is dtypes.string else as_string(feature.values)
        ids = string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(feature.indices, ids, feature.dense_shape)


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int, dtype: Any = dtypes.string
                                        ) -> _HashedCategoricalColumn:
    """Features hashed into `hash_bucket_size` ids: Fingerprint64(value) % hash_bucket_size, as TF."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    check_key(key)
    dtype = dtypes.as_dtype(dtype)
    check_string_or_int(dtype, f"column_name: {key}")
    return _HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


# ---- vocabulary list / file ----------------------------------------------------------------------------

class _VocabularyListCategoricalColumn(_SingleKeyCategorical, collections.namedtuple(
        "_VocabularyListCategoricalColumn", ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"])):
    """Features looked up in an in-memory vocabulary."""

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _transform_feature(self, inputs: Any) -> SparseTensor:
        feature = _sparse_ids_input(inputs, self.key, self.dtype)
        return vocabulary_lookup(feature, self.vocabulary_list, self.num_oov_buckets, self.default_value,
                                 name=f"{self.key}_lookup")


def categorical_column_with_vocabulary_list(key: str, vocabulary_list: Sequence[Any], dtype: Any = None,
                                            default_value: int = -1, num_oov_buckets: int = 0
                                            ) -> _VocabularyListCategoricalColumn:
    """Features as their position in `vocabulary_list`.

    A value not in the list gets `default_value` (-1: dropped by the embedding and linear model), or,
    with `num_oov_buckets` > 0, len(vocabulary_list) + Fingerprint64(value) % num_oov_buckets.
    """
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    kind = np.asarray(vocabulary_list).dtype.kind
    vocabulary_dtype = dtypes.string if kind in "SUO" else dtypes.int64 if kind in "iu" else None
    if vocabulary_dtype is None:
        raise ValueError(f"column_name: {key} vocabulary dtype must be string or integer. "
                         f"dtype: {np.asarray(vocabulary_list).dtype}.")
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = vocabulary_dtype if dtype is None else dtypes.as_dtype(dtype)
    if dtype.is_integer != vocabulary_dtype.is_integer:
        raise ValueError(f"dtype {dtype.name} and vocabulary dtype {vocabulary_dtype.name} do not match, "
                         f"column_name: {key}")
    check_string_or_int(dtype, f"column_name: {key}")
    check_key(key)
    return _VocabularyListCategoricalColumn(key, tuple(vocabulary_list), dtype, default_value, int(num_oov_buckets))


class _VocabularyFileCategoricalColumn(_SingleKeyCategorical, collections.namedtuple(
        "_VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype", "default_value"])):
    """Features looked up in a vocabulary file, one entry per line (the first vocabulary_size lines)."""

    @property
    def _parse_example_spec(self) -> dict:
        return {self.key: VarLenFeature(self.dtype)}

    @property
    def _num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets

    def _vocabulary(self) -> list:
        with open(self.vocabulary_file, "rb") as f:
            lines = [line.rstrip(b"\n").rstrip(b"\r") for line in f][:self.vocabulary_size]
        if len(lines) < self.vocabulary_size:
            raise ValueError(f"vocabulary_file {self.vocabulary_file} of column {self.key} has {len(lines)} lines, "
                             f"fewer than vocabulary_size {self.vocabulary_size}")
        if self.dtype.is_integer:
            try:
                lines = [int(line) for line in lines]
            except ValueError as exc:
                raise ValueError(f"vocabulary_file {self.vocabulary_file} of column {self.key}: {exc}") from None
        seen = set()
        for line in lines:
            if line in seen:
                raise ValueError(f"vocabulary_file {self.vocabulary_file} of column {self.key} has the key "
                                 f"{line!r} twice")
            seen.add(line)
        return lines

    def _transform_feature(self, inputs: Any) -> SparseTensor:
        feature = _sparse_ids_input(inputs, self.key, self.dtype)
        return vocabulary_lookup(feature, self._vocabulary(), self.num_oov_buckets, self.default_value,
                                 name=f"{self.key}_lookup")


def categorical_column_with_vocabulary_file(key: str, vocabulary_file: str, vocabulary_size: int | None = None,
                                            num_oov_buckets: int = 0, default_value: int | None = None,
                                            dtype: Any = dtypes.string) -> _VocabularyFileCategoricalColumn:
    """Features as the line number of their entry in `vocabulary_file` (read when the model is built).

    `vocabulary_size` defaults to the file's line count; out-of-vocabulary values as in
    categorical_column_with_vocabulary_list.
    """
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not os.path.exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with open(vocabulary_file, "rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    check_string_or_int(dtype, f"column_name: {key}")
    check_key(key)
    return _VocabularyFileCategoricalColumn(key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets or 0),
                                            dtype, -1 if default_value is None else default_value)


# ---- weighted -----------------------------------------------------------------------------------------

class _WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "_WeightedCategoricalColumn", ["categorical_column", "weight_feature_key", "dtype"])):
    """A categorical column whose ids carry the weights of another feature (same indices)."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def _parse_example_spec(self) -> dict:
        spec = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in spec:
            raise ValueError(f"Parse config {spec[self.weight_feature_key]} already exists for "
                             f"{self.weight_feature_key}.")
        spec[self.weight_feature_key] = VarLenFeature(self.dtype)
        return spec

    @property
    def _num_buckets(self) -> int:
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs: Any) -> tuple:
        weights = inputs.get(self.weight_feature_key)
        if weights.dtype.base_dtype is not self.dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype.name}, but got {weights.dtype.name} "
                             f"(weight feature {self.weight_feature_key!r}).")
        if not isinstance(weights, SparseTensor):
            weights = to_sparse_input(weights, ignore_value=0.0)
        if not weights.dtype.is_floating:
            weights = SparseTensor(weights.indices, math_ops.cast(weights.values, dtypes.float32), weights.dense_shape)
        return inputs.get(self.categorical_column), weights

    def _get_sparse_tensors(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> IdWeightPair:
        ids, weights = inputs.get(self)
        return IdWeightPair(ids, weights)


def weighted_categorical_column(categorical_column: CategoricalColumn, weight_feature_key: str,
                                dtype: Any = dtypes.float32) -> _WeightedCategoricalColumn:
    """`categorical_column`'s ids weighted by the feature `weight_feature_key` (same sparse indices)."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"weighted_categorical_column needs a categorical column, got {categorical_column}")
    return _WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


# ---- crossed -------------------------------------------------------------------------------------------

def _leaf_keys(cross: "_CrossedColumn") -> list:
    keys = []
    for key in cross.keys:
        keys.extend(_leaf_keys(key) if isinstance(key, _CrossedColumn) else [key])
    return keys


class _CrossedColumn(CategoricalColumn, collections.namedtuple(
        "_CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    """The hashed combinations of the values of several features (or categorical columns)."""

    @property
    def name(self) -> str:
        return "_X_".join(sorted(k.name if isinstance(k, FeatureColumn) else k for k in _leaf_keys(self)))

    @property
    def _parse_example_spec(self) -> dict:
        spec = {}
        for key in self.keys:
            spec.update(key._parse_example_spec if isinstance(key, FeatureColumn)
                        else {key: VarLenFeature(dtypes.string)})
        return spec

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size

    def _transform_feature(self, inputs: Any) -> SparseTensor:
        features = []
        for key in _leaf_keys(self):
            if isinstance(key, str):
                features.append(inputs.get(key))
                continue
            pair = key._get_sparse_tensors(inputs)
            if pair.weight_tensor is not None:
                raise ValueError(f"crossed_column does not support weight_tensor, but the given column populates "
                                 f"weight_tensor. Given column: {key.name}")
            features.append(pair.id_tensor)
        return sparse_cross_hashed(features, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)

    def _get_sparse_tensors(self, inputs: Any, weight_collections: Any = None, trainable: Any = None) -> IdWeightPair:
        return IdWeightPair(inputs.get(self), None)


def crossed_column(keys: Sequence[Any], hash_bucket_size: int, hash_key: int | None = None) -> _CrossedColumn:
    """The cross of `keys` (feature names or categorical columns other than hash buckets), hashed.

    Each combination of one value per key in an example gives the id
    FingerprintCat64-chain(hash_key, values) % hash_bucket_size, TF's own.
    """
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError(f"Unsupported key type. All keys must be either string, or categorical column except "
                             f"_HashedCategoricalColumn. Given: {key}")
        if isinstance(key, _HashedCategoricalColumn):
            raise ValueError(f"categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             f"crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {key}")
    return _CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)
