"""`tf.data.experimental`: the AUTOTUNE constant TF1 pipelines pass as num_parallel_calls."""

from tftk.data.transformations import AUTOTUNE

__all__ = ["AUTOTUNE"]
