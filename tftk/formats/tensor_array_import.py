"""TF's TensorArrayV3 ops in a GraphDef, rebuilt on tftk's value-based TensorArray ops.

TF's array is a resource: TensorArrayV3 returns a handle and a scalar "flow" that orders the
reads and writes (and travels through loops as a loop variable). tftk's array *is* its flow, one
dense tensor [size, *element_shape] (tftk/ops/tensor_array_ops.py). So the flow output becomes
tftk's buffer and each write returns the new buffer; the handle becomes the array's size tensor
(what tftk's ops take beside the buffer), with the array's dtype, dynamic_size and element shape
kept beside it for the ops that read it. A handle enters a loop as a constant Enter and reaches
its reads and writes as the very same tensor, so the record is found there too.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.formats.op_table import UnsupportedNodeError
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.control_flow_ops import no_op
from tftk.ops.op_builder import make_op

__all__ = ["TENSOR_ARRAY_BUILDERS"]


@dataclass
class _Array:
    """What TF's handle knew about its array."""
    dtype: dtypes.DType
    dynamic_size: bool
    element_shape: TensorShape
    static_size: int | None

    def buffer_shape(self) -> TensorShape:
        return TensorShape([None if self.dynamic_size else self.static_size]).concatenate(self.element_shape)

    def learn(self, element: TensorShape, name: str) -> None:
        if not self.element_shape.is_compatible_with(element):
            raise UnsupportedNodeError(f"node {name!r}: writes elements of shape {element} into a TensorArray of "
                                       f"elements {self.element_shape}")
        self.element_shape = self.element_shape.merge_with(element)


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
    handle = array_ops.identity(size, name=name)
    static = constant_value(size)
    _ARRAYS[handle] = _Array(a["dtype"], bool(a.get("dynamic_size")), _shape_attr(a.get("element_shape")),
                             None if static is None else int(static))
    flow = make_op("TensorArrayEmpty", [], a["dtype"], TensorShape(None), f"{name}/flow")
    return [handle, flow]


def _scatter(x: Sequence[Tensor], a: dict, name: str, single: bool) -> Tensor:
    """TensorArrayWriteV3(handle, index, value, flow) / TensorArrayScatterV3(handle, indices, value, flow)."""
    handle, indices, value, flow = x
    array = _array(handle, name)
    if value.shape.ndims is not None:
        array.learn(value.shape if single else TensorShape(value.shape.as_list()[1:]), name)
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
    return make_op("TensorArrayGather", [flow, math_ops.cast(indices, dtypes.int32), handle], array.dtype,
                   shape, name)


def _size(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    handle, flow = x
    _array(handle, name)
    return make_op("TensorArraySize", [flow, handle], dtypes.int32, [], name)


TENSOR_ARRAY_BUILDERS = {
    "TensorArrayV3": _tensor_array,
    "TensorArrayWriteV3": lambda x, a, name: _scatter(x, a, name, single=True),
    "TensorArrayScatterV3": lambda x, a, name: _scatter(x, a, name, single=False),
    "TensorArrayReadV3": lambda x, a, name: _gather(x, a, name, single=True),
    "TensorArrayGatherV3": lambda x, a, name: _gather(x, a, name, single=False),
    "TensorArraySizeV3": _size,
    "TensorArrayCloseV3": lambda x, a, name: no_op(name=name),
}
