"""Graph inputs: `constant`, `placeholder`, `placeholder_with_default`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph, numpy_value
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.op_builder import make_op

__all__ = ["constant", "placeholder", "placeholder_with_default"]


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const",
             verify_shape: bool = False, _strict: bool = False) -> Tensor:
    """A tensor with a fixed value; `shape` broadcasts a scalar or reshapes a matching size."""
    want = dtypes.as_dtype(dtype) if dtype is not None else None
    array = numpy_value(value, want)
    if want is None:
        want = dtypes.as_dtype(array.dtype)
    if want is dtypes.string:
        array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(array) \
            if array.size else array
    if shape is not None:
        target = tuple(as_shape(shape).as_list())
        if verify_shape and array.shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, got {array.shape}.")
        if array.size == 1:
            array = np.full(target, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(target)):
            array = array.reshape(target)
        else:
            raise ValueError(f"Too many elements provided. Needed at most {int(np.prod(target))}, "
                             f"but received {array.size}")
    array.setflags(write=False)  # constants are shared by every run: kernels must not write them
    return make_op("Const", [], want, array.shape, name, {"value": array, "dtype": want})


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Tensor:
    """An input that must be fed; None dims (and shape=None) accept any size."""
    dtype = dtypes.as_dtype(dtype)
    shape = TensorShape(None) if shape is None else as_shape(shape)
    graph = get_default_graph()
    return graph.create_op("Placeholder", [], [(dtype, shape)], name,
                           {"dtype": dtype, "shape": shape}).outputs[0]


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """Passes `input` through unless fed."""
    value = convert_to_tensor(input)
    return make_op("PlaceholderWithDefault", [value], value.dtype, as_shape(shape), name,
                   {"shape": as_shape(shape)})


registry.register_op("Const", inline=registry.Inline.CONSTANT)
registry.register_op("Placeholder", inline=registry.Inline.FEED)
registry.register_op("PlaceholderWithDefault", inline=registry.Inline.ALIAS)  # its input unless fed
registry.not_differentiable("Const", "Placeholder")


@registry.register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]
