"""`tf.TensorArray`: a list of same-shaped tensors that loops write one element at a time.

The array's value (its `flow`) is one dense tensor of shape [size, *element_shape], so it is an
ordinary loop variable of `tf.while_loop` and its gradient is an ordinary tensor too. Before the
first write the element shape may be unknown; the flow is then an empty marker of shape [0] that
the first write replaces with zeros of the full shape. Every TensorArray made from another by
write/scatter/unstack shares its element-shape record, as in TF1, so a shape learned inside a loop
body is known after the loop.

Unlike TF, all elements must have the same shape: `split` with unequal lengths, and `concat` of
elements of unequal lengths, raise ValueError.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops import array_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.control_flow_ops import no_op
from tftk.ops.op_builder import make_op

__all__ = ["TensorArray"]


def _unwritten(buf: np.ndarray, size: int) -> bool:
    """True for the [0] marker of an array whose element shape is not known yet."""
    return buf.shape == (0,) and size > 0


def _error(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, message)


def _check_rows(indices: np.ndarray, length: int, verb: str, buf: np.ndarray, size: int) -> None:
    flat = np.atleast_1d(indices).reshape(-1)
    if _unwritten(buf, size) and flat.size:
        raise _error(f"Could not {verb} TensorArray index {int(flat[0])} because it has not yet been "
                     f"written to.")
    bad = flat[(flat < 0) | (flat >= length)]
    if bad.size:
        raise _error(f"Tried to {verb} TensorArray index {int(bad[0])} but array size is: {length}")


# ---- kernels -------------------------------------------------------------------------------------

def _gather_kernel(buf, indices, size):
    _check_rows(indices, buf.shape[0], "read from", buf, int(size))
    return buf[indices]


def _gather_grad_kernel(buf, indices, grad):
    out = np.zeros(buf.shape, grad.dtype)
    np.add.at(out, indices, grad)
    return out


def _bind_scatter(op, ctx):
    dynamic = op.get_attr("dynamic_size")

    def kernel(buf, indices, value, size):
        size = int(size)
        element = value.shape if np.ndim(indices) == 0 else value.shape[1:]
        flat = np.atleast_1d(indices).reshape(-1)
        if flat.size and flat.min() < 0:
            raise _error(f"Tried to write to TensorArray index {int(flat.min())}: indices must be >= 0")
        if _unwritten(buf, size) or buf.shape[0] == 0 and size == 0:
            buf = np.zeros((size,) + element, value.dtype)
        elif buf.shape[1:] != element:
            raise _error(f"Could not write to TensorArray: element shape {list(element)} does not match "
                         f"the shape of elements written before, {list(buf.shape[1:])}")
        needed = int(flat.max()) + 1 if flat.size else 0
        if needed > buf.shape[0]:
            if not dynamic:
                raise _error(f"Tried to write to index {needed - 1} but array is not resizeable and "
                             f"size is: {buf.shape[0]}")
            buf = np.concatenate([buf, np.zeros((needed - buf.shape[0],) + element, buf.dtype)])
        else:
            buf = buf.copy()
        buf[indices] = value
        return buf
    return kernel


def _clear_rows_kernel(grad, indices, buf):
    """The gradient reaching the array before a write: the written rows are overwritten, so zero."""
    if buf.shape == (0,):
        return np.zeros(buf.shape, grad.dtype)
    out = grad[:buf.shape[0]].copy()
    out[indices] = 0
    return out


def _bind_stack(op, ctx):
    element = op.get_attr("element_shape")

    def kernel(buf, size):
        size = int(size)
        if _unwritten(buf, size):
            raise _error("Could not read from TensorArray index 0 because it has not yet been written to.")
        if buf.shape == (0,) and element is not None:
            return np.zeros((0,) + element, buf.dtype)
        return buf
    return kernel


def _bind_unstack(op, ctx):
    dynamic = op.get_attr("dynamic_size")

    def kernel(value, size):
        if not dynamic and value.shape[0] != int(size):
            raise _error(f"Tried to unstack a tensor of {value.shape[0]} elements into a TensorArray of "
                         f"size {int(size)} that is not resizeable")
        return value
    return kernel


def _bind_empty(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype
    return lambda: np.zeros((0,), npd)


def _size_kernel(buf, size):
    return np.asarray(int(size) if buf.shape == (0,) else buf.shape[0], np.int32)


registry.register_op("TensorArrayGather", lambda op, ctx: _gather_kernel)
registry.register_op("TensorArrayGatherGrad", lambda op, ctx: _gather_grad_kernel)
registry.register_op("TensorArrayScatter", _bind_scatter)
registry.register_op("TensorArrayClearRows", lambda op, ctx: _clear_rows_kernel)
registry.register_op("TensorArrayStack", _bind_stack)
registry.register_op("TensorArrayUnstack", _bind_unstack)
registry.register_op("TensorArraySize", lambda op, ctx: _size_kernel)
registry.register_op("TensorArrayEmpty", _bind_empty)
registry.not_differentiable("TensorArrayEmpty", "TensorArrayGatherGrad", "TensorArrayClearRows", "TensorArraySize")


@registry.register_gradient("TensorArrayGather")
def _gather_grad(op, grad):
    buf, indices, _ = op.inputs
    return [make_op("TensorArrayGatherGrad", [buf, indices, grad], grad.dtype, buf.shape), None, None]


@registry.register_gradient("TensorArrayScatter")
def _scatter_grad(op, grad):
    buf, indices, value, size = op.inputs
    d_buf = make_op("TensorArrayClearRows", [grad, indices, buf], grad.dtype, buf.shape)
    d_value = make_op("TensorArrayGather", [grad, indices, size], grad.dtype, value.shape)
    return [d_buf, None, d_value, None]


@registry.register_gradient("TensorArrayStack")
def _stack_grad(op, grad):
    return [array_ops.reshape_like(grad, op.inputs[0]), None]


@registry.register_gradient("TensorArrayUnstack")
def _unstack_grad(op, grad):
    return [grad, None]


# ---- the Python object ---------------------------------------------------------------------------

class TensorArray:
    """TF1's `tf.TensorArray`: write/read/stack/unstack/gather/scatter/split/concat/size."""

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: bool | None = None,
                 clear_after_read: bool | None = None, tensor_array_name: str | None = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: str | None = None):
        if handle is not None:
            raise ValueError("TensorArray: `handle` is not supported; build the array from dtype and size")
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        if size is None and not self._dynamic_size and flow is None:
            raise ValueError("TensorArray: size must be given unless dynamic_size=True")
        self._infer_shape = infer_shape
        with name_scope(name, "TensorArray"):
            self._size = convert_to_tensor(0 if size is None else size, dtype=dtypes.int32, name="size")
            static = constant_value(self._size)
            self._static_size = None if static is None or self._dynamic_size else int(static)
            self._element_shape = [as_shape(element_shape) if element_shape is not None else TensorShape(None)]
            self._flow = convert_to_tensor(flow) if flow is not None else make_op(
                "TensorArrayEmpty", [], self._dtype, TensorShape(None), "flow")

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def flow(self) -> Tensor:
        """The array's value as one tensor [size, *element_shape] (or [0] before the first write)."""
        return self._flow

    @property
    def handle(self) -> Tensor:
        return self._flow

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def _with_flow(self, flow: Tensor) -> "TensorArray":
        """A TensorArray over `flow` sharing this one's size and element-shape record."""
        ta = TensorArray.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta._flow = flow
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not self._element_shape[0].is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self._element_shape[0]} "
                             f"(and infer_shape=True)")
        if self._infer_shape:
            self._element_shape[0] = self._element_shape[0].merge_with(shape)

    def _buffer_shape(self) -> TensorShape:
        return TensorShape([self._static_size]).concatenate(self._element_shape[0])

    def _index(self, index: Any) -> Tensor:
        return convert_to_tensor(index, dtype=dtypes.int32, name="index")

    def identity(self) -> "TensorArray":
        return self._with_flow(array_ops.identity(self._flow))

    def size(self, name: str | None = None) -> Tensor:
        """The number of elements (a scalar int32 tensor)."""
        return make_op("TensorArraySize", [self._flow, self._size], dtypes.int32, [], name or "TensorArraySize")

    def read(self, index: Any, name: str | None = None) -> Tensor:
        """The element at `index`."""
        with name_scope(name, "TensorArrayRead", [self._flow]):
            return make_op("TensorArrayGather", [self._flow, self._index(index), self._size], self._dtype,
                           self._element_shape[0])

    def gather(self, indices: Any, element_shape: Any = None, name: str | None = None) -> Tensor:
        """The elements at `indices`, stacked: shape [len(indices), *element_shape]."""
        with name_scope(name, "TensorArrayGather", [self._flow]):
            idx = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            return make_op("TensorArrayGather", [self._flow, idx, self._size], self._dtype,
                           idx.shape.concatenate(self._element_shape[0]))

    def write(self, index: Any, value: Any, name: str | None = None) -> "TensorArray":
        """A new TensorArray with `value` at `index` (grows the array when dynamic_size)."""
        with name_scope(name, "TensorArrayWrite", [self._flow, value]):
            v = convert_to_tensor(value, dtype=self._dtype, name="value")
            self._merge_element_shape(v.shape)
            flow = make_op("TensorArrayScatter", [self._flow, self._index(index), v, self._size],
                           self._dtype, self._buffer_shape(), attrs={"dynamic_size": self._dynamic_size})
            return self._with_flow(flow)

    def scatter(self, indices: Any, value: Any, name: str | None = None) -> "TensorArray":
        """A new TensorArray with value[i] written at indices[i]."""
        with name_scope(name, "TensorArrayScatter", [self._flow, value]):
            v = convert_to_tensor(value, dtype=self._dtype, name="value")
            idx = convert_to_tensor(indices, dtype=dtypes.int32, name="indices")
            if v.shape.ndims is not None:
                self._merge_element_shape(TensorShape(v.shape.as_list()[1:]))
            flow = make_op("TensorArrayScatter", [self._flow, idx, v, self._size], self._dtype,
                           self._buffer_shape(), attrs={"dynamic_size": self._dynamic_size})
            return self._with_flow(flow)

    def unstack(self, value: Any, name: str | None = None) -> "TensorArray":
        """A new TensorArray whose element i is value[i]."""
        with name_scope(name, "TensorArrayUnstack", [self._flow, value]):
            v = convert_to_tensor(value, dtype=self._dtype, name="value")
            if v.shape.ndims == 0:
                raise ValueError("TensorArray.unstack: value must have rank >= 1, got a scalar")
            if v.shape.ndims is not None:
                self._merge_element_shape(TensorShape(v.shape.as_list()[1:]))
                n = v.shape.as_list()[0]
                if self._static_size is not None and n is not None and n != self._static_size:
                    raise ValueError(f"TensorArray.unstack: value has {n} elements but the array's size "
                                     f"is {self._static_size}")
            flow = make_op("TensorArrayUnstack", [v, self._size], self._dtype, v.shape,
                           attrs={"dynamic_size": self._dynamic_size})
            return self._with_flow(flow)

    def stack(self, name: str | None = None) -> Tensor:
        """All elements stacked into one tensor [size, *element_shape]."""
        with name_scope(name, "TensorArrayStack", [self._flow]):
            element = self._element_shape[0]
            return make_op("TensorArrayStack", [self._flow, self._size], self._dtype, self._buffer_shape(),
                           attrs={"element_shape": element.as_tuple() if element.is_fully_defined() else None})

    def concat(self, name: str | None = None) -> Tensor:
        """The elements joined along their first axis: [size * n, *element_shape[1:]]."""
        with name_scope(name, "TensorArrayConcat", [self._flow]):
            stacked = self.stack()
            element = self._element_shape[0]
            if element.ndims == 0:
                raise ValueError("TensorArray.concat: elements must have rank >= 1, got scalars")
            rest = element.as_list()[1:] if element.ndims is not None else None
            if rest is None or any(d is None for d in rest):
                raise ValueError(f"TensorArray.concat needs the element shape beyond the first axis known, "
                                 f"got {element}")
            return array_ops.reshape(stacked, [-1] + rest)

    def split(self, value: Any, lengths: Any, name: str | None = None) -> "TensorArray":
        """A new TensorArray of the pieces of `value` along axis 0 (all `lengths` equal, see module doc)."""
        with name_scope(name, "TensorArraySplit", [self._flow, value]):
            v = convert_to_tensor(value, dtype=self._dtype, name="value")
            lens = constant_value(lengths)
            if lens is None:
                raise ValueError("TensorArray.split: lengths must be known when the graph is built")
            lens = np.atleast_1d(lens).astype(np.int64)
            if lens.size and (lens != lens[0]).any():
                raise ValueError(f"TensorArray.split: tftk's TensorArray holds elements of one shape; lengths "
                                 f"{lens.tolist()} must all be equal")
            if v.shape.ndims in (None, 0) or any(d is None for d in v.shape.as_list()[1:]):
                raise ValueError(f"TensorArray.split: value needs rank >= 1 and known dimensions beyond the "
                                 f"first, got {v.shape}")
            n = int(lens[0]) if lens.size else 0
            pieces = array_ops.reshape(v, [int(lens.size), n] + v.shape.as_list()[1:])
            return self.unstack(pieces)

    def close(self, name: str | None = None):
        """Nothing to release (the array is a tensor); returns a no-op for control dependencies."""
        return no_op(name=name or "TensorArrayClose")
