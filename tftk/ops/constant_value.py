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
