"""The `tf.lookup` namespace: immutable key -> value tables."""

from tftk.ops.lookup_ops import KeyValueTensorInitializer, StaticHashTable

__all__ = ["KeyValueTensorInitializer", "StaticHashTable"]
