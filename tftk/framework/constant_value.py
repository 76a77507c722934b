"""Static values of tensors known when the graph is built (constants, static shapes).

Each op type says how its output can be known without running (`OpKind.static_value`, declared
where the op is registered); this walk only asks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor

__all__ = ["constant_value"]


def constant_value(tensor: Any) -> np.ndarray | None:
    """The value of `tensor` if it can be known without running the graph, else None."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    try:
        rule = registry.lookup(tensor.op.type).static_value
    except KeyError:
        return None
    return None if rule is None else rule(tensor)
