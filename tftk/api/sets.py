"""The `tf.sets` namespace (TF 1.x's `set_*` names and TF 1.13+'s short ones)."""

from tftk.ops.set_ops import (difference, intersection, set_difference, set_intersection, set_size,
                              set_union, size, union)

__all__ = ["difference", "intersection", "set_difference", "set_intersection", "set_size", "set_union",
           "size", "union"]
