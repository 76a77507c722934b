"""Small TF 1.x helpers over tensors and shapes: `is_tensor`, `get_static_value`,
`broadcast_static_shape`, `convert_to_tensor_or_indexed_slices`, and the 0.x `op_scope`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import broadcast_shape

__all__ = ["is_tensor", "get_static_value", "broadcast_static_shape", "convert_to_tensor_or_indexed_slices",
           "op_scope"]


def is_tensor(x: Any) -> bool:
    """Whether `x` is a graph tensor or tensor-like (Tensor, SparseTensor, IndexedSlices, Variable)."""
    from tftk.ops.variables import Variable
    return isinstance(x, (Tensor, SparseTensor, IndexedSlices, Variable))


def get_static_value(tensor: Any, partial: bool = False) -> np.ndarray | None:
    """The value of `tensor` when it is known without running the graph, else None."""
    return constant_value(tensor)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The static shape numpy broadcasting gives two shapes; ValueError when they are incompatible."""
    return broadcast_shape(as_shape(shape_x), as_shape(shape_y), "broadcast_static_shape")


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`value` unchanged when it is an IndexedSlices, else `convert_to_tensor(value)`."""
    if isinstance(value, IndexedSlices):
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def op_scope(values: Any, name: str | None, default_name: str | None = None) -> Any:
    """TF 0.x's `op_scope(values, name, default_name)`: `name_scope(name, default_name, values)`."""
    return name_scope(name, default_name, values)
