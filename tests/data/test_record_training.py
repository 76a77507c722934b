"""The toolkit trains from TFRecord files through tf.data (configs/digits_convnet_tfrecord.yaml)."""

from pathlib import Path

import numpy as np
import pytest

import tftk as tf
from models import make_model, model_schema
from models.record_input import write_example_records
from tftk.config import resolve_config
from tftk.user_input import UserInputError

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path, *overrides):
    (tmp_path / "run").mkdir(exist_ok=True)  # models write into an existing folder; the CLI makes it
    return resolve_config(ROOT / "configs" / "digits_convnet_tfrecord.yaml",
                          ["max_iter=60", "save_every=0", "log_every=30", f"result_dir={tmp_path / 'run'}",
                           "lr=0.01", "model.conv1_filters=8", "model.conv2_filters=8", "nb_units=32",
                           "random_seed=2", f"model.train_records={tmp_path / 'train.tfrecord'}", *overrides],
                          model_schema)


def test_convnet_writes_its_records_and_trains_from_them(tmp_path):
    model = make_model(_config(tmp_path))
    model.log = lambda line: None
    records = tmp_path / "train.tfrecord"
    assert records.exists() and not list(tmp_path.glob(".*.tmp"))
    first = tf.train.Example.FromString(next(tf.python_io.tf_record_iterator(str(records))))
    assert first.features.feature["label"].int64_list.value[0] == model.data_sets.train.labels[0]
    assert len(first.features.feature["image"].float_list.value) == 64
    assert model.fill_feed_dict(model.train_data) == model.training_feed()  # no numpy batches fed

    def no_numpy_batches(*args):
        raise AssertionError("training drew a numpy batch")

    model.train_data.next_batch = no_numpy_batches
    before = model.evaluate()["validation_accuracy"]
    outcome = model.train()
    assert outcome["metrics"]["validation_accuracy"] > max(before, 0.6)
    assert model.images_placeholder.op.type == "PlaceholderWithDefault"
    images = model.data_sets.test.images[:5]  # inference still feeds numpy arrays
    assert model.infer(images).shape == (5,)
    model.close()


def test_records_from_another_run_are_read_not_rewritten(tmp_path):
    images = np.zeros((20, 8, 8, 1), np.float32)
    labels = np.full(20, 3)
    write_example_records(tmp_path / "train.tfrecord", images, labels)
    stamp = (tmp_path / "train.tfrecord").stat().st_mtime_ns
    model = make_model(_config(tmp_path, "max_iter=5"))
    model.log = lambda line: None
    _, loss = model.sess.run([model.train_op, model.total_loss], model.training_feed())
    assert np.isfinite(loss) and (tmp_path / "train.tfrecord").stat().st_mtime_ns == stamp
    model.close()


def test_missing_records_without_write_is_a_clear_error(tmp_path):
    with pytest.raises(UserInputError, match="model.train_records: no file matches"):
        make_model(_config(tmp_path, "model.write_records=false"))
