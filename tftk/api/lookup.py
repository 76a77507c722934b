"""The `tf.lookup` namespace: immutable key -> value tables, filled from tensors or a text file."""

from tftk.ops.lookup_ops import (KeyValueTensorInitializer, StaticHashTable, StaticVocabularyTable, TextFileIndex,
                                 TextFileInitializer)

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer"]
