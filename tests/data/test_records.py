"""TFRecord files of tf.train.Example written by real TensorFlow parse in tftk, and the other way round."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import run_script_in_tf

FIXTURES = Path(__file__).parent.parent / "fixtures" / "data"
SCRIPT = FIXTURES / "make_records.py"
_spec = importlib.util.spec_from_file_location("make_records", SCRIPT)
make_records = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_records)
EXPECTED = [  # EXAMPLES of make_records.py, as parsed below
    {"label": 3, "pixels": [0.0, 0.5, 1.0, 0.25], "name": "first", "tags": ["a", "b"]},
    {"label": 7, "pixels": [1.0, 1.0, 0.0, 0.0], "name": "second", "tags": []},
    {"label": 1, "pixels": [0.125, 0.0, 0.0, 1.0], "name": "", "tags": ["c"]},
]


def parse_file(path, compression=""):
    """The fixture script's own reader (the code TF runs), run with tftk."""
    return make_records.read(tf, path, compression)


@pytest.mark.parametrize("suffix, compression", [("", ""), (".gz", "GZIP"), (".zlib", "ZLIB")])
def test_records_written_by_tensorflow_parse_in_tftk(suffix, compression):
    assert parse_file(str(FIXTURES / f"examples.tfrecord{suffix}"), compression) == EXPECTED
    options = tf.python_io.TFRecordOptions(compression)
    records = list(tf.python_io.tf_record_iterator(str(FIXTURES / f"examples.tfrecord{suffix}"), options))
    assert [tf.train.Example.FromString(r).features.feature["label"].int64_list.value[0]
            for r in records] == [3, 7, 1]


def test_sequence_example_written_by_tensorflow():
    record = next(tf.python_io.tf_record_iterator(str(FIXTURES / "sequence.tfrecord")))
    context, sequence = tf.parse_single_sequence_example(
        record, context_features={"label": tf.FixedLenFeature([], tf.int64)},
        sequence_features={"pixels": tf.FixedLenSequenceFeature([2], tf.float32),
                           "tags": tf.VarLenFeature(tf.string)})
    with tf.Session() as s:
        c, q = s.run([context, sequence])
    assert c["label"] == 2
    np.testing.assert_array_equal(q["pixels"], [[1.0, 2.0], [3.0, 4.0]])
    assert q["tags"].indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert q["tags"].values.tolist() == [b"x", b"y", b"z"] and q["tags"].dense_shape.tolist() == [2, 2]


def _write_examples(path, compression):
    options = tf.python_io.TFRecordOptions(compression)
    with tf.python_io.TFRecordWriter(path, options) as w:
        for ex in EXPECTED:
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[ex["label"]])),
                "pixels": tf.train.Feature(float_list=tf.train.FloatList(value=ex["pixels"])),
                "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[ex["name"].encode()])),
                "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[t.encode() for t in ex["tags"]])),
            })).SerializeToString())


def test_records_written_by_tftk_parse_in_tensorflow(tmp_path):
    args = []
    for compression in ("", "GZIP", "ZLIB"):
        path = str(tmp_path / f"mine-{compression or 'plain'}.tfrecord")
        _write_examples(path, compression)
        assert parse_file(path, compression) == EXPECTED
        args.append(f"{path}:{compression}")
    assert json.loads(run_script_in_tf(str(SCRIPT), "--read", *args)) == [EXPECTED] * 3
