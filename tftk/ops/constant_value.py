"""Static values of tensors known when the graph is built (constants, static shapes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework.ops import Tensor

__all__ = ["constant_value", "static_ints", "static_axis"]


def constant_value(tensor: Any) -> np.ndarray | None:
    """The value of `tensor` if it can be known without running the graph, else None."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    op = tensor.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.asarray(op.inputs[0].shape.as_list(), dtype=tensor.dtype.as_numpy_dtype)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined():
        return np.asarray(op.inputs[0].shape.num_elements(), dtype=tensor.dtype.as_numpy_dtype)
    if op.type == "Rank" and op.inputs[0].shape.ndims is not None:
        return np.asarray(op.inputs[0].shape.ndims, dtype=np.int32)
    if op.type in ("Identity", "StopGradient"):
        return constant_value(op.inputs[0])
    if op.type == "Pack":
        parts = [constant_value(t) for t in op.inputs]
        if all(p is not None for p in parts):
            return np.stack(parts, axis=op.get_attr("axis"))
    if op.type == "Cast":
        value = constant_value(op.inputs[0])
        return None if value is None else value.astype(tensor.dtype.as_numpy_dtype)
    return None


def static_ints(value: Any, what: str, op_name: str) -> list[int]:
    """A build-time list of ints from a Python value or a constant tensor (else ValueError)."""
    static = constant_value(value)
    if static is None:
        raise ValueError(f"{op_name}: `{what}` must be known when the graph is built")
    return [int(v) for v in np.atleast_1d(static).tolist()]


def static_axis(axis: Any, rank: int | None, op_name: str) -> int:
    """A build-time scalar axis normalised against a (possibly unknown) rank."""
    value = constant_value(axis)
    if value is None or np.ndim(value):
        raise ValueError(f"{op_name}: axis must be a scalar known when the graph is built")
    a = int(value)
    if rank is not None:
        if not -rank <= a < rank:
            raise ValueError(f"{op_name}: axis {a} is out of range for an input of rank {rank}")
        a %= rank
    elif a < 0:
        raise ValueError(f"{op_name}: a negative axis needs an input of known rank")
    return a
