"""Linear algebra built from matmul and reductions: tensordot, norm."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops
from tftk.ops.op_builder import binary_inputs

__all__ = ["tensordot", "norm"]



# ---- tensordot ----------------------------------------------------------------------------------

def _tensordot_axes(axes: Any, ra: int, rb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > min(ra, rb):
            raise ValueError(f"tensordot: axes={axes} must be in [0, {min(ra, rb)}]")
        return list(np.arange(ra - axes, ra)), list(np.arange(axes))
    pair = list(axes)
    if len(pair) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes = [int(v) % ra for v in np.atleast_1d(pair[0])]
    b_axes = [int(v) % rb for v in np.atleast_1d(pair[1])]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: different number of contraction axes {a_axes} and {b_axes}")
    return a_axes, b_axes


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the paired `axes` of a and b (transpose + reshape + matmul; static shapes)."""
    with name_scope(name, "Tensordot", [a, b]):
        a, b = binary_inputs(a, b, "Tensordot")
        if not a.shape.is_fully_defined() or not b.shape.is_fully_defined():
            raise ValueError(f"tensordot needs fully known static shapes, got {a.shape} and {b.shape}")
        da, db = a.shape.as_list(), b.shape.as_list()
        a_axes, b_axes = _tensordot_axes(axes, len(da), len(db))
        for i, j in zip(a_axes, b_axes):
            if da[i] != db[j]:
                raise ValueError(f"tensordot: dimension {i} of a ({da[i]}) does not match dimension {j} "
                                 f"of b ({db[j]}) for shapes {a.shape} and {b.shape}")
        a_free = [i for i in np.arange(len(da)) if i not in a_axes]
        b_free = [i for i in np.arange(len(db)) if i not in b_axes]
        k = int(np.prod([da[i] for i in a_axes]))
        a2 = array_ops.reshape(array_ops.transpose(a, a_free + a_axes),
                               [int(np.prod([da[i] for i in a_free])), k])
        b2 = array_ops.reshape(array_ops.transpose(b, b_axes + b_free),
                               [k, int(np.prod([db[i] for i in b_free]))])
        return array_ops.reshape(math_ops.matmul(a2, b2), [da[i] for i in a_free] + [db[i] for i in b_free])




def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: bool | None = None,
         name: str | None = None, keep_dims: bool | None = None) -> Tensor:
    """Vector norm over `axis` (all entries when None): ord 'euclidean'/2, 1 or np.inf."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        if ord in ("euclidean", "fro", 2, 2.0):
            return math_ops.sqrt(math_ops.reduce_sum(math_ops.square(x),
                                                     axis=axis, keepdims=keep))
        if ord in (1, 1.0):
            return math_ops.reduce_sum(math_ops.abs(x), axis=axis, keepdims=keep)
        if ord == np.inf:
            return math_ops.reduce_max(math_ops.abs(x), axis=axis, keepdims=keep)
        if isinstance(ord, (int, float)) and ord > 0:
            p = float(ord)
            return math_ops.pow(math_ops.reduce_sum(math_ops.pow(math_ops.abs(x), p), axis=axis, keepdims=keep),
                                1.0 / p)
        raise ValueError(f"norm: ord must be 'euclidean', 'fro', a positive number or np.inf, got {ord!r}")

