"""Against real TensorFlow: the behaviours issue 13 found different (hash buckets, quantize modes,
batch return types, build-time type errors, feeds of the wrong type, ops on another graph's tensors)."""

import itertools

import numpy as np
import pytest

from tests.differential.table import SnippetRow, compare, expand, oracle_fixture
from tests.tf_oracle import run_in_tftk

STRINGS = ["hello", "world", "a", "", "b" * 16, "c" * 17, "d" * 33, "e" * 64, "f" * 65, "g" * 200, "h\u00e9llo"]
ROWS = [
    SnippetRow("hash_buckets",
               "x = tf.constant(inputs['s'])\n"
               "ops = [tf.string_to_hash_bucket_fast(x, 1000), tf.string_to_hash_bucket_fast(x, 7),"
               " tf.string_to_hash_bucket(x, 1000), tf.string_to_hash_bucket_strong(x, 1000, [1, 2]),"
               " tf.string_to_hash_bucket_strong(x, 2 ** 31, [2 ** 62 + 5, 17])]\n"
               "with tf.Session() as s:\n    outputs = dict(zip('abcde', s.run(ops)))\n"
               "outputs['types'] = np.array([o.op.type for o in ops])\n",
               {"s": np.array([s.encode() for s in STRINGS], dtype=object).astype(bytes)}),
]

X = [-1.0, -0.3, 0.0, 0.26, 0.5, 1.0, 1.7, 2.0, 2.5, 0.0039, -2.999]
for (T, (lo, hi), mode) in itertools.product(["quint8", "qint8", "qint16", "quint16"],
                                              [(-1.0, 2.0), (0.0, 1.0), (0.5, 3.0), (-3.0, 1.0), (0.0, 0.001)],
                                              ["MIN_COMBINED", "MIN_FIRST", "SCALED"]):
    variants = [(False, "HALF_AWAY_FROM_ZERO")] + ([(True, "HALF_AWAY_FROM_ZERO"), (False, "HALF_TO_EVEN")]
                                                  if mode == "SCALED" else [])
    for narrow, rounding in variants:
        ROWS.append(SnippetRow(
            f"quantize_{T}_{lo}_{hi}_{mode}_{int(narrow)}_{rounding}".replace(".", "p").replace("-", "m"),
            f"q = tf.quantize(tf.constant({X}), {lo}, {hi}, tf.{T}, mode='{mode}', round_mode='{rounding}',"
            f" narrow_range={narrow})\n"
            "with tf.Session() as s:\n    r = s.run(q)\n"
            "outputs = {'fields': np.array(type(q).__name__ + ':' + ','.join(q._fields)),"
            " 'q': r.output.astype(np.int64), 'lo': r.output_min, 'hi': r.output_max}\n"))
ROWS += [
    SnippetRow("batch_return_types",
               "one = tf.train.batch([tf.constant([1, 2])], 2)\ntwo = tf.train.batch([tf.constant([1, 2]), tf.constant(3)], 2)\n"
               "d = tf.train.batch({'b': tf.constant([1, 2]), 'a': tf.constant(3)}, 2)\n"
               "sb = tf.train.shuffle_batch((tf.constant([1.0]),), 4, 10, 2)\n"
               "outputs = {'types': np.array([type(one).__name__ in ('Tensor', 'SymbolicTensor'), type(two).__name__,"
               " type(sb).__name__ in ('Tensor', 'SymbolicTensor'), str(sb.shape)]),"
               " 'dict': np.array([k + str(v.shape) for k, v in sorted(d.items())]),"
               " 'order': np.array([d['a'].value_index, d['b'].value_index])}\n"),
    SnippetRow("string_variable_plus_int", "v = tf.Variable('abc')\nv + 1\n"),
    SnippetRow("string_constant_from_int", "tf.constant(5, dtype=tf.string)\n"),
    SnippetRow("none_is_no_tensor", "tf.convert_to_tensor(None)\n"),
    SnippetRow("none_constant", "tf.constant(None)\n"),
    SnippetRow("string_concat_is_fine",
               "x = tf.constant('ab') + 'cd'\nwith tf.Session() as s:\n    outputs = {'x': np.array(s.run(x))}\n"),
    SnippetRow("feed_int_into_string",
               "p = tf.placeholder(tf.string)\nwith tf.Session() as s:\n    s.run(p, {p: 5})\n"),
    SnippetRow("feed_overflowing_int",
               "p = tf.placeholder(tf.int8)\nwith tf.Session() as s:\n    s.run(p, {p: 300})\n"),
    SnippetRow("feed_int_into_float",
               "p = tf.placeholder(tf.float32)\nwith tf.Session() as s:\n    outputs = {'p': s.run(p, {p: 5})}\n"),
    SnippetRow("ops_build_in_the_operands_graph",
               "g = tf.Graph()\nwith g.as_default():\n    a = tf.constant(3.0)\n"
               "b, c, d = a * 2, tf.add(a, 2.0), 2.0 - a\n"
               "with tf.Session(graph=g) as s:\n    values = s.run([b, c, d])\n"
               "outputs = {'graphs': np.array([t.graph is g for t in (b, c, d)] + [tf.get_default_graph() is g]),"
               " 'values': np.array(values)}\n"),
    SnippetRow("files_ops",
               "import os, tempfile\nd = tempfile.mkdtemp()\n"
               "for n in 'bca':\n    open(os.path.join(d, n + '.txt'), 'w').write(n * 3)\n"
               "v = tf.train.match_filenames_once(os.path.join(d, '*.txt'))\nv2 = tf.train.match_filenames_once(d + '/b*', name='files')\n"
               "r = tf.read_file(os.path.join(d, 'a.txt'))\nw = tf.write_file(os.path.join(d, 'sub', 'z.txt'), 'zz')\n"
               "m = tf.matching_files([os.path.join(d, 'c*'), os.path.join(d, 'a*')])\n"
               "with tf.Session() as s:\n    s.run(tf.local_variables_initializer())\n"
               "    files, read, matched = s.run([v, r, m])\n    s.run(w)\n"
               "outputs = {'files': np.array([os.path.basename(f) for f in files]), 'read': np.array(read),"
               " 'matched': np.array([os.path.basename(f) for f in matched]),"
               " 'written': np.array(open(os.path.join(d, 'sub', 'z.txt')).read()),"
               " 'names': np.array([v.op.name, v2.op.name, str(v.shape), str(m.shape), str(r.shape)]),"
               " 'local': np.array([x.op.name for x in tf.local_variables()])}\n"),
    SnippetRow("read_missing_file",
               "with tf.Session() as s:\n    s.run(tf.read_file('/nonexistent/tftk-file'))\n"),
    SnippetRow("mixing_graphs_fails",
               "g = tf.Graph()\nwith g.as_default():\n    a = tf.constant(3.0)\na + tf.constant(1.0)\n"),
]

CASES = expand(ROWS)
# The quick tier takes 8-bit types over three ranges; the slow tier the 16-bit types and the rest.
SLOW = sorted(n for n in CASES if n.startswith("quantize_") and ("16" in n or "_3p0_1p0_" in n or "0p001" in n))
QUICK = sorted(set(CASES) - set(SLOW))


oracle_quick = oracle_fixture(CASES, QUICK)
oracle_slow = oracle_fixture(CASES, SLOW)

@pytest.mark.parametrize("name", QUICK)
def test_behaviour_matches_tensorflow(oracle_quick, name):
    compare(run_in_tftk(*CASES[name]), oracle_quick[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_behaviour_matches_tensorflow_all_quantized_types(oracle_slow, name):
    compare(run_in_tftk(*CASES[name]), oracle_slow[name])
