"""`tf.feature_column` (TF1's, also `tf.compat.v1.feature_column`): raw features turned into model input.

Columns describe features (`numeric_column`, `categorical_column_with_*`, `crossed_column`, ...);
`input_layer` and `linear_model` build the model input from a features dict, and
`make_parse_example_spec` the tf.parse_example spec that gives them their raw features.
"""

from tftk.feature_column.categorical_columns import (categorical_column_with_hash_bucket,
                                                     categorical_column_with_identity,
                                                     categorical_column_with_vocabulary_file,
                                                     categorical_column_with_vocabulary_list, crossed_column,
                                                     weighted_categorical_column)
from tftk.feature_column.dense_columns import bucketized_column, indicator_column, numeric_column
from tftk.feature_column.embedding_columns import embedding_column, shared_embedding_columns
from tftk.feature_column.feature_layers import input_layer, linear_model, make_parse_example_spec

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_identity",
           "categorical_column_with_hash_bucket", "categorical_column_with_vocabulary_list",
           "categorical_column_with_vocabulary_file", "weighted_categorical_column", "crossed_column",
           "indicator_column", "embedding_column", "shared_embedding_columns", "input_layer", "linear_model", "make_parse_example_spec"]
