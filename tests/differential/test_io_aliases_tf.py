"""tf.io's names for existing ops and decode_compressed against real TensorFlow."""

import zlib

import numpy as np

from tests.differential.op_tables import Row, table_tests

TEXT = [b"hello world", b"", b"tftk" * 20]

ROWS = [
    Row("decode_compressed_zlib", "fetch = {'y': tf.io.decode_compressed(tf.constant(inputs['z']), 'ZLIB')}\n",
        {"z": np.array([zlib.compress(t) for t in TEXT], dtype=object).astype(bytes)}),
    Row("decode_compressed_none", "fetch = {'y': tf.io.decode_compressed(tf.constant([b'abc']))}\n"),
    Row("decode_compressed_corrupt", "fetch = {'y': tf.io.decode_compressed(tf.constant([b'not zlib']), 'ZLIB')}\n"),
    Row("io_base64", "e = tf.io.encode_base64(tf.constant(['tftk', 'a?b']))\nfetch = {'e': e, 'd': tf.io.decode_base64(e)}\n"),
    Row("io_png_roundtrip", "img = tf.constant(np.arange(24, dtype=np.uint8).reshape(2, 4, 3))\n"
        "fetch = {'y': tf.io.decode_png(tf.io.encode_png(img)), 'jpeg_name': tf.constant(callable(tf.io.decode_jpeg)), "
        "'image_name': tf.constant(callable(tf.io.decode_image))}\n"),
    Row("io_files", "import tempfile, os\nd = tempfile.mkdtemp()\np = os.path.join(d, 'f.txt')\n"
        "w = tf.io.write_file(p, 'payload')\nwith tf.control_dependencies([w]):\n    r = tf.io.read_file(p)\n"
        "    n = tf.size(tf.io.matching_files(os.path.join(d, '*.txt')))\n"
        "fetch = {'r': r, 'n': n, "
        "'graph_fn': tf.constant(callable(tf.io.write_graph)), "
        "'mfo': tf.constant(callable(tf.io.match_filenames_once))}\n"),
    Row("io_queues", "q = tf.io.RandomShuffleQueue(10, 0, [tf.int32], seed=1)\n"
        "fetch = {'base': tf.constant(isinstance(q, tf.io.QueueBase)), 'size': q.size()}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("io_aliases", ROWS)
