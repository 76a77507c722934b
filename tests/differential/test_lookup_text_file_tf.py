"""Tables filled from a text file (tf.lookup.TextFileInitializer, TF's InitializeTableFromTextFileV2)
against real TensorFlow: the whole line, the line number or a delimited column as key and value,
vocab_size, "\r\n" lines, a missing final newline, and the errors of a bad file (an empty line, too
few lines or columns, a field that is not a number)."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

BODY = """
import os, tempfile
path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
with open(path, "wb") as handle:
    handle.write(inputs["text"].tobytes())
init = tf.lookup.TextFileInitializer(path, {key_dtype}, {key_index}, {value_dtype}, {value_index}, {options})
table = tf.lookup.StaticHashTable(init, {default})
with tf.control_dependencies([table.initializer]):
    fetch = {{"found": table.lookup(tf.constant({query}, {key_dtype})), "size": table.size()}}
"""

WORDS = "red\ngreen\nblue\n"
COLUMNS = "cat,3,0.5\ndog,1,1.5\nemu,4,-2\n"

CASES = {  # name: (file text, key dtype, key index, value dtype, value index, options, default, query)
    "words_to_line_numbers": (WORDS, "tf.string", -2, "tf.int64", -1, "", -1, ["blue", "red", "pink"]),
    "line_numbers_to_words": (WORDS, "tf.int64", -1, "tf.string", -2, "", "'?'", [0, 2, 7]),
    "offset": (WORDS, "tf.string", -2, "tf.int64", -1, "value_index_offset=10", -1, ["green"]),
    "vocab_size_cuts": (WORDS, "tf.string", -2, "tf.int64", -1, "vocab_size=2", -1, ["blue", "green"]),
    "crlf_and_no_final_newline": ("red\r\ngreen\r\nblue", "tf.string", -2, "tf.int64", -1, "", -1, ["green", "blue"]),
    "columns": (COLUMNS, "tf.string", 0, "tf.int64", 1, "delimiter=','", 0, ["emu", "cat", "yak"]),
    "float_column": (COLUMNS, "tf.string", 0, "tf.float32", 2, "delimiter=','", 0.0, ["emu", "dog"]),
    "int_keys": ("7\t70\n9\t90\n", "tf.int64", 0, "tf.int64", 1, "", -1, [9, 8, 7]),
    "empty_line": ("red\n\nblue\n", "tf.string", -2, "tf.int64", -1, "", -1, ["red"]),
    "too_few_lines": (WORDS, "tf.string", -2, "tf.int64", -1, "vocab_size=5", -1, ["red"]),
    "too_few_columns": ("a,1\nb\n", "tf.string", 0, "tf.int64", 1, "delimiter=','", -1, ["a"]),
    "not_a_number": ("a,x\n", "tf.string", 0, "tf.int64", 1, "delimiter=','", -1, ["a"]),
    "same_key_twice": ("a,1\na,2\n", "tf.string", 0, "tf.int64", 1, "delimiter=','", -1, ["a"]),
}

ROWS = [Row(name, BODY.format(key_dtype=kd, key_index=ki, value_dtype=vd, value_index=vi, options=opt,
                              default=default, query=query),
            {"text": np.frombuffer(text.encode(), np.uint8)})
        for name, (text, kd, ki, vd, vi, opt, default, query) in CASES.items()]

results, test_tftk_agrees_with_tensorflow = table_tests("lookup_text_file", ROWS)

VOCABULARY_BODY = """
init = tf.lookup.KeyValueTensorInitializer(tf.constant({keys}), tf.constant([0, 1, 2], tf.int64))
table = tf.lookup.StaticVocabularyTable(init, {buckets})
with tf.control_dependencies([table.initializer]):
    fetch = {{"ids": table.lookup(tf.constant({query})), "size": table.size()}}
"""
VOCABULARY = {  # name: (keys, buckets, query)
    "vocabulary_strings": (["a", "b", "c"], 4, [["b", "zz"], ["qq", "a"]]),
    "vocabulary_int64_keys": ([7, 8, 9], 3, [9, 100, -5, 7]),
    "vocabulary_one_bucket": (["x", "y", "z"], 1, ["y", "w", "v"]),
}
VOCABULARY_ROWS = [Row(name, VOCABULARY_BODY.format(keys=keys if isinstance(keys[0], str) else f"np.array({keys})",
                                                    buckets=buckets, query=query if isinstance(keys[0], str)
                                                    else f"np.array({query})"))
                   for name, (keys, buckets, query) in VOCABULARY.items()]

vocabulary_results, test_vocabulary_table_agrees_with_tensorflow = table_tests("lookup_vocabulary", VOCABULARY_ROWS)
