"""tf.lookup.StaticHashTable with KeyValueTensorInitializer against real TF: values, sizes, errors."""

import numpy as np
import pytest

from tests.differential.op_tables import Row, table_tests

TABLE = "t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer({keys}, {values}{dtypes}), {default})\n"
LOOKUP = "with tf.control_dependencies([t.initializer]):\n    fetch = {{'y': t.lookup({query}), 'n': t.size()}}\n"

CASES = {  # name: (keys, values, dtypes, default, query)
    "string_to_int": ("['a', 'b', 'c']", "[1, 2, 3]", ", value_dtype=tf.int64", "-1",
                      "tf.constant([['a', 'x'], ['c', 'b']])"),
    "int_to_string": ("tf.constant([7, 3], tf.int64)", "['seven', 'three']", "", "'UNK'",
                      "tf.constant([3, 4, 7], tf.int64)"),
    "string_to_float": ("['x', 'yy']", "[0.5, -2.0]", "", "np.float32(9.0)", "tf.constant('yy')"),
    "int32_values": ("tf.constant([1, 2], tf.int64)", "tf.constant([10, 20], tf.int32)", "", "0",
                     "tf.constant([[2], [5]], tf.int64)"),
    "key_dtype_mismatch": ("['a']", "[1]", ", value_dtype=tf.int64", "-1", "tf.constant([1, 2])"),
}

ROWS = [Row(name, TABLE.format(keys=k, values=v, dtypes=d, default=dv) + LOOKUP.format(query=q))
        for name, (k, v, d, dv, q) in CASES.items()] + [
    Row("lookup_before_init", TABLE.format(keys="['a']", values="[1]", dtypes=", value_dtype=tf.int64",
                                           default="-1") + "fetch = {'y': t.lookup(tf.constant(['a']))}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("lookup", ROWS)


@pytest.mark.parametrize("default", ["np.zeros(2, np.int64)", "[1, 2]"])
def test_default_value_must_be_a_scalar(default):
    import tftk as tf
    with tf.Graph().as_default():
        init = tf.lookup.KeyValueTensorInitializer(["a"], [1], value_dtype=tf.int64)
        with pytest.raises(ValueError, match="default_value must be a scalar"):
            tf.lookup.StaticHashTable(init, eval(default))
