"""`tf.data`: input pipelines as datasets of elements, read through iterators by Session.run."""

from tftk.data.dataset_ops import Dataset
from tftk.data.iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from tftk.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from tftk.data import experimental
from tftk.data.transformations import AUTOTUNE

__all__ = ["Dataset", "Iterator", "TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset",
           "make_one_shot_iterator", "make_initializable_iterator", "experimental", "AUTOTUNE"]
