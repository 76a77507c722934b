"""tf.feature_column: exact outputs of every column kind, the models' variables, bad input's errors.

Values are worked out by hand from TF1's definitions (hash buckets are TF's own, recorded from
TensorFlow 2.21: string_to_hash_bucket_fast(["hello", "world", "a"], 1000) = [296, 598, 939]).
tests/differential/test_feature_column_tf.py compares the same machinery against real TensorFlow.
"""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tftk.framework.errors import InvalidArgumentError

fc = tf.feature_column


def _run(fetches, feed=None):
    with tf.Session() as s:
        s.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return s.run(fetches, feed)


def _constant_init(values):
    return tf.constant_initializer(np.asarray(values, np.float32))


TABLE = np.arange(12, dtype=np.float32).reshape(4, 3)  # embedding rows 0..3
SPARSE_IDS = tf.SparseTensorValue([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], np.array([1, 3, 0, 0, 2], np.int64), [3, 3])
SPARSE_W = tf.SparseTensorValue([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], np.array([1.0, 3.0, 2.0, 0.5, 0.5],
                                                                                  np.float32), [3, 3])

# (name, columns builder, features, expected input_layer output)
INPUT_LAYER_CASES = [
    ("numeric_normalized", lambda: [fc.numeric_column("x", normalizer_fn=lambda t: t * 2.0 - 1.0)],
     {"x": [[1.0], [5.0]]}, [[1.0], [9.0]]),
    ("numeric_int_shape_2x2", lambda: [fc.numeric_column("x", shape=(2, 2), dtype=tf.int64)],
     {"x": np.arange(8).reshape(2, 2, 2)}, [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ("numeric_rank_one_feature", lambda: [fc.numeric_column("x")], {"x": [3.0, 4.0]}, [[3.0], [4.0]]),
    ("bucketized_edges", lambda: [fc.bucketized_column(fc.numeric_column("x"), [0.0, 2.0, 6.0])],
     {"x": [[-1.0], [0.0], [5.9], [6.0]]}, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
    ("bucketized_two_values", lambda: [fc.bucketized_column(fc.numeric_column("x", shape=2), [1.0])],
     {"x": [[0.0, 3.0]]}, [[1, 0, 0, 1]]),
    ("vocabulary_drops_empty_and_unknown",
     lambda: [fc.indicator_column(fc.categorical_column_with_vocabulary_list("s", ["a", "b"]))],
     {"s": [["a", "a"], ["", "b"], ["zz", ""]]}, [[2, 0], [0, 1], [0, 0]]),
    ("vocabulary_int_default", lambda: [fc.indicator_column(
        fc.categorical_column_with_vocabulary_list("n", [10, 20, 30], default_value=2))],
     {"n": np.array([[20], [99], [-1]], np.int64)}, [[0, 1, 0], [0, 0, 1], [0, 0, 0]]),
    ("identity_default_value", lambda: [fc.indicator_column(fc.categorical_column_with_identity("n", 3, 0))],
     {"n": [[2, 7], [-1, 1]]}, [[1, 0, 1], [0, 1, 0]]),
    ("hash_buckets_are_tf_buckets", lambda: [fc.embedding_column(
        fc.categorical_column_with_hash_bucket("s", 1000), 1, initializer=lambda shape, dtype=None, partition_info=None:
        tf.reshape(tf.range(1000.0), shape))],
     {"s": [["hello"], ["world"], ["a"]]}, [[296.0], [598.0], [939.0]]),
    ("weighted_indicator_sums_weights", lambda: [fc.indicator_column(fc.weighted_categorical_column(
        fc.categorical_column_with_identity("ids", 4), "w"))],
     {"ids": SPARSE_IDS, "w": SPARSE_W}, [[0, 1, 0, 3], [0, 0, 0, 0], [2.5, 0, 0.5, 0]]),
    ("embedding_mean", lambda: [fc.embedding_column(fc.categorical_column_with_identity("ids", 4), 3,
                                                    initializer=_constant_init(TABLE))],
     {"ids": SPARSE_IDS}, [[6, 7, 8], [0, 0, 0], [2, 3, 4]]),
    ("embedding_sum", lambda: [fc.embedding_column(fc.categorical_column_with_identity("ids", 4), 3, combiner="sum",
                                                   initializer=_constant_init(TABLE))],
     {"ids": SPARSE_IDS}, [[12, 14, 16], [0, 0, 0], [6, 9, 12]]),
    ("embedding_weighted_sqrtn", lambda: [fc.embedding_column(fc.weighted_categorical_column(
        fc.categorical_column_with_identity("ids", 4), "w"), 3, combiner="sqrtn", initializer=_constant_init(TABLE))],
     {"ids": SPARSE_IDS, "w": SPARSE_W},
     [(np.array([3, 4, 5]) + 3 * np.array([9, 10, 11])) / np.sqrt(10), [0, 0, 0],
      (2.5 * np.array([0, 1, 2]) + 0.5 * np.array([6, 7, 8])) / np.sqrt(4.5)]),
    ("columns_sorted_by_name", lambda: [fc.numeric_column("b"), fc.numeric_column("a")],
     {"a": [[1.0]], "b": [[2.0]]}, [[1.0, 2.0]]),
]


@pytest.mark.parametrize("name,columns,features,expected", INPUT_LAYER_CASES, ids=[c[0] for c in INPUT_LAYER_CASES])
def test_input_layer_values(name, columns, features, expected):
    with tf.Graph().as_default():
        out = fc.input_layer(features, columns())
        assert out.dtype == tf.float32
        np.testing.assert_allclose(_run(out), np.asarray(expected, np.float32), rtol=1e-6)


def test_linear_model_variables_and_logits():
    with tf.Graph().as_default():
        columns = [fc.numeric_column("x", shape=2), fc.categorical_column_with_identity("ids", 4),
                   fc.bucketized_column(fc.numeric_column("y"), [0.0])]
        c2v = {}
        logits = fc.linear_model({"x": [[1.0, 2.0], [0.0, 1.0], [3.0, 0.0]], "ids": SPARSE_IDS,
                                  "y": [[-1.0], [1.0], [1.0]]}, columns, units=2, sparse_combiner="mean",
                                 cols_to_vars=c2v)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["linear_model/bias_weights", "linear_model/ids/weights", "linear_model/x/weights",
                         "linear_model/y_bucketized/weights"]
        assert sorted(v.op.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == names
        assert [v.op.name for v in c2v["bias"]] == ["linear_model/bias_weights"]
        assert [v.op.name for v in c2v[columns[1]]] == ["linear_model/ids/weights"]
        w_x = np.array([[1.0, -1.0], [0.5, 2.0]], np.float32)
        w_ids = np.arange(8, dtype=np.float32).reshape(4, 2)
        w_y = np.array([[10.0, 20.0], [30.0, 40.0]], np.float32)
        bias = np.array([0.25, -0.25], np.float32)
        by_name = {v.op.name: v for v in tf.global_variables()}
        assigns = [by_name["linear_model/x/weights"].assign(w_x), by_name["linear_model/ids/weights"].assign(w_ids),
                   by_name["linear_model/y_bucketized/weights"].assign(w_y),
                   by_name["linear_model/bias_weights"].assign(bias)]
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(assigns)
            got = s.run(logits)
    x = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 0.0]]) @ w_x
    ids = np.array([(w_ids[1] + w_ids[3]) / 2, [0, 0], (2 * w_ids[0] + w_ids[2]) / 3])
    y = w_y[[0, 1, 1]]
    np.testing.assert_allclose(got, x + ids + y + bias, rtol=1e-6)


def test_embedding_variable_names_and_second_call():
    with tf.Graph().as_default():
        column = fc.embedding_column(fc.categorical_column_with_hash_bucket("s", 5), 2)
        c2v, outputs = {}, {}
        fc.input_layer({"s": [["a"]]}, [column], cols_to_vars=c2v, cols_to_output_tensors=outputs)
        fc.input_layer({"s": [["a"]]}, [column], trainable=False)
        assert [v.op.name for v in c2v[column]] == ["input_layer/s_embedding/embedding_weights"]
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "input_layer/s_embedding/embedding_weights", "input_layer_1/s_embedding/embedding_weights"]
        assert [v.op.name for v in tf.trainable_variables()] == ["input_layer/s_embedding/embedding_weights"]
        assert outputs[column].shape.as_list() == [1, 2]
        values = _run(tf.global_variables()[0])
    assert values.shape == (5, 2) and np.all(np.abs(values) <= 2 / np.sqrt(2))  # truncated normal, stddev 1/sqrt(2)


def test_a_shared_transformation_is_built_once():
    with tf.Graph().as_default() as g:
        bucket = fc.bucketized_column(fc.numeric_column("x"), [0.0])
        fc.input_layer({"x": [[1.0]], "s": [["a"]]}, [bucket, fc.indicator_column(fc.crossed_column([bucket, "s"], 5))])
        assert [op.type for op in g.get_operations()].count("Bucketize") == 1


def test_make_parse_example_spec_round_trip():
    columns = [fc.numeric_column("x", shape=2, default_value=0.5),
               fc.embedding_column(fc.categorical_column_with_vocabulary_list("s", ["a", "b"]), 2),
               fc.weighted_categorical_column(fc.categorical_column_with_identity("ids", 3), "w")]
    spec = fc.make_parse_example_spec(columns)
    assert spec == {"x": tf.FixedLenFeature((2,), tf.float32, ((0.5, 0.5))), "s": tf.VarLenFeature(tf.string),
                    "ids": tf.VarLenFeature(tf.int64), "w": tf.VarLenFeature(tf.float32)}
    example = tf.train.Example(features=tf.train.Features(feature={
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"b", b"a"])),
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[2])),
        "w": tf.train.Feature(float_list=tf.train.FloatList(value=[4.0]))}))
    with tf.Graph().as_default():
        parsed = tf.parse_example([example.SerializeToString()], spec)
        out = fc.input_layer(parsed, [columns[0], fc.indicator_column(columns[1].categorical_column),
                                      fc.indicator_column(columns[2])])
        np.testing.assert_allclose(_run(out), [[0, 0, 4, 1, 1, 0.5, 0.5]])


def test_vocabulary_file(tmp_path):
    words = tmp_path / "words.txt"
    words.write_bytes(b"sf\r\nnyc\nla\nboston\n")
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("5\n-2\n")
    with tf.Graph().as_default():
        city = fc.categorical_column_with_vocabulary_file("c", str(words), vocabulary_size=3)
        n = fc.categorical_column_with_vocabulary_file("n", str(numbers), dtype=tf.int64, num_oov_buckets=1)
        assert (city._num_buckets, n._num_buckets) == (3, 3)
        out = fc.input_layer({"c": [["nyc"], ["boston"]], "n": np.array([[-2], [8]], np.int64)},
                             [fc.indicator_column(city), fc.indicator_column(n)])
        np.testing.assert_array_equal(_run(out), [[0, 1, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]])


def test_identity_out_of_range_fails_at_run_time_naming_the_key():
    # TF1's identity column asserts 0 <= id < num_buckets (TF 2.x dropped the check and gives zeros)
    with tf.Graph().as_default():
        out = fc.input_layer({"n": [[5]]}, [fc.indicator_column(fc.categorical_column_with_identity("n", 3))])
        with pytest.raises(InvalidArgumentError, match="n: ids must be < num_buckets 3"):
            _run(out)


BAD_INPUT = [
    ("missing_key", lambda: fc.input_layer({"age": [[1.0]]}, [fc.numeric_column("agee")]),
     ValueError, r"Feature 'agee' is not in the features dictionary \(its keys: \['age'\]\); column 'agee' needs"),
    ("missing_weight_key", lambda: fc.linear_model({"ids": [[1]]}, [fc.weighted_categorical_column(
        fc.categorical_column_with_identity("ids", 3), "w")]), ValueError,
     r"Feature 'w' is not in the features dictionary \(its keys: \['ids'\]\); column 'ids_weighted_by_w' needs it"),
    ("missing_crossed_key", lambda: fc.input_layer({"a": [["x"]]}, [fc.indicator_column(fc.crossed_column(
        ["a", "b"], 5))]), ValueError, r"Feature 'b' is not in the features dictionary .*; column 'a_X_b' needs it"),
    ("numeric_of_strings", lambda: fc.input_layer({"age": [["x"]]}, [fc.numeric_column("age")]),
     TypeError, r"numeric_column 'age': the feature is string; a numeric column needs integer or float"),
    ("hash_of_floats", lambda: fc.input_layer({"a": [[1.5]]}, [fc.indicator_column(
        fc.categorical_column_with_hash_bucket("a", 3))]), ValueError, r"feature 'a' is float32; categorical"),
    ("vocabulary_of_ints", lambda: fc.input_layer({"a": [[1]]}, [fc.indicator_column(
        fc.categorical_column_with_vocabulary_list("a", ["x"]))]), ValueError,
     r"key: a, column dtype: string, tensor dtype: int32"),
    ("identity_of_strings", lambda: fc.input_layer({"a": [["x"]]}, [fc.indicator_column(
        fc.categorical_column_with_identity("a", 3))]), ValueError, r"Invalid input, not integer. key: a"),
    ("weights_of_ints", lambda: fc.linear_model({"ids": [[1]], "w": [[1]]}, [fc.weighted_categorical_column(
        fc.categorical_column_with_identity("ids", 3), "w")]), ValueError, r"expected float32, but got int32 "
                                                                            r"\(weight feature 'w'\)"),
    ("rank_zero_feature", lambda: fc.input_layer({"a": 1.0}, [fc.numeric_column("a")]),
     ValueError, r"Feature \(key: a\) cannot have rank 0"),
    ("features_not_a_dict", lambda: fc.input_layer([1.0], [fc.numeric_column("a")]), TypeError,
     r"features must be a dict"),
    ("categorical_in_input_layer", lambda: fc.input_layer({"a": [[1]]}, [fc.categorical_column_with_identity("a", 3)]),
     ValueError, r"wrap a categorical column with an embedding_column or indicator_column"),
    ("empty_columns", lambda: fc.input_layer({"a": [[1]]}, []), ValueError, r"feature_columns must not be empty"),
    ("bad_combiner", lambda: fc.linear_model({"a": [[1]]}, [fc.categorical_column_with_identity("a", 3)],
                                             sparse_combiner="max"), ValueError, r"sparse_combiner must be one of"),
    ("vocabulary_file_too_short", lambda: fc.input_layer({"a": [["x"]]}, [fc.indicator_column(
        fc.categorical_column_with_vocabulary_file("a", __file__, vocabulary_size=10 ** 6))]), ValueError,
     r"has \d+ lines, fewer than vocabulary_size 1000000"),
]


@pytest.mark.parametrize("name,build,error,message", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_one_clear_error(name, build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            build()


def test_vocabulary_file_with_a_repeated_key(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("a\nb\na\n")
    with tf.Graph().as_default():
        column = fc.indicator_column(fc.categorical_column_with_vocabulary_file("w", str(words)))
        with pytest.raises(ValueError, match=r"words.txt of column w has the key b'a' twice"):
            fc.input_layer({"w": [["a"]]}, [column])


@pytest.mark.parametrize("fed", [[["hello"], ["a"]], ["hello", "a"]], ids=["rank2", "rank1"])
def test_features_of_unknown_rank(fed):
    # a rank-1 feature gets a second dimension when it runs (TF's cond on the rank)
    with tf.Graph().as_default():
        number, word = tf.placeholder(tf.float32), tf.placeholder(tf.string)
        table = lambda shape, dtype=None, partition_info=None: tf.reshape(tf.range(1000.0), shape)  # noqa: E731
        out = fc.input_layer({"x": number, "w": word}, [
            fc.numeric_column("x"), fc.embedding_column(fc.categorical_column_with_hash_bucket("w", 1000), 1,
                                                        initializer=table)])
        got = _run(out, {number: np.array([[1.0], [2.0]]).reshape(np.shape(fed)), word: fed})
    np.testing.assert_array_equal(got, [[296.0, 1.0], [939.0, 2.0]])  # "w_embedding" sorts before "x"


def test_embedding_initialised_from_a_checkpoint(tmp_path):
    table = np.arange(10, dtype=np.float32).reshape(5, 2) / 4
    with tf.Graph().as_default():
        saved = tf.get_variable("old/table", initializer=table)
        with tf.Session() as s:
            s.run(saved.initializer)
            path = tf.train.Saver([saved]).save(s, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default():
        column = fc.embedding_column(fc.categorical_column_with_identity("ids", 5), 2, combiner="sum",
                                     ckpt_to_load_from=path, tensor_name_in_ckpt="old/table")
        out = fc.input_layer({"ids": np.array([[4, 1], [0, -1]], np.int64)}, [column])
        np.testing.assert_allclose(_run(out), [table[4] + table[1], table[0]])


def test_shared_embedding_columns_share_one_table():
    with tf.Graph().as_default():
        a, b = fc.shared_embedding_columns([fc.categorical_column_with_identity("b", 4),
                                            fc.categorical_column_with_identity("a", 4)], 3, combiner="sum",
                                           initializer=_constant_init(TABLE))
        assert (a.name, b.name) == ("b_shared_embedding", "a_shared_embedding")
        out = fc.input_layer({"a": np.array([[1]], np.int64), "b": np.array([[3, 2]], np.int64)}, [a, b])
        assert [v.op.name for v in tf.global_variables()] == ["input_layer/a_b_shared_embedding/embedding_weights"]
        assert tf.get_collection("a_b_shared_embedding") == tf.global_variables()
        np.testing.assert_allclose(_run(out), [np.concatenate([TABLE[1], TABLE[3] + TABLE[2]])])
