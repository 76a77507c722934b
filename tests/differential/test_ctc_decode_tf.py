"""collapse_repeated, ctc_unique_labels and ctc_greedy_decoder against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(1311)
LOGITS = RNG.uniform(-2, 2, (6, 3, 4)).astype(np.float32)
LOGITS[1:3, 0] = LOGITS[0, 0]  # repeated best labels at the start of sequence 0

ROWS = [
    Row("collapse_repeated", "l, n = tf.nn.collapse_repeated(tf.constant(inputs['l']), tf.constant([5, 3, 0]))\n"
        "fetch = {'l': l, 'n': n}\n", {"l": np.array([[1, 1, 2, 2, 3, 3], [4, 4, 4, 5, 5, 5], [7, 7, 7, 7, 7, 7]], np.int32)}),
    Row("ctc_unique_labels", "v, i = tf.nn.ctc_unique_labels(tf.constant(inputs['l']))\nfetch = {'v': v, 'i': i}\n",
        {"l": np.array([[3, 1, 3, 2, 1], [5, 5, 5, 0, 0]], np.int32)}),
    Row("ctc_greedy_decoder", "(d,), s = tf.nn.ctc_greedy_decoder(tf.constant(inputs['x']), [6, 4, 1])\n"
        "fetch = {'i': d.indices, 'v': d.values, 'shape': d.dense_shape, 's': s}\n", {"x": LOGITS}),
    Row("ctc_greedy_decoder_no_merge", "(d,), s = tf.nn.ctc_greedy_decoder(tf.constant(inputs['x']), [6, 6, 6], "
        "merge_repeated=False)\nfetch = {'i': d.indices, 'v': d.values, 'shape': d.dense_shape, 's': s}\n", {"x": LOGITS}),
    Row("ctc_greedy_decoder_blank0", "(d,), s = tf.nn.ctc_greedy_decoder(tf.constant(inputs['x']), [5, 6, 2], blank_index=0)\n"
        "fetch = {'i': d.indices, 'v': d.values, 'shape': d.dense_shape}\n", {"x": LOGITS}),
]

results, test_tftk_agrees_with_tensorflow = table_tests("ctc_decode", ROWS)
