"""tf.nest, the structure/shape/finiteness checks and tf.debugging's aliases against real TensorFlow."""

import collections

import numpy as np

from tests.differential.op_tables import Row, table_tests

NEST = "Point = collections.namedtuple('Point', 'x y')\nimport collections\n"


def row(name: str, body: str, inputs: dict | None = None) -> Row:
    return Row(name, "import collections\nPoint = collections.namedtuple('Point', 'x y')\n" + body, inputs or {})


ROWS = [
    row("nest_flatten", "fetch = {'y': tf.constant(tf.nest.flatten({'b': [1, (2, 3)], 'a': Point(4, {'z': 5, 'c': 6})}))}\n"),
    row("nest_pack", "s = tf.nest.pack_sequence_as({'b': [0, (0, 0)], 'a': 0}, [1, 2, 3, 4])\n"
        "fetch = {'a': tf.constant(s['a']), 'b': tf.constant(tf.nest.flatten(s['b']))}\n"),
    row("nest_map_structure", "s = tf.nest.map_structure(lambda a, b: a * 10 + b, [1, (2, Point(3, 4))], [5, (6, Point(7, 8))])\n"
        "fetch = {'y': tf.constant(tf.nest.flatten(s)), 'kind': tf.constant(type(s[1][1]).__name__)}\n"),
    row("nest_is_nested", "fetch = {'y': tf.constant([tf.nest.is_nested(v) for v in ([1], (), {'a': 1}, 'ab', 3, "
        "Point(1, 2))])}\n"),
    row("nest_same_structure_ok", "tf.nest.assert_same_structure([1, (2, 3)], [4, (5, 6)])\nfetch = {'y': tf.constant(1)}\n"),
    row("nest_same_structure_count", "tf.nest.assert_same_structure([1, (2, 3)], [4, 5])\nfetch = {}\n"),
    row("nest_same_structure_nesting", "tf.nest.assert_same_structure([1, (2, 3)], [(4, 5), 6])\nfetch = {}\n"),
    row("nest_same_structure_types", "tf.nest.assert_same_structure([1, 2], (3, 4))\nfetch = {}\n"),
    row("nest_same_structure_types_unchecked", "tf.nest.assert_same_structure([1, 2], (3, 4), check_types=False)\n"
        "fetch = {'y': tf.constant(0)}\n"),
    row("nest_map_mismatch", "tf.nest.map_structure(lambda a, b: a, [1, 2], [1, [2]])\nfetch = {}\n"),
    row("assert_rank_in_static_ok", "x = tf.constant([[1.0]])\nwith tf.control_dependencies([tf.assert_rank_in(x, [1, 2])]):\n"
        "    y = tf.identity(x)\nfetch = {'y': y}\n"),
    row("assert_rank_in_static_bad", "tf.assert_rank_in(tf.constant([1.0]), [0, 2])\nfetch = {}\n"),
    row("assert_rank_in_dynamic_bad", "x = tf.placeholder_with_default(tf.constant([1.0]), None)\n"
        "with tf.control_dependencies([tf.debugging.assert_rank_in(x, [0, 2])]):\n    y = tf.identity(x)\nfetch = {'y': y}\n"),
    row("assert_same_float_dtype", "fetch = {'y': tf.constant(tf.assert_same_float_dtype([tf.constant(1.0, tf.float64)]).name)}\n"),
    row("assert_same_float_dtype_mixed", "tf.assert_same_float_dtype([tf.constant(1.0), tf.constant(1.0, tf.float64)])\nfetch = {}\n"),
    row("assert_same_float_dtype_int", "tf.debugging.assert_same_float_dtype([tf.constant(1)])\nfetch = {}\n"),
    row("assert_same_float_dtype_empty", "fetch = {'y': tf.constant(tf.assert_same_float_dtype().name)}\n"),
    row("assert_proper_iterable_ok", "tf.assert_proper_iterable([1, 2])\ntf.assert_proper_iterable((x for x in []))\n"
        "fetch = {'y': tf.constant(0)}\n"),
    row("assert_proper_iterable_tensor", "tf.assert_proper_iterable(tf.constant([1]))\nfetch = {}\n"),
    row("assert_proper_iterable_string", "tf.debugging.assert_proper_iterable('abc')\nfetch = {}\n"),
    row("assert_proper_iterable_array", "tf.assert_proper_iterable(np.zeros(2))\nfetch = {}\n"),
    row("assert_shapes_ok", "x, y = tf.zeros([2, 3]), tf.zeros([3, 4])\n"
        "with tf.control_dependencies([tf.debugging.assert_shapes([(x, ('N', 'Q')), (y, ('Q', 4))])]):\n"
        "    z = tf.identity(x)\nfetch = {'z': z}\n"),
    row("assert_shapes_static_bad", "x, y = tf.zeros([2, 3]), tf.zeros([2, 4])\n"
        "tf.debugging.assert_shapes([(x, ('N', 'Q')), (y, ('Q', 4))])\nfetch = {}\n"),
    row("assert_shapes_rank_bad", "tf.debugging.assert_shapes([(tf.zeros([2]), ('N', 'Q'))])\nfetch = {}\n"),
    row("assert_shapes_dynamic_bad", "x = tf.placeholder_with_default(tf.zeros([2, 3]), [None, None])\n"
        "y = tf.placeholder_with_default(tf.zeros([2, 4]), [None, None])\n"
        "with tf.control_dependencies([tf.debugging.assert_shapes([(x, ('N', 'Q')), (y, ('Q', 4))])]):\n"
        "    z = tf.identity(x)\nfetch = {'z': z}\n"),
    row("verify_finite_ok", "fetch = {'y': tf.verify_tensor_all_finite(tf.constant([1.0, 2.0]), 'bad')}\n"),
    row("verify_finite_nan", "fetch = {'y': tf.verify_tensor_all_finite(tf.constant([1.0, np.nan]), 'bad')}\n"),
    row("assert_all_finite_inf", "fetch = {'y': tf.debugging.assert_all_finite(tf.constant([np.inf]), 'inf!')}\n"),
    row("debugging_is_ops", "x = tf.constant([1.0, np.nan, np.inf, -np.inf])\n"
        "fetch = {'f': tf.debugging.is_finite(x), 'i': tf.debugging.is_inf(x), 'n': tf.debugging.is_nan(x)}\n"),
    row("assert_near", "x = tf.constant([1.0, 2.0])\nwith tf.control_dependencies([tf.assert_near(x, x + 1e-7)]):\n"
        "    y = tf.identity(x)\nfetch = {'y': y}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("nest_checks", ROWS)
