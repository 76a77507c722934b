"""tf.bitwise: and, or, xor, invert and shifts of integer tensors (element-wise, broadcasting).

TF does not differentiate them. A shift by a negative amount or by the width of the type or more
is implementation-defined in TF; here it follows TF's CPU kernel, which clamps the shift to
[0, bits - 1].
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.op_builder import binary_inputs, broadcast_shape, op_scope

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _integer(x: Tensor, op_type: str) -> None:
    if not x.dtype.is_integer:
        raise TypeError(f"{op_type}: bitwise ops take integer tensors, got {x.dtype.name}")


def _clamped_shift(shift: Callable) -> Callable:
    def kernel(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        bits = np.dtype(x.dtype).itemsize * 8
        return shift(x, np.clip(y, 0, bits - 1).astype(x.dtype))
    return kernel


def _binary(op_type: str, fn: Callable, doc: str) -> Callable:
    register_array_op(op_type, fn)

    def constructor(x: Any, y: Any, name: str | None = None) -> Tensor:
        with op_scope(name, op_type, [x, y]) as scope:
            a, b = binary_inputs(x, y, op_type)
            _integer(a, op_type)
            return array_op(op_type, [a, b], [(a.dtype, broadcast_shape(a.shape, b.shape, op_type))], scope)

    constructor.__doc__ = doc
    constructor.__name__ = op_type
    return constructor


bitwise_and = _binary("BitwiseAnd", np.bitwise_and, "Element-wise x & y.")
bitwise_or = _binary("BitwiseOr", np.bitwise_or, "Element-wise x | y.")
bitwise_xor = _binary("BitwiseXor", np.bitwise_xor, "Element-wise x ^ y.")
left_shift = _binary("LeftShift", _clamped_shift(np.left_shift), "Element-wise x << y.")
right_shift = _binary("RightShift", _clamped_shift(np.right_shift), "Element-wise x >> y (arithmetic for signed types).")

register_array_op("Invert", np.invert)


def invert(x: Any, name: str | None = None) -> Tensor:
    """Element-wise ~x (every bit flipped)."""
    t = convert_to_tensor(x)
    _integer(t, "Invert")
    return array_op("Invert", [t], [(t.dtype, t.shape)], name)
