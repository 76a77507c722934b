"""TF's TensorArrayV3 ops in a GraphDef, rebuilt on tftk's value-based TensorArray ops.

TF's array is a resource: TensorArrayV3 returns a handle and a scalar "flow" that orders the
reads and writes (and travels through loops as a loop variable). tftk's array *is* its flow, one
dense tensor [size, *element_shape] (tftk/ops/tensor_array_ops.py). So the flow output becomes
tftk's buffer and each write returns the new buffer; the handle becomes the array's size tensor
(what tftk's ops take beside the buffer), with the array's dtype, dynamic_size and element shape
kept beside it for the ops that read it. A handle enters a loop as a constant Enter and reaches
its reads and writes as the very same tensor, so the record is found there too.

The gradient arrays of TF1's gradient loops (TensorArrayGradV3) are different: every
TensorArrayGradV3 of one array and `source` names the same array, written in the backward loop
and read outside it (or the reverse), with writes to one index adding up. They are rebuilt as
per-session state, found through the forward array's handle op (which empties them each run),
and their flow is a scalar that only orders the reads after the writes, as TF's is.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Operation, Tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.formats.op_table import UnsupportedNodeError
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.control_flow_ops import no_op
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["TENSOR_ARRAY_BUILDERS"]


@dataclass
class _Array:
    """What TF's handle knew about its array."""
    dtype: dtypes.DType
    dynamic_size: bool
    element_shape: TensorShape
    static_size: int | None
    handle: Operation  # the forward array's handle op (its gradient arrays' state is kept by it)
    gradient: str | None = None  # a gradient array's `source`

    def buffer_shape(self) -> TensorShape:
        return TensorShape([None if self.dynamic_size else self.static_size]).concatenate(self.element_shape)

    def learn(self, element: TensorShape, name: str) -> None:
        if not self.element_shape.is_compatible_with(element):
            raise UnsupportedNodeError(f"node {name!r}: writes elements of shape {element} into a TensorArray of "
                                       f"elements {self.element_shape}")
        self.element_shape = self.element_shape.merge_with(element)


# ---- gradient arrays: per-run state ----------------------------------------------------------

def _gradients_of(ctx, handle: Operation) -> dict:
    """{source: [buffer or None]} of the gradient arrays of the array whose handle op is `handle`, in
    the calling run (each run has its own: `KernelContext.run_resource`)."""
    return ctx.run_resource(handle, "gradient_arrays", dict)


def _bind_handle(op, ctx):
    def kernel(size):
        _gradients_of(ctx, op).clear()  # TF makes the array (and so its gradient arrays) anew at each execution
        return size
    return kernel


def _bind_gradient(op, ctx):
    handle, source = op.get_attr("handle"), op.get_attr("source")

    def kernel(size, flow):
        _gradients_of(ctx, handle).setdefault(source, [None])  # the first TensorArrayGradV3 of a run makes it
        return size, np.float32(0)
    return kernel


def _bind_gradient_write(op, ctx):
    handle, source = op.get_attr("handle"), op.get_attr("source")

    def kernel(flow, indices, value, size):
        slot = _gradients_of(ctx, handle).setdefault(source, [None])
        element = value.shape if np.ndim(indices) == 0 else value.shape[1:]
        if slot[0] is None:
            slot[0] = np.zeros((int(size),) + element, value.dtype)
        np.add.at(slot[0], indices, value)  # a gradient array adds up writes to one index
        return np.float32(0)
    return kernel


def _bind_gradient_read(op, ctx):
    handle, source, name = op.get_attr("handle"), op.get_attr("source"), op.name
    element = op.get_attr("element_shape")

    def kernel(flow, indices, size):
        buffer = _gradients_of(ctx, handle).get(source, [None])[0]
        if buffer is None:
            if element is None:
                raise InvalidArgumentError(None, op, f"{name}: reading a gradient TensorArray nothing was written "
                                           f"to, whose element shape is not known")
            buffer = np.zeros((int(size),) + element, op.outputs[0].dtype.as_numpy_dtype)
        return buffer[indices]
    return kernel


registry.register_op("TensorArrayHandle", _bind_handle, stateful=True)
registry.register_op("TensorArrayGradient", _bind_gradient, stateful=True)
registry.register_op("TensorArrayGradientWrite", _bind_gradient_write, stateful=True)
registry.register_op("TensorArrayGradientRead", _bind_gradient_read, stateful=True)
registry.not_differentiable("TensorArrayHandle", "TensorArrayGradient", "TensorArrayGradientWrite",
                            "TensorArrayGradientRead")


_ARRAYS: "weakref.WeakKeyDictionary[Tensor, _Array]" = weakref.WeakKeyDictionary()


def _array(handle: Tensor, name: str) -> _Array:
    array = _ARRAYS.get(handle)
    if array is None:
        raise UnsupportedNodeError(f"node {name!r}: its TensorArray handle does not come from a TensorArrayV3 node "
                                   f"(tftk follows handles only from TensorArrayV3 through Enter)")
    return array


def _shape_attr(value: Any) -> TensorShape:
    return TensorShape(None) if value is None else TensorShape(value)


def _tensor_array(x: Sequence[Tensor], a: dict, name: str) -> list[Tensor]:
    """TensorArrayV3(size) -> (handle, flow): the size tensor and an empty buffer."""
    size = math_ops.cast(x[0], dtypes.int32)
    handle = make_op("TensorArrayHandle", [size], dtypes.int32, [], name)
    static = constant_value(size)
    _ARRAYS[handle] = _Array(a["dtype"], bool(a.get("dynamic_size")), _shape_attr(a.get("element_shape")),
                             None if static is None else int(static), handle.op)
    flow = make_op("TensorArrayEmpty", [], a["dtype"], TensorShape(None), f"{name}/flow")
    return [handle, flow]


def _scatter(x: Sequence[Tensor], a: dict, name: str, single: bool) -> Tensor:
    """TensorArrayWriteV3(handle, index, value, flow) / TensorArrayScatterV3(handle, indices, value, flow)."""
    handle, indices, value, flow = x
    array = _array(handle, name)
    if value.shape.ndims is not None:
        array.learn(value.shape if single else TensorShape(value.shape.as_list()[1:]), name)
    if array.gradient is not None:
        return make_op("TensorArrayGradientWrite", [flow, math_ops.cast(indices, dtypes.int32), value, handle],
                       dtypes.float32, [], name, {"handle": array.handle, "source": array.gradient})
    return make_op("TensorArrayScatter", [flow, math_ops.cast(indices, dtypes.int32), value, handle], array.dtype,
                   array.buffer_shape(), name, {"dynamic_size": array.dynamic_size})


def _gather(x: Sequence[Tensor], a: dict, name: str, single: bool) -> Tensor:
    """TensorArrayReadV3(handle, index, flow) / TensorArrayGatherV3(handle, indices, flow)."""
    handle, indices, flow = x
    array = _array(handle, name)
    element = array.element_shape
    if "element_shape" in a:
        element = element.merge_with(_shape_attr(a["element_shape"])) \
            if element.is_compatible_with(_shape_attr(a["element_shape"])) else element
    shape = element if single else indices.shape.concatenate(element)
    if array.gradient is not None:
        return make_op("TensorArrayGradientRead", [flow, math_ops.cast(indices, dtypes.int32), handle], array.dtype,
                       shape, name, {"handle": array.handle, "source": array.gradient,
                                     "element_shape": element.as_tuple() if element.is_fully_defined() else None})
    return make_op("TensorArrayGather", [flow, math_ops.cast(indices, dtypes.int32), handle], array.dtype,
                   shape, name)


def _gradient(x: Sequence[Tensor], a: dict, name: str) -> list[Tensor]:
    """TensorArrayGradV3(handle, flow) -> (the gradient array's handle, its flow)."""
    handle, flow = x
    array = _array(handle, name)
    op = make_multi_op("TensorArrayGradient", [handle, flow], [(dtypes.int32, TensorShape([])),
                                                               (dtypes.float32, TensorShape([]))], name,
                       {"handle": array.handle, "source": a["source"]})
    _ARRAYS[op.outputs[0]] = _Array(array.dtype, array.dynamic_size, array.element_shape, array.static_size,
                                    array.handle, a["source"])
    return list(op.outputs)


def _size(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    handle, flow = x
    if _array(handle, name).gradient is not None:
        return array_ops.identity(handle, name=name)
    return make_op("TensorArraySize", [flow, handle], dtypes.int32, [], name)


TENSOR_ARRAY_BUILDERS = {
    "TensorArrayV3": _tensor_array,
    "TensorArrayWriteV3": lambda x, a, name: _scatter(x, a, name, single=True),
    "TensorArrayScatterV3": lambda x, a, name: _scatter(x, a, name, single=False),
    "TensorArrayReadV3": lambda x, a, name: _gather(x, a, name, single=True),
    "TensorArrayGatherV3": lambda x, a, name: _gather(x, a, name, single=False),
    "TensorArraySizeV3": _size,
    "TensorArrayGradV3": _gradient,
    "TensorArrayCloseV3": lambda x, a, name: no_op(name=name),
}
