"""Sparse-to-dense conversion: `sparse_to_dense`, `sparse_tensor_to_dense`, `sparse_placeholder`."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.gather_ops import gather_nd
from tftk.ops.constant_op import placeholder
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op

__all__ = ["sparse_to_dense", "sparse_tensor_to_dense", "to_dense", "sparse_placeholder", "SparseTensor"]


def _validate(indices: np.ndarray, shape: tuple) -> None:
    """TF's validate_indices: in bounds, lexicographically sorted, no repeats."""
    for k, row in enumerate(indices.tolist()):
        if any(i < 0 or i >= d for i, d in zip(row, shape)):
            raise InvalidArgumentError(None, None, f"indices[{k}] = {row} is out of bounds: need 0 <= index < {list(shape)}")
        if k and row <= indices[k - 1].tolist():
            what = "repeated" if row == indices[k - 1].tolist() else "out of order"
            raise InvalidArgumentError(None, None, f"indices[{k}] = {row} is {what}: sparse indices must be "
                                                   f"sorted in lexicographic order without repeats")


def _bind_sparse_to_dense(op, ctx):
    validate = op.get_attr("validate_indices")

    def kernel(indices, output_shape, values, default):
        shape = tuple(int(d) for d in np.atleast_1d(output_shape))
        if indices.shape[-1] != len(shape):
            raise InvalidArgumentError(None, None, f"indices have {indices.shape[-1]} columns but output_shape "
                                                   f"{list(shape)} has rank {len(shape)}")
        if values.ndim and values.shape[0] != indices.shape[0]:
            raise InvalidArgumentError(None, None, f"sparse_values has {values.shape[0]} entries but there are "
                                                   f"{indices.shape[0]} indices")
        if validate:
            _validate(indices, shape)
        out = np.full(shape, default, dtype=values.dtype)
        out[tuple(indices.T)] = values
        return out
    return kernel


registry.register_op("SparseToDense", _bind_sparse_to_dense)


@registry.register_gradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    indices, _, values, default = op.inputs
    picked = gather_nd(grad, indices)
    values_grad = math_ops.unbroadcast(picked, values)
    default_grad = math_ops.subtract(reduction_ops.reduce_sum(grad), reduction_ops.reduce_sum(picked))
    return [None, None, values_grad, default_grad]


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any, default_value: Any = 0,
                    validate_indices: bool = True, name: str | None = None) -> Tensor:
    """A dense tensor of `output_shape` with `sparse_values` at `sparse_indices`, `default_value` elsewhere.

    sparse_indices is a scalar or vector (for a 1-D output) or an [N, rank] matrix; sparse_values a
    scalar (used for every index) or a vector of N values.
    """
    with name_scope(name, "SparseToDense", [sparse_indices, output_shape, sparse_values]) as scope:
        idx = convert_to_tensor(sparse_indices)
        if not idx.dtype.is_integer:
            raise TypeError(f"SparseToDense: sparse_indices must be int32 or int64, got {idx.dtype.name}")
        shape_t = convert_to_tensor(output_shape, dtype=idx.dtype) if not isinstance(output_shape, Tensor) \
            else output_shape
        values = convert_to_tensor(sparse_values)
        default = convert_to_tensor(default_value, dtype=values.dtype)
        if idx.shape.ndims is not None and idx.shape.ndims < 2:
            idx = array_ops.reshape(idx, [-1, 1])
        elif idx.shape.ndims is not None and idx.shape.ndims > 2:
            raise ValueError(f"SparseToDense: sparse_indices must have rank <= 2, got shape {idx.shape}")
        if values.shape.ndims is not None and values.shape.ndims > 1:
            raise ValueError(f"SparseToDense: sparse_values must be a scalar or a vector, got {values.shape}")
        if default.shape.ndims not in (None, 0):
            raise ValueError(f"SparseToDense: default_value must be a scalar, got shape {default.shape}")
        static = constant_value(shape_t)
        out_shape = TensorShape(None) if static is None else TensorShape(np.atleast_1d(static).tolist())
        n_idx, n_val = idx.shape.as_list()[0] if idx.shape.ndims else None, \
            values.shape.as_list()[0] if values.shape.ndims == 1 else None
        if n_idx is not None and n_val is not None and n_idx != n_val:
            raise ValueError(f"SparseToDense: {n_idx} indices but {n_val} sparse_values")
        if static is not None and idx.shape.ndims == 2 and idx.shape.as_list()[1] not in (None, out_shape.ndims):
            raise ValueError(f"SparseToDense: indices have {idx.shape.as_list()[1]} columns but output_shape "
                             f"{out_shape} has rank {out_shape.ndims}")
        return make_op("SparseToDense", [idx, shape_t, values, default], values.dtype, out_shape, scope,
                       {"validate_indices": bool(validate_indices)})


def sparse_tensor_to_dense(sp_input: SparseTensor, default_value: Any = 0, validate_indices: bool = True,
                           name: str | None = None) -> Tensor:
    """The dense tensor a SparseTensor stands for (`tf.sparse.to_dense`)."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"sparse_tensor_to_dense needs a SparseTensor, got {type(sp_input).__name__}")
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values, default_value,
                           validate_indices=validate_indices, name=name or "SparseTensorToDense")


to_dense = sparse_tensor_to_dense


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A SparseTensor whose parts are placeholders: feed it a SparseTensorValue."""
    rank = None if shape is None else as_shape(shape).ndims
    with name_scope(name, "SparsePlaceholder"):
        return SparseTensor(placeholder(dtypes.int64, [None, rank], name="indices"),
                            placeholder(dtype, [None], name="values"),
                            placeholder(dtypes.int64, [rank], name="shape"))
