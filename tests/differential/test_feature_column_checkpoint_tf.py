"""Feature-column models share checkpoints with real TensorFlow: TF1's variable names, both ways.

tftk saves a checkpoint of an input_layer + linear_model graph, TensorFlow restores it into the
same model built with its own tf.compat.v1.feature_column (and saves one of its own), and tftk
restores TensorFlow's: each side's outputs after restoring equal the saver's.
"""

import numpy as np
import pytest

from tests.tf_oracle import run_in_tf, run_in_tftk

BUILD = '''
fc = tf.feature_column
features = {"age": tf.constant([[1.0], [7.0], [3.0]]), "city": tf.constant([["sf"], ["la"], ["paris"]]),
            "tags": tf.SparseTensor([[0, 0], [0, 1], [2, 0]], ["a", "b", "c"], [3, 2]),
            "ids": tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([2, 0, 4], tf.int64), [3, 2])}
city = fc.categorical_column_with_vocabulary_list("city", ["sf", "la"], num_oov_buckets=2)
tags = fc.categorical_column_with_hash_bucket("tags", 7)
ids = fc.categorical_column_with_identity("ids", 5)
age = fc.bucketized_column(fc.numeric_column("age"), [2.0, 5.0])
deep = fc.input_layer(features, [fc.numeric_column("age"), fc.embedding_column(tags, 3),
                                 fc.embedding_column(ids, 2, combiner="sqrtn"), fc.indicator_column(city)])
wide = fc.linear_model(features, [age, city, tags, fc.crossed_column(["city", "tags"], 11),
                                  fc.embedding_column(ids, 2)], units=2)
saver = tf.train.Saver()
path = str(inputs["dir"]) + "/model.ckpt"
'''

SAVE = BUILD + '''
tvars = sorted(tf.global_variables(), key=lambda v: v.name)
assigns = [v.assign(np.sin(np.arange(int(np.prod(v.shape.as_list()))) * {step} + 0.2)
                    .reshape(v.shape.as_list()).astype(np.float32)) for v in tvars]
with tf.Session() as s:
    s.run([tf.global_variables_initializer(), tf.tables_initializer()])
    s.run(assigns)
    saver.save(s, path)
    d, w = s.run([deep, wide])
outputs = {"deep": d, "wide": w, "names": np.array([v.op.name for v in tvars])}
'''

RESTORE = BUILD + '''
with tf.Session() as s:
    s.run(tf.tables_initializer())
    saver.restore(s, path)
    d, w = s.run([deep, wide])
outputs = {"deep": d, "wide": w, "names": np.array(sorted(v.op.name for v in tf.global_variables()))}
'''


def _same(a, b):
    assert a.error is None and b.error is None, (a.message, b.message)
    assert a.outputs["names"].tolist() == b.outputs["names"].tolist()
    for key in ("deep", "wide"):
        np.testing.assert_allclose(a.outputs[key], b.outputs[key], rtol=1e-5, atol=1e-6, err_msg=key)


@pytest.mark.slow  # a TensorFlow process of its own, ~20 s
def test_checkpoints_round_trip_with_tensorflow(tmp_path):
    ours, theirs = tmp_path / "tftk", tmp_path / "tf"
    ours.mkdir()
    theirs.mkdir()
    saved = run_in_tftk(SAVE.replace("{step}", "0.37"), {"dir": np.array(str(ours))})
    oracle = run_in_tf({"restore": (RESTORE, {"dir": np.array(str(ours))}),
                        "save": (SAVE.replace("{step}", "0.61"), {"dir": np.array(str(theirs))})})
    _same(saved, oracle["restore"])
    _same(run_in_tftk(RESTORE, {"dir": np.array(str(theirs))}), oracle["save"])
    assert "linear_model/city_X_tags/weights" in saved.outputs["names"].tolist()
    assert "input_layer/tags_embedding/embedding_weights" in saved.outputs["names"].tolist()
