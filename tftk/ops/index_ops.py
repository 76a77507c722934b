"""Index arithmetic and re-ordering: unravel_index, repeat, reverse_sequence, batch_gather,
where_v2 (broadcasting select), parallel_stack, ensure_shape, bitcast.

The differentiable ones are built from gather / broadcast_to / select, or (reverse_sequence,
ensure_shape) have a gradient of their own written beside them.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.gather_ops import gather, where
from tftk.ops.op_builder import binary_inputs, broadcast_shape, op_scope
from tftk.ops.sequence_ops import range as _range

__all__ = ["unravel_index", "repeat", "reverse_sequence", "batch_gather", "where_v2", "parallel_stack",
           "ensure_shape", "bitcast"]


def _unravel(indices: np.ndarray, dims: np.ndarray) -> np.ndarray:
    size = int(np.prod(dims))
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        raise ValueError(f"unravel_index: index out of range [0, {size}) for dims {dims.tolist()}")
    return np.stack(np.unravel_index(indices, tuple(dims.tolist())))


register_array_op("UnravelIndex", _unravel)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """The coordinates in an array of shape `dims` of each flat index: shape [len(dims)] + indices.shape."""
    idx = convert_to_tensor(indices, name="indices")
    d = convert_to_tensor(dims, dtype=idx.dtype, name="dims")
    if not idx.dtype.is_integer:
        raise TypeError(f"UnravelIndex: indices must be int32 or int64, got {idx.dtype.name}")
    ndims = d.shape.as_list()[0] if d.shape.ndims == 1 else None
    shape = TensorShape(None) if idx.shape.ndims is None else TensorShape([ndims] + idx.shape.as_list())
    return array_op("UnravelIndex", [idx, d], [(idx.dtype, shape)], name)


register_array_op("RepeatIndices", lambda n, repeats: np.repeat(np.arange(int(n)), np.broadcast_to(repeats, (int(n),))))


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Each slice of `input` along `axis` repeated `repeats` times (flattened first when axis is None)."""
    with name_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        if axis is None:
            x, axis = array_ops.reshape(x, [-1]), 0
        r = convert_to_tensor(repeats, dtype=dtypes.int32, name="repeats")
        n = array_ops.shape(x)[axis]
        index = array_op("RepeatIndices", [n, r], [(dtypes.int32, [None])])
        return gather(x, index, axis=axis)


def _reverse_sequence(x: np.ndarray, lengths: np.ndarray, seq_axis: int, batch_axis: int) -> np.ndarray:
    if lengths.shape != (x.shape[batch_axis],):
        raise ValueError(f"reverse_sequence: seq_lengths must be a vector of length {x.shape[batch_axis]}, "
                         f"got shape {list(lengths.shape)}")
    if lengths.size and (lengths.min() < 0 or lengths.max() > x.shape[seq_axis]):
        raise ValueError(f"reverse_sequence: seq_lengths must be in [0, {x.shape[seq_axis]}], got {lengths.tolist()}")
    out = x.copy()
    for b, n in enumerate(lengths.tolist()):
        source = [slice(None)] * x.ndim
        source[batch_axis], source[seq_axis] = b, slice(0, n)
        out[tuple(source)] = np.flip(x[tuple(source)], axis=seq_axis - (seq_axis > batch_axis))
    return out


register_array_op("ReverseSequence", _reverse_sequence, differentiable=True)


@registry.register_gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [array_op("ReverseSequence", [grad, op.inputs[1]], [(grad.dtype, grad.shape)], attrs=dict(op.attrs)),
            None]


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: int | None = None, batch_axis: int | None = None,  # noqa: A002
                     name: str | None = None, seq_dim: int | None = None, batch_dim: int | None = None) -> Tensor:
    """Reverses the first seq_lengths[b] entries along `seq_axis` of each batch entry b."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = (batch_dim if batch_dim is not None else 0) if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis (seq_dim) is required")
    x = convert_to_tensor(input, name="input")
    lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
    rank = x.shape.ndims
    if rank is not None:
        seq_axis, batch_axis = seq_axis % rank, batch_axis % rank
    if seq_axis == batch_axis:
        raise ValueError(f"reverse_sequence: seq_axis and batch_axis must differ, both are {seq_axis}")
    return array_op("ReverseSequence", [x, lengths], [(x.dtype, x.shape)], name,
                    {"seq_axis": seq_axis, "batch_axis": batch_axis})


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """params[b..., indices[b..., j], ...]: a gather per batch entry (the leading rank(indices) - 1 dims)."""
    with name_scope(name, "BatchGather", [params, indices]):
        p = convert_to_tensor(params, name="params")
        idx = convert_to_tensor(indices, name="indices")
        batch_rank = idx.shape.ndims - 1 if idx.shape.ndims is not None else None
        if batch_rank is None:
            raise ValueError("batch_gather: indices must have a known rank")
        if batch_rank == 0:
            return gather(p, idx)
        p_shape, i_shape = array_ops.shape(p), array_ops.shape(idx)
        batch = reduction_ops.reduce_prod(p_shape[:batch_rank])
        rows = p_shape[batch_rank]
        flat_params = array_ops.reshape(p, array_ops.concat([[batch * rows], p_shape[batch_rank + 1:]], 0))
        offsets = math_ops.cast(_range(batch) * rows, idx.dtype)
        flat_idx = array_ops.reshape(idx, array_ops.stack([batch, -1])) + array_ops.expand_dims(offsets, 1)
        out = gather(flat_params, array_ops.reshape(flat_idx, [-1]))
        result = array_ops.reshape(out, array_ops.concat([i_shape, p_shape[batch_rank + 1:]], 0))
        static = p.shape.as_list()[batch_rank + 1:] if p.shape.ndims is not None else None
        if static is not None:
            result.set_shape(idx.shape.concatenate(static))
        return result


register_array_op("SelectV2", np.where, differentiable=True)


@registry.register_gradient("SelectV2")
def _select_v2_grad(op, grad):
    c, x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    return [None, math_ops.unbroadcast(where_v2(c, grad, zeros), x),
            math_ops.unbroadcast(where_v2(c, zeros, grad), y)]


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Broadcasting select: x where condition, else y, all three broadcast together (numpy's rule)."""
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with op_scope(name, "SelectV2", [condition, x, y]) as scope:
        c = convert_to_tensor(condition, name="condition")
        if c.dtype is not dtypes.bool:
            raise TypeError(f"SelectV2: condition must be bool, got {c.dtype.name}")
        a, b = binary_inputs(x, y, "SelectV2")
        shape = broadcast_shape(broadcast_shape(c.shape, a.shape, "SelectV2"), b.shape, "SelectV2")
        return array_op("SelectV2", [c, a, b], [(a.dtype, shape)], scope)


def parallel_stack(values: Sequence[Any], name: str = "parallel_stack") -> Tensor:
    """stack(values) for inputs whose shapes are all fully known (TF's requirement for this op)."""
    with name_scope(name, "parallel_stack", values):
        tensors = [convert_to_tensor(v) for v in values]
        for t in tensors:
            if not t.shape.is_fully_defined():
                raise ValueError(f"parallel_stack: every input needs a fully known shape, got {t.shape}")
        return array_ops.stack(tensors)


def _ensure_shape(x: np.ndarray, shape: Any) -> np.ndarray:
    if not as_shape(shape).is_compatible_with(x.shape):
        raise ValueError(f"Shape of tensor {list(x.shape)} is not compatible with expected shape {as_shape(shape)}.")
    return x


register_array_op("EnsureShape", _ensure_shape, differentiable=True)
registry.register_gradient("EnsureShape")(lambda op, grad: [grad])


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """x, checked at run time to have a shape compatible with `shape`, which it also gets statically."""
    t = convert_to_tensor(x, name="x")
    want = as_shape(shape)
    static = t.shape.merge_with(want)
    return array_op("EnsureShape", [t], [(t.dtype, static)], name,
                    {"shape": None if want.ndims is None else want.as_list()})


def _bitcast(x: np.ndarray, type: str) -> np.ndarray:  # noqa: A002
    target = np.dtype(type)
    if target.itemsize < x.dtype.itemsize:
        return np.ascontiguousarray(x).view(target).reshape(x.shape + (x.dtype.itemsize // target.itemsize,))
    if target.itemsize > x.dtype.itemsize:
        if x.ndim == 0 or x.shape[-1] * x.dtype.itemsize != target.itemsize:
            raise ValueError(f"bitcast: the last dimension of shape {list(x.shape)} must hold exactly one {target}")
        return np.ascontiguousarray(x).view(target).reshape(x.shape[:-1])
    return x.view(target)


register_array_op("Bitcast", _bitcast)


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The same bytes read as another numeric dtype (a dimension added or removed when sizes differ)."""
    x = convert_to_tensor(input, name="input")
    target = dtypes.as_dtype(type)
    if x.dtype is dtypes.string or target is dtypes.string:
        raise TypeError("bitcast: strings cannot be bitcast")
    ratio_in, ratio_out = x.dtype.size, target.size
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None:
        shape = TensorShape(None)
    elif ratio_out < ratio_in:
        shape = TensorShape(dims + [ratio_in // ratio_out])
    elif ratio_out > ratio_in:
        if not dims or (dims[-1] is not None and dims[-1] * ratio_in != ratio_out):
            raise ValueError(f"bitcast: cannot bitcast {x.dtype.name} {x.shape} to {target.name}")
        shape = TensorShape(dims[:-1])
    else:
        shape = x.shape
    return array_op("Bitcast", [x], [(target, shape)], name, {"type": np.dtype(target.as_numpy_dtype).name})
