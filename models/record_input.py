"""Training batches from TFRecord files through a tf.data pipeline, instead of numpy feeds.

A model whose `model:` section names `train_records` (a file or glob of TFRecords of
tf.train.Example with a float `image` list and an int64 `label`) reads its training batches
with TFRecordDataset -> shuffle -> repeat -> parse -> batch -> prefetch; the batch feeds the
model's image/label placeholders as their defaults, so evaluation and inference still feed numpy
arrays. With `write_records: true`, a missing records file is first written from the dataset's
train split (atomically), which is how configs/digits_convnet_tfrecord.yaml trains from records
it made itself. The pipeline's position goes into every checkpoint (its iterator's saveable is in
SAVEABLE_OBJECTS, which the model's Saver saves), so a stopped or killed run resumes with exactly
the batch an uninterrupted run would have drawn next.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import numpy as np
from pydantic import Field

import tftk as tf
from tftk.config import ModelParams
from tftk.user_input import UserInputError

__all__ = ["RecordInputParams", "write_example_records", "record_batches"]


class RecordInputParams(ModelParams):
    """`model:` keys of a model that can train from TFRecord files."""

    train_records: str | None = Field(None, description="TFRecord file or glob of training Examples "
                                                        "(image: floats, label: int64); unset: numpy feeds")
    write_records: bool = Field(False, description="write train_records from the dataset's train split "
                                                   "if the file does not exist")
    shuffle_buffer: int = Field(1000, gt=0, description="examples in the tf.data shuffle buffer")
    parallel_calls: int = Field(2, gt=0, description="threads parsing records (tf.data map)")


def write_example_records(path: str | os.PathLike, images: np.ndarray, labels: np.ndarray) -> int:
    """Write one Example per image (flattened float pixels, int64 label) to `path`, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = str(path.with_name(f".{path.name}.{os.getpid()}.tmp"))
    try:
        with tf.python_io.TFRecordWriter(tmp) as writer:
            for image, label in zip(images.reshape(len(images), -1).astype(np.float32), labels):
                writer.write(tf.train.Example(features=tf.train.Features(feature={
                    "image": tf.train.Feature(float_list=tf.train.FloatList(value=image)),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
                })).SerializeToString())
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(images)


def record_batches(params: RecordInputParams, input_shape: tuple, batch_size: int,
                   seed: int) -> tuple[tf.Tensor, tf.Tensor]:
    """(images [batch, *input_shape] float32, labels [batch] int32) from the records, repeated forever."""
    files = sorted(glob.glob(params.train_records))
    if not files:
        raise UserInputError(f"model.train_records: no file matches {params.train_records!r} (set "
                             "model.write_records: true to write it from the dataset)")
    size = int(np.prod(input_shape))

    def parse(record):
        example = tf.parse_single_example(record, {"image": tf.FixedLenFeature([size], tf.float32),
                                                   "label": tf.FixedLenFeature([], tf.int64)})
        return tf.reshape(example["image"], input_shape), tf.cast(example["label"], tf.int32)

    with tf.name_scope("input_pipeline"):
        # records are shuffled before parsing (the same order as shuffling parsed examples: parse is
        # one to one), so map + batch fuse and each batch is parsed in one vectorised call
        dataset = (tf.data.TFRecordDataset(files)
                   .shuffle(params.shuffle_buffer, seed=seed)
                   .repeat()
                   .map(parse, num_parallel_calls=params.parallel_calls)
                   .batch(batch_size)
                   .prefetch(2))
        iterator = dataset.make_one_shot_iterator()
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                             tf.data.experimental.make_saveable_from_iterator(iterator))
        return iterator.get_next()
