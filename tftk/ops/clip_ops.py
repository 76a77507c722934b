"""Clipping by value and by norm, as TF1 composes them from element-wise ops (so gradients follow)."""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.gather_ops import where

__all__ = ["clip_by_value", "clip_by_norm", "clip_by_average_norm", "global_norm", "clip_by_global_norm"]


def _values(t: Any) -> Tensor:
    return t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t)


def _like(t: Any, values: Tensor) -> Any:
    """Rebuild `t`'s kind (IndexedSlices stay sparse) around new values."""
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """min(max(t, clip_value_min), clip_value_max), element-wise (IndexedSlices: their values)."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = _values(t)
        clipped = math_ops.maximum(math_ops.minimum(values, clip_value_max), clip_value_min, name=scope)
        if not clipped.shape.is_compatible_with(values.shape):
            raise ValueError(f"clip_by_value: clip bounds would broadcast {values.shape} to {clipped.shape}")
        return _like(t, clipped)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """t * clip_norm / max(l2norm(t, axes), clip_norm): rescale so the L2 norm is at most clip_norm."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t)
        l2sum = reduction_ops.reduce_sum(math_ops.square(values), axis=axes, keepdims=True)
        positive = math_ops.greater(l2sum, 0)
        safe = where(positive, l2sum, array_ops.ones_like(l2sum))  # keeps the gradient finite at 0
        l2norm = where(positive, math_ops.sqrt(safe), l2sum)
        clip = math_ops.cast(convert_to_tensor(clip_norm), values.dtype) if isinstance(clip_norm, Tensor) \
            else clip_norm
        clipped = math_ops.realdiv(math_ops.multiply(values, clip), math_ops.maximum(l2norm, clip))
        return _like(t, array_ops.identity(clipped, name=scope))


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """t * clip_norm / max(l2norm(t) / size(t), clip_norm) (TF1's average-norm clipping)."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]):
        values = convert_to_tensor(t)
        n = math_ops.cast(array_ops.size(values), values.dtype)
        l2norm_inv = math_ops.rsqrt(reduction_ops.reduce_sum(math_ops.square(values)))
        inv_clip = math_ops.reciprocal(clip_norm) if isinstance(clip_norm, Tensor) else 1.0 / clip_norm
        scale = math_ops.minimum(math_ops.multiply(l2norm_inv, n), inv_clip)
        return array_ops.identity(math_ops.multiply(math_ops.multiply(values, clip_norm), scale))


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """sqrt(sum of squared L2 norms) over a list of tensors / IndexedSlices; None entries ignored."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("global_norm: t_list must be a list or tuple of tensors")
    present = [_values(t) for t in t_list if t is not None]
    if not present:
        raise ValueError("global_norm: t_list holds no tensors (all entries are None)")
    with name_scope(name, "global_norm", present):
        dtype = present[0].dtype
        for v in present:
            if v.dtype is not dtype:
                raise TypeError(f"global_norm: all tensors must share a dtype, got {dtype.name} and {v.dtype.name}")
        squares = [reduction_ops.reduce_sum(math_ops.square(v)) for v in present]
        return math_ops.sqrt(math_ops.add_n(squares) if len(squares) > 1 else squares[0])


def clip_by_global_norm(t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None,
                        name: str | None = None) -> tuple[list[Any], Tensor]:
    """Scale every tensor by clip_norm / max(global_norm, clip_norm); returns (clipped list, global norm).

    None entries pass through; IndexedSlices stay IndexedSlices; an infinite or NaN norm makes every
    clipped value NaN, as TF1.
    """
    if not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm: t_list must be a list or tuple")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    with name_scope(name, "clip_by_global_norm", [t for t in t_list if t is not None]):
        clip = math_ops.cast(clip_norm, norm.dtype) if isinstance(clip_norm, Tensor) else \
            convert_to_tensor(clip_norm, dtype=norm.dtype)
        finite_scale = math_ops.multiply(clip, math_ops.minimum(math_ops.reciprocal(norm),
                                                                math_ops.reciprocal(clip)))
        scale = math_ops.add(finite_scale, math_ops.subtract(norm, norm))  # NaN when norm is inf/NaN
        clipped = [None if t is None else _like(t, array_ops.identity(math_ops.multiply(_values(t), scale)))
                   for t in t_list]
    return clipped, norm
