"""Against real TensorFlow's tf.compat.v1.feature_column: the same outputs, variables and gradients.

Each row builds `columns` over `features` (Tensors, SparseTensors or placeholders) and runs
input_layer or linear_model in both libraries, with every trainable variable set to the same
values (assigned after initialisation), and compares: the model's output, the variables' names
and shapes, the gradients of a weighted sum of the output with respect to every variable
(IndexedSlices densified), and which collections hold the variables. Error rows compare the
error class a bad input raises.
"""

import numpy as np
import pytest

from tests.differential.table import SnippetRow, compare, expand, oracle_fixture
from tests.tf_oracle import run_in_tftk

_MODEL = '''
fc = tf.feature_column
{setup}
features = {features}
columns = {columns}
out = fc.{model}(features, columns, {kwargs})
tvars = sorted(tf.trainable_variables(), key=lambda v: v.name)
values = [np.cos(np.arange(int(np.prod(v.shape.as_list()))) * 0.37 + 0.1).reshape(v.shape.as_list())
          .astype(np.float32) for v in tvars]
assigns = [v.assign(x) for v, x in zip(tvars, values)]
w = tf.cos(tf.cast(tf.reshape(tf.range(tf.size(out)), tf.shape(out)), out.dtype) * 0.7 + 0.3)
grads = tf.gradients(tf.reduce_sum(out * w), tvars)
feed = {feed}
with tf.Session() as s:
    s.run([tf.global_variables_initializer(), tf.tables_initializer()])
    s.run(assigns)
    outputs = {{"out": s.run(out, feed), "static_shape": np.array([-1 if d is None else d for d in out.shape.as_list()]),
               "vars": np.array([v.op.name + str(v.shape.as_list()) for v in tvars] or ["none"]),
               "model_vars": np.array(sorted(v.op.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) or ["none"]),
               "global_vars": np.array(sorted(v.op.name for v in tf.global_variables()) or ["none"])}}
    for v, g in zip(tvars, grads):
        key = "grad_" + v.op.name.replace("/", "__")
        outputs[key] = np.array("None") if g is None else s.run(tf.convert_to_tensor(g), feed)
'''


def model_row(name: str, columns: str, features: str, model: str = "input_layer", kwargs: str = "",
              setup: str = "", feed: str = "None", inputs: dict | None = None) -> SnippetRow:
    return SnippetRow(name, _MODEL.format(setup=setup, features=features, columns=columns, model=model,
                                          kwargs=kwargs, feed=feed), inputs or {})


def error_row(name: str, body: str, inputs: dict | None = None) -> SnippetRow:
    return SnippetRow(name, "fc = tf.feature_column\n" + body, inputs or {})


def _strings(*values: str) -> np.ndarray:
    return np.array([v.encode() for v in values]).reshape(-1, 1)


CITY = _strings("sf", "nyc", "", "la")                     # '' is a missing value
TAGS = ("tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1], [3, 2]], "
        "['a', 'b', 'zz', 'b', 'a', 'qq'], [4, 3])")        # row 1 is empty
TAG_WEIGHTS = "tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0], [3, 1], [3, 2]], [0.5, 2.0, 1.5, 1.0, -1.0, 3.0], [4, 3])"
IDS = "tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]], tf.constant([1, 4, 2, 0, 9], tf.int64), [4, 2])"
BASE = {"age": np.array([[1.0], [5.0], [10.0], [-3.0]], np.float32), "city": CITY,
        "pair": np.array([[0.5, 3.0], [2.0, -1.0], [7.0, 7.0], [1.0, 2.0]], np.float32)}
FEATURES = ("{'age': tf.constant(inputs['age']), 'city': tf.constant(inputs['city']), 'tags': " + TAGS +
            ", 'tag_w': " + TAG_WEIGHTS + ", 'ids': " + IDS + ", 'pair': tf.constant(inputs['pair'])}")

ROWS = [
    model_row("numeric_columns",
              "[fc.numeric_column('age', normalizer_fn=lambda x: x * 2.0 - 1.0), fc.numeric_column('pair', shape=2),"
              " fc.numeric_column('n', dtype=tf.int64), fc.numeric_column('grid', shape=(2, 3))]",
              "dict(age=tf.constant(inputs['age']), pair=tf.constant(inputs['pair']), n=tf.constant([3, 1, 4, 1], "
              "tf.int64), grid=tf.constant(np.arange(24.0).reshape(4, 2, 3), tf.float32))", inputs=BASE),
    model_row("bucketized_columns",
              "[fc.bucketized_column(fc.numeric_column('age'), [0.0, 2.0, 6.0]),"
              " fc.bucketized_column(fc.numeric_column('pair', shape=2), [1.0, 2.0])]", FEATURES, inputs=BASE),
    model_row("bucketized_at_float32_boundaries",
              "[fc.bucketized_column(fc.numeric_column('v', dtype=tf.float64), [-1e-8, 0.1, 0.3, 0.7])]",
              "{'v': tf.constant(inputs['v'])}",
              inputs={"v": np.array([[0.0], [-1e-8], [0.1], [0.3], [0.30000001192092896], [0.29999998],
                                     [0.7000000000000001], [0.69999999]], np.float64)}),
    model_row("indicator_vocabulary_oov",
              "[fc.indicator_column(fc.categorical_column_with_vocabulary_list('city', ['sf', 'nyc'], num_oov_buckets=3)),"
              " fc.indicator_column(fc.categorical_column_with_vocabulary_list('tags', ['b', 'a', 'c']))]",
              FEATURES, inputs=BASE),
    model_row("indicator_int_vocabulary",
              "[fc.indicator_column(fc.categorical_column_with_vocabulary_list('k', [10, 20, 30], num_oov_buckets=2)),"
              " fc.indicator_column(fc.categorical_column_with_vocabulary_list('j', [7, 3], default_value=1))]",
              "{'k': tf.constant([[10, -1], [30, 99], [20, 12345], [-1, -1]], tf.int64),"
              " 'j': tf.constant([[3], [5], [7], [3]], tf.int32)}"),
    model_row("indicator_identity_and_hash",
              "[fc.indicator_column(fc.categorical_column_with_identity('ids', 10)),"
              " fc.indicator_column(fc.categorical_column_with_identity('small', 3, default_value=0)),"
              " fc.indicator_column(fc.categorical_column_with_hash_bucket('tags', 7)),"
              " fc.indicator_column(fc.categorical_column_with_hash_bucket('num', 5, dtype=tf.int64))]",
              FEATURES[:-1] + ", 'small': tf.constant([[0, 5], [2, -1], [-7, 1], [1, 1]]),"
              " 'num': tf.constant([[12], [-1], [77777], [3]], tf.int64)}", inputs=BASE),
    model_row("indicator_weighted",
              "[fc.indicator_column(fc.weighted_categorical_column("
              "fc.categorical_column_with_vocabulary_list('tags', ['a', 'b']), 'tag_w'))]", FEATURES, inputs=BASE),
    model_row("crossed_columns",
              "[fc.indicator_column(fc.crossed_column(['city', 'tags'], 13)),"
              " fc.indicator_column(fc.crossed_column([fc.bucketized_column(fc.numeric_column('age'), [0.0, 6.0]),"
              " 'city'], 11, hash_key=12345)),"
              " fc.indicator_column(fc.crossed_column([fc.crossed_column(['city', 'ids'], 1000), 'tags'], 17)),"
              " fc.indicator_column(fc.crossed_column([fc.categorical_column_with_identity('ids', 10), 'city',"
              " fc.categorical_column_with_vocabulary_list('tags', ['a', 'b'], num_oov_buckets=1)], 19))]",
              FEATURES, inputs=BASE),
    model_row("crossed_ids_are_tf_buckets",
              "[fc.embedding_column(fc.crossed_column(['city', 'tags'], 2 ** 20), 1,"
              " initializer=lambda shape, dtype=None, partition_info=None: tf.reshape(tf.cast(tf.range(2 ** 20),"
              " tf.float32), shape))]",
              # city fed: with only constants TF's shape inference runs the cross and knows the batch size
              FEATURES.replace("tf.constant(inputs['city'])", "tf.placeholder(tf.string, [None, 1])"),
              feed="{features['city']: inputs['city']}", inputs=BASE),
    *[model_row(f"embedding_{combiner}",
                f"[fc.embedding_column(fc.categorical_column_with_hash_bucket('tags', 6), 3, combiner='{combiner}'),"
                f" fc.embedding_column(fc.weighted_categorical_column(fc.categorical_column_with_identity('ids', 10),"
                f" 'id_w'), 2, combiner='{combiner}'),"
                f" fc.embedding_column(fc.categorical_column_with_vocabulary_list('city', ['la', 'sf']), 4,"
                f" combiner='{combiner}', max_norm=0.9)]",
                FEATURES[:-1] + ", 'id_w': tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1]],"
                " [1.0, 0.5, -2.0, 3.0, 0.25], [4, 2])}", inputs=BASE)
      for combiner in ("mean", "sqrtn", "sum")],
    *[model_row(f"linear_model_{combiner}",
                "[fc.numeric_column('age'), fc.numeric_column('pair', shape=2),"
                " fc.bucketized_column(fc.numeric_column('age'), [0.0, 6.0]),"
                " fc.categorical_column_with_vocabulary_list('city', ['sf', 'nyc'], num_oov_buckets=2),"
                " fc.weighted_categorical_column(fc.categorical_column_with_hash_bucket('tags', 5), 'tag_w'),"
                " fc.crossed_column(['city', 'tags'], 9), fc.categorical_column_with_identity('ids', 10),"
                " fc.embedding_column(fc.categorical_column_with_identity('ids', 10), 2)]",
                FEATURES, model="linear_model", kwargs=f"units={units}, sparse_combiner='{combiner}'", inputs=BASE)
      for combiner, units in (("sum", 1), ("mean", 3), ("sqrtn", 2))],
    *[model_row(f"shared_embeddings_{model}",
                "fc.shared_embedding_columns([fc.categorical_column_with_identity('ids', 10),"
                " fc.weighted_categorical_column(fc.categorical_column_with_identity('more', 10), 'more_w')], 3,"
                " combiner='sqrtn') + fc.shared_embedding_columns([fc.categorical_column_with_hash_bucket('tags', 4),"
                " fc.categorical_column_with_vocabulary_list('city', ['sf', 'nyc', 'la', 'x'])], 2,"
                " shared_embedding_collection_name='words') + [fc.numeric_column('age')]",
                FEATURES[:-1] + ", 'more': tf.SparseTensor([[0, 0], [2, 0], [2, 1]], tf.constant([9, 1, 1], tf.int64),"
                " [4, 2]), 'more_w': tf.SparseTensor([[0, 0], [2, 0], [2, 1]], [2.0, 0.5, 1.5], [4, 2])}",
                model=model, inputs=BASE) for model in ("input_layer", "linear_model")],
    model_row("placeholders_fed",
              "[fc.numeric_column('age'), fc.indicator_column(fc.categorical_column_with_vocabulary_list('city',"
              " ['sf', 'la'])), fc.embedding_column(fc.categorical_column_with_hash_bucket('tags', 4), 2)]",
              "{'age': tf.placeholder(tf.float32, [None, 1]), 'city': tf.placeholder(tf.string, [None, 1]),"
              " 'tags': tf.sparse_placeholder(tf.string)}",
              setup="import collections",
              feed="{features['age']: inputs['age'], features['city']: inputs['city'], features['tags']:"
                   " tf.SparseTensorValue([[0, 0], [2, 1], [3, 0]], [b'x', b'y', b'x'], [4, 2])}", inputs=BASE),
    model_row("rank_one_features",
              "[fc.numeric_column('age'), fc.indicator_column(fc.categorical_column_with_hash_bucket('word', 5)),"
              " fc.indicator_column(fc.categorical_column_with_identity('sp', 4))]",
              "{'age': tf.constant([1.0, 2.0, 3.0]), 'word': tf.constant(['a', '', 'c']),"
              " 'sp': tf.SparseTensor([[0], [2]], tf.constant([3, 1], tf.int64), [3])}"),
    model_row("input_layer_twice_and_trainable",
              "[fc.embedding_column(fc.categorical_column_with_identity('ids', 10), 2, trainable=False,"
              " initializer=tf.constant_initializer(0.25)),"
              " fc.embedding_column(fc.categorical_column_with_hash_bucket('tags', 3), 2)]",
              FEATURES, setup="fc.input_layer(" + FEATURES + ", [fc.embedding_column("
              "fc.categorical_column_with_identity('ids', 10), 3)], weight_collections=['mine'])", inputs=BASE),
    SnippetRow("cols_to_vars",
               "fc = tf.feature_column\nc2v, lm = {}, {}\n"
               "emb = fc.embedding_column(fc.categorical_column_with_identity('ids', 10), 2)\n"
               "cols = [fc.numeric_column('age'), emb]\n"
               "features = {'age': tf.constant([[1.0]]), 'ids': tf.SparseTensor([[0, 0]], tf.constant([1], tf.int64), [1, 1])}\n"
               "fc.input_layer(features, cols, cols_to_vars=c2v)\n"
               "fc.linear_model(features, cols + [fc.categorical_column_with_identity('ids', 10)], cols_to_vars=lm)\n"
               "name = lambda c: c if isinstance(c, str) else c.name\n"
               "outputs = {'input_layer': np.array(sorted(name(c) + ':' + ','.join(v.op.name for v in vs) for c, vs in c2v.items())),"
               " 'linear_model': np.array(sorted(name(c) + ':' + ','.join(v.op.name for v in vs) for c, vs in lm.items()))}\n"),
    SnippetRow("vocabulary_file",
               "import os, tempfile\nfc = tf.feature_column\nd = tempfile.mkdtemp()\n"
               "open(os.path.join(d, 'v.txt'), 'w').write('sf\\nnyc\\nla\\nboston\\n')\n"
               "open(os.path.join(d, 'n.txt'), 'w').write('5\\n7\\n-2\\n')\n"
               "cols = [fc.indicator_column(fc.categorical_column_with_vocabulary_file('city', os.path.join(d, 'v.txt'),"
               " vocabulary_size=3, num_oov_buckets=2)),"
               " fc.indicator_column(fc.categorical_column_with_vocabulary_file('n', os.path.join(d, 'n.txt'),"
               " dtype=tf.int64, default_value=0))]\n"
               "out = fc.input_layer({'city': tf.constant(inputs['city']), 'n': tf.constant([[7], [-2], [3], [-1]],"
               " tf.int64)}, cols)\n"
               "with tf.Session() as s:\n    s.run(tf.tables_initializer())\n"
               "    outputs = {'out': s.run(out), 'buckets': np.array([c.categorical_column._num_buckets for c in cols])}\n",
               {"city": _strings("la", "boston", "", "nyc")}),
    SnippetRow("parse_example_spec",
               "fc = tf.feature_column\n"
               "cols = [fc.numeric_column('age', default_value=0.5), fc.numeric_column('pair', shape=2, dtype=tf.int64),"
               " fc.bucketized_column(fc.numeric_column('age', default_value=0.5), [1.0]),"
               " fc.embedding_column(fc.categorical_column_with_vocabulary_list('city', ['a']), 2),"
               " fc.indicator_column(fc.weighted_categorical_column(fc.categorical_column_with_identity('ids', 3), 'w')),"
               " fc.indicator_column(fc.crossed_column(['x', fc.categorical_column_with_hash_bucket('h', 4,"
               " dtype=tf.int32)], 5))]\n"
               "spec = fc.make_parse_example_spec(cols)\n"
               "ex = tf.train.Example(features=tf.train.Features(feature={"
               "'pair': tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 4])),"
               "'city': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'a', b'q'])),"
               "'ids': tf.train.Feature(int64_list=tf.train.Int64List(value=[2, 0])),"
               "'w': tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, 2.0])),"
               "'x': tf.train.Feature(bytes_list=tf.train.BytesList(value=[b'u'])),"
               "'h': tf.train.Feature(int64_list=tf.train.Int64List(value=[9]))}))\n"
               "parsed = tf.parse_example(tf.constant([ex.SerializeToString()] * 2), spec)\n"
               "out = fc.input_layer(parsed, [c for c in cols if not hasattr(c, 'dimension')])\n"
               "with tf.Session() as s:\n"
               "    outputs = {'spec': np.array(sorted(k + ':' + type(v).__name__ + ':' + v.dtype.name + ':' +"
               " str(getattr(v, 'shape', '')) + ':' + str(getattr(v, 'default_value', '')) for k, v in spec.items())),"
               " 'out': s.run(out)}\n"),
    SnippetRow("hash_buckets_many_strings",
               "x = tf.constant(inputs['s'])\n"
               "ops = [tf.string_to_hash_bucket_fast(x, 1000), tf.strings.to_hash_bucket_fast(x, 2 ** 62),"
               " tf.string_to_hash_bucket_strong(x, 997, [7, -2 ** 63 + 11]),"
               " tf.strings.to_hash_bucket_strong(x, 10, [0, 0]), tf.strings.to_hash_bucket(x, 50)]\n"
               "with tf.Session() as s:\n    outputs = dict(zip('abcde', s.run(ops)))\n",
               {"s": np.array([bytes(np.random.default_rng(n).integers(1, 256, n, dtype=np.uint8))
                               for n in list(range(0, 80)) + [127, 128, 129, 200, 256, 1000]] +
                              ["hello".encode(), "日本語のテキスト".encode(), ("é" * 40).encode()], dtype=object)
               .astype(bytes)}),
    SnippetRow("sparse_cross",
               "a = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], ['x', 'y', 'z', 'x'], [4, 2])\n"
               "b = tf.SparseTensor([[0, 0], [1, 0], [2, 0], [2, 1], [3, 0]], tf.constant([3, 1, -4, 12, 0], tf.int64), [4, 2])\n"
               "d = tf.constant([['p'], ['q'], [''], ['p']])\n"
               "n = tf.constant([[7, 8], [9, 10], [11, 12], [0, 1]], tf.int64)\n"
               "ops = [tf.sparse.cross_hashed([a, b], 100), tf.sparse.cross_hashed([d, a, n]),"
               " tf.sparse.cross_hashed([n, d], 2 ** 40, hash_key=99), tf.sparse.cross([a, b, d]), tf.sparse.cross([n, a])]\n"
               "with tf.Session() as s:\n    r = s.run(ops)\n"
               "outputs = {}\nfor i, v in enumerate(r):\n"
               "    values = v.values.astype('S') if v.values.dtype == object else v.values\n"
               "    outputs.update({'i%d' % i: v.indices, 'v%d' % i: values, 's%d' % i: v.dense_shape})\n"),
    SnippetRow("embedding_lookup_sparse_ops",
               "p = tf.constant(np.arange(15.0).reshape(5, 3) / 7.0)\n"
               "ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]], tf.constant([1, 3, -1, 4, 4, 0], tf.int64), [5, 3])\n"
               "w = tf.SparseTensor([[0, 0], [0, 1], [1, 0], [3, 0], [3, 1], [3, 2]], tf.constant([1.0, 2.0, 3.0, 0.5, -1.0, 2.0], tf.float64), [5, 3])\n"
               "ok = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 1], tf.int64), [3, 2])\n"
               "okw = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1.0, 2.0, 0.5], tf.float64), [3, 2])\n"
               "ops = [tf.nn.safe_embedding_lookup_sparse(p, ids, w, combiner=c) for c in ('sum', 'mean', 'sqrtn')]\n"
               "ops += [tf.nn.safe_embedding_lookup_sparse(p, ids, None, combiner='mean', default_id=2)]\n"
               "ops += [tf.nn.embedding_lookup_sparse(p, ok, okw, combiner=c) for c in ('sum', 'mean', 'sqrtn')]\n"
               "ops += [tf.nn.embedding_lookup_sparse(p, ok, None, combiner='sqrtn')]\n"
               "grads = tf.gradients([tf.reduce_sum(o * o) for o in ops], [p])\n"
               "with tf.Session() as s:\n    r = s.run(ops + [tf.convert_to_tensor(grads[0]), tf.tables_initializer(),"
               " tf.initializers.tables_initializer()])\n"
               "outputs = {'o%d' % i: v for i, v in enumerate(r[:-2])}\n"),
    *[SnippetRow(f"training_{opt}",
                 "fc = tf.feature_column\nfeatures = " + FEATURES + "\n"
                 "city = fc.categorical_column_with_vocabulary_list('city', ['sf', 'nyc'], num_oov_buckets=1)\n"
                 "tags = fc.categorical_column_with_hash_bucket('tags', 5)\n"
                 "wide = fc.linear_model(features, [city, tags, fc.crossed_column(['city', 'tags'], 7),"
                 " fc.bucketized_column(fc.numeric_column('age'), [0.0, 4.0])], units=1)\n"
                 "deep = tf.matmul(fc.input_layer(features, [fc.numeric_column('age'), fc.embedding_column(tags, 2),"
                 " fc.indicator_column(city)]), tf.get_variable('deep_w', [6, 1]))\n"
                 "loss = tf.reduce_mean(tf.square(wide + deep - tf.constant([[1.0], [0.0], [2.0], [-1.0]])))\n"
                 f"train = {call}.minimize(loss)\n"
                 "tvars = sorted(tf.trainable_variables(), key=lambda v: v.name)\n"
                 "assigns = [v.assign(np.cos(np.arange(int(np.prod(v.shape.as_list()))) * 0.37 + 0.1)"
                 ".reshape(v.shape.as_list()).astype(np.float32) * 0.3) for v in tvars]\n"
                 "with tf.Session() as s:\n"
                 "    s.run([tf.global_variables_initializer(), tf.tables_initializer()])\n    s.run(assigns)\n"
                 "    losses = [s.run([loss, train])[0] for _ in range(15)]\n"
                 "    outputs = {'losses': np.array(losses)}\n"
                 "    outputs.update({v.op.name.replace('/', '__'): s.run(v) for v in tvars})\n", BASE)
      for opt, call in (("sgd", "tf.train.GradientDescentOptimizer(0.1)"),
                        ("adagrad", "tf.train.AdagradOptimizer(0.3)"),
                        ("ftrl", "tf.train.FtrlOptimizer(0.2, l1_regularization_strength=0.01)"))],
    # ---- bad input: the same error class as TensorFlow ------------------------------------------
    error_row("missing_key", "fc.input_layer({'age': tf.constant([[1.0]])}, [fc.numeric_column('agee')])\n"),
    error_row("missing_weight_key", "fc.linear_model({'ids': tf.constant([[1]])}, [fc.weighted_categorical_column("
                                    "fc.categorical_column_with_identity('ids', 3), 'w')])\n"),
    error_row("numeric_from_sparse", "fc.input_layer({'a': tf.SparseTensor([[0, 0]], [1.0], [1, 1])},"
                                     " [fc.numeric_column('a')])\n"),
    error_row("identity_from_strings", "fc.input_layer({'a': tf.constant([['x']])}, [fc.indicator_column("
                                       "fc.categorical_column_with_identity('a', 3))])\n"),
    error_row("vocabulary_dtype_mismatch", "fc.input_layer({'a': tf.constant([[1]])}, [fc.indicator_column("
                                           "fc.categorical_column_with_vocabulary_list('a', ['x']))])\n"),
    error_row("hash_from_floats", "fc.input_layer({'a': tf.constant([[1.5]])}, [fc.indicator_column("
                                  "fc.categorical_column_with_hash_bucket('a', 3))])\n"),
    error_row("categorical_in_input_layer", "fc.input_layer({'a': tf.constant([[1]])},"
                                            " [fc.categorical_column_with_identity('a', 3)])\n"),
    error_row("batch_size_mismatch", "fc.input_layer({'a': tf.constant([[1.0], [2.0]]), 'b': tf.constant([[1.0]])},"
                                     " [fc.numeric_column('a'), fc.numeric_column('b')])\n"),
    error_row("duplicate_columns", "fc.input_layer({'a': tf.constant([[1.0]])}, [fc.numeric_column('a'),"
                                   " fc.numeric_column('a')])\n"),
    *[error_row(f"constructor_{i}", f"{call}\n") for i, call in enumerate([
        "fc.numeric_column('a', shape=0)", "fc.numeric_column('a', dtype=tf.string)",
        "fc.numeric_column('a', shape=2, default_value=[1.0])", "fc.numeric_column('a', default_value='x')",
        "fc.bucketized_column(fc.numeric_column('a'), [2.0, 1.0])",
        "fc.bucketized_column(fc.numeric_column('a', shape=(2, 2)), [1.0])",
        "fc.categorical_column_with_vocabulary_list('a', ['x', 'x'])",
        "fc.categorical_column_with_vocabulary_list('a', ['x'], default_value=0, num_oov_buckets=2)",
        "fc.categorical_column_with_identity('a', 3, default_value=3)",
        "fc.categorical_column_with_hash_bucket('a', 0)",
        "fc.crossed_column(['a'], 10)",
        "fc.crossed_column(['a', fc.categorical_column_with_hash_bucket('b', 3)], 10)",
        "fc.embedding_column(fc.categorical_column_with_identity('a', 3), 0)",
        "fc.embedding_column(fc.categorical_column_with_identity('a', 3), 2, ckpt_to_load_from='x')",
        "fc.shared_embedding_columns([fc.categorical_column_with_identity('a', 3),"
        " fc.categorical_column_with_identity('b', 4)], 2)",
        "fc.shared_embedding_columns([fc.categorical_column_with_identity('a', 3),"
        " fc.categorical_column_with_hash_bucket('b', 3)], 2)",
        "fc.weighted_categorical_column(fc.categorical_column_with_identity('a', 3), 'w', dtype=tf.string)",
        "fc.categorical_column_with_vocabulary_file('a', '/nonexistent/vocab.txt')",
    ])],
]

CASES = expand(ROWS)
oracle = oracle_fixture(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_feature_column_matches_tensorflow(oracle, name):
    compare(run_in_tftk(*CASES[name]), oracle[name])
