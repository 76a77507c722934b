"""Build-time values for the ops layer: `constant_value` (from tftk.framework.constant_value) and
the static int/axis arguments op constructors require."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework.constant_value import constant_value

__all__ = ["constant_value", "static_ints", "static_axis"]


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


def known_entries(vector: Any) -> list | None:
    """The entries of a 1-D int tensor known at build time (None for the others): all of a constant's,
    those of a Pack of scalars that are constants; None when even its length is unknown."""
    value = constant_value(vector)
    if value is not None:
        return [int(v) for v in np.atleast_1d(value)]
    if vector.op.type == "Pack" and all(t.shape.ndims == 0 for t in vector.op.inputs):
        return [None if (v := constant_value(t)) is None else int(v) for t in vector.op.inputs]
    n = vector.shape.num_elements() if vector.shape.ndims == 1 else None
    return None if n is None else [None] * n
