"""`SparseTensor`: a tensor given by the coordinates and values of its non-default entries."""

from __future__ import annotations

import collections
from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape

__all__ = ["SparseTensor", "SparseTensorValue"]

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """indices (int64 [N, rank]), values ([N]) and dense_shape (int64 [rank]), as TF1's.

    A SparseTensor is fetched as a SparseTensorValue and can be fed one (or an
    (indices, values, dense_shape) tuple) when its parts are placeholders.
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self.indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices") \
            if not isinstance(indices, Tensor) else indices
        self.values = convert_to_tensor(values, name="values")
        self.dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape") \
            if not isinstance(dense_shape, Tensor) else dense_shape
        for part, want in ((self.indices, 2), (self.values, 1), (self.dense_shape, 1)):
            if part.shape.ndims is not None and part.shape.ndims != want:
                raise ValueError(f"SparseTensor: {part.name} must have rank {want}, got shape {part.shape}")
        if self.indices.dtype is not dtypes.int64 or self.dense_shape.dtype is not dtypes.int64:
            raise TypeError("SparseTensor: indices and dense_shape must be int64 tensors")

    dtype = property(lambda self: self.values.dtype)
    graph = property(lambda self: self.values.graph)
    op = property(lambda self: self.values.op)

    @property
    def shape(self) -> TensorShape:
        from tftk.framework.constant_value import constant_value
        value = constant_value(self.dense_shape)
        if value is not None:
            return TensorShape(value.tolist())
        rank = self.dense_shape.shape.as_list()[0] if self.dense_shape.shape.ndims == 1 else None
        return TensorShape(None if rank is None else [None] * rank)

    def get_shape(self) -> TensorShape:
        return self.shape

    def _fetch_parts(self):
        return [self.indices, self.values, self.dense_shape], SparseTensorValue

    def _feed_parts(self, value: Any) -> list[tuple[Tensor, Any]]:
        if isinstance(value, SparseTensorValue) or (isinstance(value, tuple) and len(value) == 3):
            indices, values, dense_shape = value
            return [(self.indices, indices), (self.values, values), (self.dense_shape, dense_shape)]
        raise TypeError(f"A SparseTensor must be fed a SparseTensorValue or an (indices, values, "
                        f"dense_shape) tuple, got {type(value).__name__}")

    def eval(self, feed_dict: dict | None = None, session: Any = None) -> SparseTensorValue:
        from tftk.framework.ops import _run_with_default_session
        return _run_with_default_session(self, feed_dict, session, "SparseTensor.eval()")

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self.indices}, values={self.values}, dense_shape={self.dense_shape})"
