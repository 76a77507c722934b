"""`IndexedSlices`: a sparse gradient holding only some rows (e.g. of an embedding lookup)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, register_tensor_conversion_function
from tftk.framework.tensor_shape import TensorShape

__all__ = ["IndexedSlices", "IndexedSlicesValue", "densify"]


class IndexedSlicesValue:
    """The fetched value of an IndexedSlices: numpy values, indices and dense_shape."""

    def __init__(self, values: np.ndarray, indices: np.ndarray, dense_shape: Any):
        self.values, self.indices, self.dense_shape = values, indices, dense_shape

    def __repr__(self) -> str:
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"


class IndexedSlices:
    """Rows `indices` of a dense tensor of shape `dense_shape`, with values `values`.

    Gradients of gather/embedding_lookup are IndexedSlices so optimizers can update only the
    looked-up rows; any op that needs a dense tensor converts it (summing duplicate rows).
    """

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None):
        self.values, self.indices, self.dense_shape = values, indices, dense_shape

    dtype = property(lambda self: self.values.dtype)
    graph = property(lambda self: self.values.graph)
    op = property(lambda self: self.values.op)
    name = property(lambda self: self.values.name)
    device = property(lambda self: self.values.device)

    @property
    def shape(self) -> TensorShape:
        from tftk.ops.constant_value import constant_value
        if self.dense_shape is None:
            return TensorShape(None)
        value = constant_value(self.dense_shape)
        if value is not None:
            return TensorShape(value.tolist())
        rows = self.values.shape.as_tuple()
        return TensorShape(None if rows is None else [None] + list(rows[1:]))

    def get_shape(self) -> TensorShape:
        return self.shape

    def _fetch_parts(self):
        parts = [self.values, self.indices] + ([self.dense_shape] if self.dense_shape is not None else [])
        return parts, lambda v, i, s=None: IndexedSlicesValue(v, i, s)

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self.indices}, values={self.values}, dense_shape={self.dense_shape})"


def _densify_kernel(op, ctx):
    def kernel(values, indices, dense_shape):
        out = np.zeros(tuple(dense_shape.tolist()), dtype=values.dtype)
        np.add.at(out, indices, values)
        return out
    return kernel


registry.register_op("IndexedSlicesToDense", _densify_kernel)


@registry.register_gradient("IndexedSlicesToDense")
def _densify_grad(op, grad):
    from tftk.ops.gather_ops import gather
    return [gather(grad, op.inputs[1]), None, None]


def densify(value: IndexedSlices, dtype: Any = None, name: str | None = None) -> Tensor:
    """The dense tensor an IndexedSlices stands for (duplicate rows summed)."""
    from tftk.ops.op_builder import make_op
    if value.dense_shape is None:
        raise ValueError("Cannot convert IndexedSlices without a dense_shape to a Tensor")
    return make_op("IndexedSlicesToDense", [value.values, value.indices, value.dense_shape],
                   value.values.dtype, value.shape, name or "IndexedSlicesToDense")


register_tensor_conversion_function(IndexedSlices, lambda v, dtype=None, name=None: densify(v, dtype, name))
