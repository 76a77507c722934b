"""The `tf.bitwise` namespace."""

from tftk.ops.bitwise_ops import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
