"""Float64 finite-difference gradients through the sparse embedding lookups, input_layer and linear_model.

Feature columns make float32 variables; a variable-scope custom getter hands the models float64
tensors instead (as a TF1 custom getter may), so the whole path, lookups, combiners, weights and
bias, is checked in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tftk.api import nn

fc = tf.feature_column
rng = np.random.default_rng(7)

IDS = np.array([[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]], np.int64)
ID_VALUES = np.array([1, 4, 1, 0, 2, -1], np.int64)        # -1 is dropped; row 1 is empty
WEIGHTS = np.array([0.5, 2.0, 1.5, 0.7, 1.2, 3.0])


def _sparse(values, indices=IDS, shape=(4, 3)):
    return tf.SparseTensor(indices, values, np.array(shape, np.int64))


def _safe_lookup(combiner, weighted):
    def build(params, weights):
        return nn.safe_embedding_lookup_sparse(params, _sparse(ID_VALUES), _sparse(weights) if weighted else None,
                                               combiner=combiner)
    return build


def _rank3_lookup(params, weights):
    indices = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 1]], np.int64)
    return nn.safe_embedding_lookup_sparse(params, _sparse(np.array([2, 0, 3, 3], np.int64), indices, (2, 2, 2)),
                                           _sparse(weights, indices, (2, 2, 2)), combiner="sqrtn")


def _plain_lookup(combiner):
    def build(params, weights):
        ids = np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]], np.int64)
        out = nn.embedding_lookup_sparse(params, _sparse(np.array([1, 1, 4, 0, 3], np.int64), ids, (3, 2)),
                                         _sparse(weights, ids, (3, 2)), combiner=combiner)
        return tf.reshape(out, [3, 2])  # its rows are known only when it runs (the last non-empty row + 1)
    return build


def _float64_getter(tables):
    """A custom getter returning the float64 tensor whose key ends the variable's name."""
    def getter(true_getter, name, **kwargs):
        return next(tensor for suffix, tensor in tables.items() if name.endswith(suffix))
    return getter


FEATURES = {"ids": tf.SparseTensorValue(IDS[:5], ID_VALUES[:5], [4, 3]),
            "tags": [["a"], ["b"], [""], ["a"]]}


def _input_layer(table_ids, table_tags, weights):
    columns = [fc.embedding_column(fc.weighted_categorical_column(fc.categorical_column_with_identity("ids", 5), "w",
                                                                  dtype=tf.float64), 3, combiner="mean"),
               fc.embedding_column(fc.categorical_column_with_vocabulary_list("tags", ["a", "b"]), 3, combiner="sqrtn")]
    features = dict(FEATURES, w=_sparse(weights[:5], IDS[:5]))
    with tf.variable_scope("m", custom_getter=_float64_getter({"ids_weighted_by_w_embedding/embedding_weights": table_ids,
                                                               "tags_embedding/embedding_weights": table_tags})):
        return fc.input_layer(features, columns)


def _linear_model(w_ids, w_tags, w_cross, bias):
    columns = [fc.categorical_column_with_identity("ids", 5), fc.categorical_column_with_hash_bucket("tags", 3),
               fc.crossed_column(["tags", fc.categorical_column_with_identity("ids", 5)], 4)]
    getter = _float64_getter({"/ids/weights": w_ids, "/tags/weights": w_tags, "/ids_X_tags/weights": w_cross,
                              "bias_weights": bias})
    with tf.variable_scope("m", custom_getter=getter):
        out = fc.linear_model(FEATURES, columns, units=2, sparse_combiner="sqrtn")
    out.set_shape([4, 2])
    return out


def _uniform(*shape):
    return rng.uniform(-1.0, 1.0, shape)


GRADIENT_CASES = [
    *[GradientCase(f"safe_embedding_lookup_sparse_{c}_{'weighted' if w else 'plain'}", _safe_lookup(c, w),
                   [_uniform(5, 3), WEIGHTS], wrt=[0, 1] if w else [0])
      for c in ("sum", "mean", "sqrtn") for w in (True, False)],
    GradientCase("safe_embedding_lookup_sparse_rank3", _rank3_lookup, [_uniform(4, 2), np.array([0.5, 1.5, 2.0, 0.3])]),
    *[GradientCase(f"embedding_lookup_sparse_{c}", _plain_lookup(c), [_uniform(5, 2), rng.uniform(0.5, 2.0, 5)])
      for c in ("sum", "mean", "sqrtn")],
    GradientCase("input_layer_embeddings", _input_layer, [_uniform(5, 3), _uniform(2, 3), WEIGHTS]),
    GradientCase("linear_model_categorical", _linear_model, [_uniform(5, 2), _uniform(3, 2), _uniform(4, 2),
                                                             _uniform(2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient(case):
    check_gradient(case)
