"""TensorFlow's TensorList ops (`TensorListReserve`, `TensorListPushBack`, `TensorListStack`, ...).

TF 2's functional `While` carries per-iteration values in TensorLists: the stacked outputs of a
`dynamic_rnn`/`scan`, and the intermediates its gradient reads back (pushed by the forward body,
read by the gradient's body). tftk writes its own loops that way (formats/while_export) and runs
the lists of TF's graphs. A list is a `variant` scalar whose value is a `TensorListValue`: an
immutable tuple of arrays (None for an item reserved but not yet set), so a loop variable's old
list is never changed by a push into its new one.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Operation, get_default_graph
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_value import constant_value

__all__ = ["TensorListValue", "as_list_value", "LIST_OP_TYPES", "build_list_op"]


class TensorListValue:
    """A TensorList's items (arrays, or None where reserved and unset) and its element dtype/shape."""

    __slots__ = ("items", "dtype", "element_shape")

    def __init__(self, items: Sequence[Any], dtype: np.dtype, element_shape: tuple | None) -> None:
        self.items, self.dtype, self.element_shape = tuple(items), dtype, element_shape

    def with_items(self, items: Sequence[Any]) -> "TensorListValue":
        return TensorListValue(items, self.dtype, self.element_shape)

    def item(self, index: int, op: Operation, shape_hint: Any = None) -> np.ndarray:
        if not -len(self.items) <= index < len(self.items):
            raise InvalidArgumentError(None, op, f"{op.type}: index {index} is out of range for a TensorList "
                                       f"of {len(self.items)} items")
        value = self.items[index]
        if value is not None:
            return value
        shape = _merged_shape(self.element_shape, shape_hint)
        if shape is None or any(d < 0 for d in shape):
            raise InvalidArgumentError(None, op, f"{op.type}: item {index} was never set and the element "
                                       f"shape {shape} is not fully defined")
        return np.zeros(shape, self.dtype)

    def __add__(self, other: Any) -> "TensorListValue":
        """Item by item (TF's AddN of TensorList gradients); a 0 (ZerosLike of a list) adds nothing;
        an unset item counts as zeros."""
        other = as_list_value(other)
        if not isinstance(other, TensorListValue):
            if np.all(np.asarray(other) == 0):
                return self
            return NotImplemented
        if len(other.items) != len(self.items):
            raise ValueError(f"adding TensorLists of {len(self.items)} and {len(other.items)} items")
        return self.with_items([b if a is None else a if b is None else a + b for a, b in zip(self.items, other.items)])

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"TensorListValue({len(self.items)} items of {self.dtype})"


def as_list_value(value: Any) -> Any:
    """A TensorListValue out of the 0-d object array numpy wraps it in (after an np.add or a copy)."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        return value.item()
    return value


def _shape_value(value: Any) -> tuple | None:
    """An element_shape input (-1 for an unknown rank, -1 dims for unknown sizes) as a tuple."""
    array = np.asarray(value)
    if array.ndim == 0:
        return None if int(array) == -1 else ()
    return tuple(int(d) for d in array)


def _merged_shape(known: tuple | None, hint: Any) -> tuple | None:
    other = None if hint is None else _shape_value(hint)
    if known is None or other is None:
        return known if other is None else other
    return tuple(k if k >= 0 else o for k, o in zip(known, other))


def _element_dtype(op: Operation) -> np.dtype:
    return op.get_attr("element_dtype").as_numpy_dtype


def _bind_empty(op, ctx):
    dtype = _element_dtype(op)
    return lambda element_shape, max_num_elements: TensorListValue((), dtype, _shape_value(element_shape))


def _bind_reserve(op, ctx):
    dtype = _element_dtype(op)
    return lambda element_shape, n: TensorListValue((None,) * int(n), dtype, _shape_value(element_shape))


def _bind_from_tensor(op, ctx):
    dtype = _element_dtype(op)

    def kernel(tensor, element_shape):
        tensor = np.asarray(tensor, dtype)
        return TensorListValue(list(tensor), dtype, tuple(tensor.shape[1:]))
    return kernel


def _bind_push_back(op, ctx):
    dtype = _element_dtype(op)

    def kernel(handle, item):
        handle = as_list_value(handle)
        return handle.with_items(handle.items + (np.asarray(item, dtype),))
    return kernel


def _bind_pop_back(op, ctx):
    def kernel(handle, element_shape):
        handle = as_list_value(handle)
        if not handle.items:
            raise InvalidArgumentError(None, op, "TensorListPopBack: the list is empty")
        return handle.with_items(handle.items[:-1]), handle.item(-1, op, element_shape)
    return kernel


def _bind_get_item(op, ctx):
    return lambda handle, index, element_shape: as_list_value(handle).item(int(index), op, element_shape)


def _bind_set_item(op, ctx):
    dtype = _element_dtype(op)

    def kernel(handle, index, item):
        handle = as_list_value(handle)
        items = list(handle.items)
        index = int(index)
        if not 0 <= index < len(items):
            raise InvalidArgumentError(None, op, f"TensorListSetItem: index {index} is out of range for a "
                                       f"TensorList of {len(items)} items")
        items[index] = np.asarray(item, dtype)
        return handle.with_items(items)
    return kernel


def _bind_stack(op, ctx):
    def kernel(handle, element_shape):
        handle = as_list_value(handle)
        rows = [handle.item(i, op, element_shape) for i in range(len(handle.items))]
        if rows:
            return np.stack(rows)
        shape = _merged_shape(handle.element_shape, element_shape)
        if shape is None or any(d < 0 for d in shape):
            raise InvalidArgumentError(None, op, "TensorListStack: an empty list with an element shape "
                                       f"{shape} that is not fully defined")
        return np.zeros((0,) + shape, handle.dtype)
    return kernel


def _bind_length(op, ctx):
    return lambda handle: np.int32(len(as_list_value(handle).items))


def _bind_element_shape(op, ctx):
    out = op.outputs[0].dtype.as_numpy_dtype

    def kernel(handle):
        shape = as_list_value(handle).element_shape
        return np.asarray(-1 if shape is None else shape, out)
    return kernel


# op type -> (kernel factory, output kinds: "list" (a variant handle), "item", "stack", "int32", "shape")
_KINDS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "EmptyTensorList": (_bind_empty, ("list",)),
    "TensorListReserve": (_bind_reserve, ("list",)),
    "TensorListFromTensor": (_bind_from_tensor, ("list",)),
    "TensorListPushBack": (_bind_push_back, ("list",)),
    "TensorListPopBack": (_bind_pop_back, ("list", "item")),
    "TensorListGetItem": (_bind_get_item, ("item",)),
    "TensorListSetItem": (_bind_set_item, ("list",)),
    "TensorListStack": (_bind_stack, ("stack",)),
    "TensorListLength": (_bind_length, ("int32",)),
    "TensorListElementShape": (_bind_element_shape, ("shape",)),
}
LIST_OP_TYPES = frozenset(_KINDS)

for _type, (_factory, _) in _KINDS.items():
    registry.register_op(_type, _factory)
    registry.not_differentiable(_type)


def _static_element_shape(tensor: Any) -> TensorShape:
    """The element shape an `element_shape` input holds, when it is a constant."""
    value = constant_value(tensor) if tensor is not None else None
    if value is None:
        return TensorShape(None)
    shape = _shape_value(value)
    return TensorShape(None) if shape is None else TensorShape([None if d < 0 else d for d in shape])


def build_list_op(op_type: str, inputs: list, attrs: dict, name: str | None = None) -> Operation:
    """Add a TensorList op: `attrs` as TF names them (element_dtype, shape_type, num_elements, ...)."""
    _, kinds = _KINDS[op_type]
    element_dtype = attrs.get("element_dtype", dtypes.float32)
    shape_input = {"TensorListPopBack": 1, "TensorListGetItem": 2, "TensorListStack": 1}.get(op_type)
    element_shape = _static_element_shape(inputs[shape_input] if shape_input is not None else None)
    specs = []
    for kind in kinds:
        if kind == "list":
            specs.append((dtypes.variant, TensorShape([])))
        elif kind == "item":
            specs.append((element_dtype, element_shape))
        elif kind == "stack":
            specs.append((element_dtype, TensorShape([None]).concatenate(element_shape)))
        elif kind == "int32":
            specs.append((dtypes.int32, TensorShape([])))
        else:
            specs.append((attrs.get("shape_type", dtypes.int32), TensorShape([None])))
    own = {k: v for k, v in attrs.items() if v is not None}
    return get_default_graph().create_op(op_type, inputs, specs, name, own)
