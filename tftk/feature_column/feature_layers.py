"""input_layer, linear_model and make_parse_example_spec: feature columns turned into model input.

Both models visit the columns sorted by name, each in a variable scope named after it, so
variables get TF1's checkpoint names: `input_layer/<col>_embedding/embedding_weights`,
`linear_model/<col>/weights`, `linear_model/bias_weights`. Variables go to GLOBAL_VARIABLES and
MODEL_VARIABLES (plus `weight_collections`), and TRAINABLE_VARIABLES when `trainable`.
"""

from __future__ import annotations

from typing import Any, Iterable

from tftk.feature_column.base import CategoricalColumn, DenseColumn, FeatureColumn, FeatureTransformationCache
from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, get_collection
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops.constant_op import constant
from tftk.ops import array_ops, math_ops
from tftk.ops.init_ops import zeros_initializer
from tftk.ops.nn_ops import bias_add
from tftk.ops.sparse_embedding_ops import safe_embedding_lookup_sparse
from tftk.ops.sparse_math_ops import sparse_reshape
from tftk.ops.variable_scope import get_variable, get_variable_scope, variable_scope

__all__ = ["input_layer", "linear_model", "make_parse_example_spec"]


def _normalize_feature_columns(feature_columns: Any) -> list:
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    feature_columns = list(feature_columns)
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given (type {type(column)}): "
                             f"{column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name: dict[str, FeatureColumn] = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {column} and {by_name[column.name]}. "
                             f"This usually means that these columns refer to same base feature. Either one must be "
                             f"discarded or a duplicated but renamed item must be inserted in features dict.")
        by_name[column.name] = column
    return feature_columns


def _weight_collections(weight_collections: Any) -> list:
    collections = list(weight_collections or [])
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _check_features(features: Any) -> None:
    if not isinstance(features, dict):
        raise TypeError(f"features must be a dict of feature name -> Tensor or SparseTensor, "
                        f"got {type(features).__name__}")


def _verify_static_batch_size_equality(tensors: list, columns: list) -> None:
    expected, first = None, None
    for tensor, column in zip(tensors, columns):
        size = tensor.shape[0] if tensor.shape.ndims else None
        size = getattr(size, "value", size)
        if size is None:
            continue
        if expected is None:
            expected, first = size, column
        elif size != expected:
            raise ValueError(f"Batch size (first dimension) of each feature must be same. Batch size of columns "
                             f"({first.name}, {column.name}): ({expected}, {size})")


def _flat_dense(column: DenseColumn, builder: FeatureTransformationCache, collections: list, trainable: bool) -> Tensor:
    """The column's dense tensor as [batch, num_elements]."""
    tensor = column._get_dense_tensor(builder, weight_collections=collections, trainable=trainable)
    size = column._variable_shape.num_elements()
    flat = array_ops.reshape(tensor, array_ops.stack([array_ops.shape(tensor)[0], size]))
    flat.set_shape([tensor.shape[0] if tensor.shape.ndims else None, size])
    return flat


def input_layer(features: dict, feature_columns: Iterable[DenseColumn], weight_collections: Any = None,
                trainable: bool = True, cols_to_vars: dict | None = None,
                cols_to_output_tensors: dict | None = None) -> Tensor:
    """The dense columns' values for a batch, flattened and concatenated (columns sorted by name).

    Args:
      features: feature name -> Tensor or SparseTensor (e.g. from tf.parse_example).
      feature_columns: dense columns (numeric, bucketized, indicator, embedding).
      weight_collections: extra collections for the variables made (embedding tables).
      trainable: whether those variables are trainable.
      cols_to_vars: if a dict, filled with column -> list of its variables.
      cols_to_output_tensors: if a dict, filled with column -> its [batch, n] output.
    Returns:
      A float32 [batch, sum of the columns' sizes] tensor.
    """
    _check_features(features)
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, DenseColumn):
            raise ValueError(f"Items of feature_columns must be a _DenseColumn. You can wrap a categorical column "
                             f"with an embedding_column or indicator_column. Given: {column}")
    collections = _weight_collections(weight_collections)
    with variable_scope(None, default_name="input_layer"):
        builder = FeatureTransformationCache(features)
        outputs, ordered = [], sorted(feature_columns, key=lambda c: c.name)
        for column in ordered:
            with variable_scope(None, default_name=column._var_scope_name):
                output = _flat_dense(column, builder, collections, trainable)
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = get_collection(GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _verify_static_batch_size_equality(outputs, ordered)
        return array_ops.concat(outputs, 1)


def _as_2d(sp: SparseTensor) -> SparseTensor:
    """A SparseTensor [batch, ...] reshaped to [batch, everything else]."""
    return sparse_reshape(sp, array_ops.stack([sp.dense_shape[0], constant(-1, dtypes.int64)]))


def _weighted_sum(column: FeatureColumn, builder: FeatureTransformationCache, units: int, sparse_combiner: str,
                  collections: list, trainable: bool) -> tuple[Tensor, Any]:
    """column's contribution to the logits: its ids' weights combined, or its dense values times weights."""
    if isinstance(column, CategoricalColumn):
        pair = column._get_sparse_tensors(builder, weight_collections=collections, trainable=trainable)
        weights = get_variable("weights", shape=(column._num_buckets, units), dtype=dtypes.float32,
                               initializer=zeros_initializer(), trainable=trainable, collections=collections)
        ids, id_weights = _as_2d(pair.id_tensor), pair.weight_tensor
        if id_weights is not None:
            id_weights = _as_2d(id_weights)
        return safe_embedding_lookup_sparse(weights, ids, sparse_weights=id_weights, combiner=sparse_combiner,
                                            name="weighted_sum"), weights
    weights = get_variable("weights", shape=(column._variable_shape.num_elements(), units), dtype=dtypes.float32,
                           initializer=zeros_initializer(), trainable=trainable, collections=collections)
    dense = _flat_dense(column, builder, collections, trainable)
    return math_ops.matmul(dense, weights, name="weighted_sum"), weights


def linear_model(features: dict, feature_columns: Iterable[FeatureColumn], units: int = 1,
                 sparse_combiner: str = "sum", weight_collections: Any = None, trainable: bool = True,
                 cols_to_vars: dict | None = None) -> Tensor:
    """A linear model of the columns: sum of each column's weighted values, plus a bias.

    Categorical columns (and bucketized ones) look up one weight row per id, combined per example
    by `sparse_combiner` ("sum", "mean" or "sqrtn"); dense columns are multiplied by a weight
    matrix. Variables: `linear_model/<column name>/weights` [num buckets or elements, units] and
    `linear_model/bias_weights` [units], all initialised to zero.

    Returns:
      The float32 [batch, units] logits.
    """
    _check_features(features)
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, (DenseColumn, CategoricalColumn)):
            raise ValueError(f"Items of feature_columns must be either a _DenseColumn or _CategoricalColumn. "
                             f"Given: {column}")
    if sparse_combiner not in ("sum", "mean", "sqrtn"):
        raise ValueError(f'sparse_combiner must be one of "mean", "sqrtn" or "sum", got {sparse_combiner!r}')
    collections = _weight_collections(weight_collections)
    found: dict = {}
    with variable_scope(None, default_name="linear_model"):
        builder = FeatureTransformationCache(features)
        sums, ordered = [], sorted(feature_columns, key=lambda c: c.name)
        for column in ordered:
            with variable_scope(None, default_name=column._var_scope_name):
                total, _ = _weighted_sum(column, builder, units, sparse_combiner, collections, trainable)
                sums.append(total)
                found[column] = get_collection(GraphKeys.GLOBAL_VARIABLES, scope=get_variable_scope().name + "/")
        _verify_static_batch_size_equality(sums, ordered)
        without_bias = math_ops.add_n(sums, name="weighted_sum_no_bias")
        bias = get_variable("bias_weights", shape=[units], dtype=dtypes.float32, initializer=zeros_initializer(),
                            trainable=trainable, collections=collections)
        found["bias"] = [bias]
        logits = bias_add(without_bias, bias, name="weighted_sum")
    if cols_to_vars is not None:
        cols_to_vars.update(found)
    return logits


def make_parse_example_spec(feature_columns: Iterable[FeatureColumn]) -> dict:
    """The tf.parse_example `features` spec that gives every column its raw features."""
    result: dict = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: {column}")
        for key, value in column._parse_example_spec.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} "
                                 f"and {result[key]}")
        result.update(column._parse_example_spec)
    return result
