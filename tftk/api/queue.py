"""The `tf.queue` namespace: the queue classes under their TF 1.13+ path."""

from tftk.ops.data_flow_ops import FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue  # noqa: F401
