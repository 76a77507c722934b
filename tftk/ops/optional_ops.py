"""TensorFlow's Optional ops (`OptionalFromValue`, `OptionalNone`, `OptionalGetValue`,
`OptionalHasValue`), as TF 2's functional `If` uses them.

The gradient of an `If` reads intermediates of the branch that ran: the forward If returns them
wrapped as Optionals, a value from the taken branch and `OptionalNone` from the other. An Optional
is a `variant` scalar whose value is an `OptionalValue` (the components, or None).
"""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Operation, get_default_graph
from tftk.framework.tensor_shape import TensorShape

__all__ = ["OptionalValue", "OPTIONAL_OP_TYPES", "build_optional_op"]


class OptionalValue:
    """An Optional's components (a tuple of arrays), or None for OptionalNone's."""

    __slots__ = ("components",)

    def __init__(self, components: tuple | None) -> None:
        self.components = components

    def __repr__(self) -> str:
        return "OptionalValue(none)" if self.components is None else f"OptionalValue({len(self.components)} components)"


def _unwrap(value: Any) -> Any:
    """The OptionalValue out of a 0-d object array numpy may have put it in."""
    return value.item() if getattr(value, "dtype", None) == object and getattr(value, "ndim", 1) == 0 else value


def _bind_from_value(op, ctx):
    return lambda *components: OptionalValue(tuple(components))


def _bind_none(op, ctx):
    return lambda: OptionalValue(None)


def _bind_get_value(op, ctx):
    def kernel(optional):
        components = _unwrap(optional).components
        if components is None:
            raise InvalidArgumentError(None, op, "OptionalGetValue: the optional has no value")
        return components if len(components) != 1 else components[0]
    return kernel


def _bind_has_value(op, ctx):
    import numpy as np
    return lambda optional: np.bool_(_unwrap(optional).components is not None)


_KERNELS = {"OptionalFromValue": _bind_from_value, "OptionalNone": _bind_none,
            "OptionalGetValue": _bind_get_value, "OptionalHasValue": _bind_has_value}
OPTIONAL_OP_TYPES = frozenset(_KERNELS)
for _type, _factory in _KERNELS.items():
    registry.register_op(_type, _factory)
    registry.not_differentiable(_type)


def build_optional_op(op_type: str, inputs: list, attrs: dict, name: str | None = None) -> Operation:
    """Add an Optional op; `attrs` as TF names them (Toutput_types, output_types, output_shapes)."""
    if op_type == "OptionalGetValue":
        shapes = attrs.get("output_shapes") or [None] * len(attrs["output_types"])
        specs = [(dt, TensorShape(s)) for dt, s in zip(attrs["output_types"], shapes)]
    elif op_type == "OptionalHasValue":
        specs = [(dtypes.bool, TensorShape([]))]
    else:
        specs = [(dtypes.variant, TensorShape([]))]
    own = {k: v for k, v in attrs.items() if v is not None}
    return get_default_graph().create_op(op_type, inputs, specs, name, own)
