"""Graph inputs: `constant`, `placeholder`, `placeholder_with_default`."""

from __future__ import annotations

from typing import Any


from tftk.framework import dtypes, registry
from tftk.framework.constant_op import constant
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.op_builder import make_op

__all__ = ["constant", "placeholder", "placeholder_with_default"]


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


registry.register_op("Const", inline=registry.Inline.CONSTANT, static_value=lambda t: t.op.get_attr("value"))
registry.register_op("Placeholder", inline=registry.Inline.FEED)
registry.register_op("PlaceholderWithDefault", inline=registry.Inline.ALIAS)  # its input unless fed
registry.not_differentiable("Const", "Placeholder")


@registry.register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]
