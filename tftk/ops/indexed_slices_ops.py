"""Densifying an `IndexedSlices` (a sparse gradient): the op, its gradient, and the conversion
`convert_to_tensor(indexed_slices)` uses."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Tensor, register_tensor_conversion_function
from tftk.ops.gather_ops import gather
from tftk.ops.op_builder import make_op

__all__ = ["densify"]


def _densify_kernel(op, ctx):
    def kernel(values, indices, dense_shape):
        out = np.zeros(tuple(dense_shape.tolist()), dtype=values.dtype)
        np.add.at(out, indices, values)
        return out
    return kernel


registry.register_op("IndexedSlicesToDense", _densify_kernel)


@registry.register_gradient("IndexedSlicesToDense")
def _densify_grad(op, grad):
    return [gather(grad, op.inputs[1]), None, None]


def densify(value: IndexedSlices, dtype: Any = None, name: str | None = None) -> Tensor:
    """The dense tensor an IndexedSlices stands for (duplicate rows summed)."""
    if value.dense_shape is None:
        raise ValueError("Cannot convert IndexedSlices without a dense_shape to a Tensor")
    return make_op("IndexedSlicesToDense", [value.values, value.indices, value.dense_shape],
                   value.values.dtype, value.shape, name or "IndexedSlicesToDense")


register_tensor_conversion_function(IndexedSlices, lambda v, dtype=None, name=None: densify(v, dtype, name))
