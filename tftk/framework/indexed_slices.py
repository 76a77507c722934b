"""`IndexedSlices`: a sparse gradient holding only some rows (e.g. of an embedding lookup)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework.ops import Tensor
from tftk.framework.tensor_shape import TensorShape

__all__ = ["IndexedSlices", "IndexedSlicesValue"]


class IndexedSlicesValue:
    """The fetched value of an IndexedSlices: numpy values, indices and dense_shape."""

    def __init__(self, values: np.ndarray, indices: np.ndarray, dense_shape: Any):
        self.values, self.indices, self.dense_shape = values, indices, dense_shape

    def __repr__(self) -> str:
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"


class IndexedSlices:
    """Rows `indices` of a dense tensor of shape `dense_shape`, with values `values`.

    Gradients of gather/embedding_lookup are IndexedSlices so optimizers can update only the
    looked-up rows; any op that needs a dense tensor converts it (summing duplicate rows: the op
    doing that, and the conversion, live in tftk.ops.indexed_slices_ops).
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
        from tftk.framework.constant_value import constant_value
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
