"""Checks on a tensor's rank, dtype, shape and values that TF1 lists beside its asserts:
assert_rank_in, assert_same_float_dtype, assert_proper_iterable, assert_shapes (verify_tensor_all_finite, which needs the debug
layer's CheckNumerics, is in tftk/api/debugging.py).

Static facts are checked at once (ValueError/TypeError, as TF raises them); what is only known
when the graph runs becomes an Assert op.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.control_flow_ops import group, no_op
from tftk.ops.logging_ops import Assert

__all__ = ["assert_rank_in", "assert_same_float_dtype", "assert_proper_iterable", "assert_shapes"]


def assert_rank_in(x: Any, ranks: Sequence[int], data: Any = None, summarize: int | None = None,
                   message: str | None = None, name: str | None = None) -> Operation:
    """Assert x's rank is one of `ranks` (a ValueError at once when the static rank is known)."""
    with name_scope(name, "assert_rank_in", [x]):
        t = convert_to_tensor(x, name="x")
        wanted = [int(r) for r in ranks]
        if t.shape.ndims is not None:
            if t.shape.ndims not in wanted:
                raise ValueError(f"{message or ''}Tensor {t.name} must have rank in {tuple(wanted)}.  Received "
                                 f"rank {t.shape.ndims}, shape {tuple(t.shape.as_list())}")
            return no_op(name="static_checks_determined_all_ok")
        rank = array_ops.rank(t)
        ok = reduction_ops.reduce_any(math_ops.equal(rank, wanted))
        return Assert(ok, ([message] if message else []) + [f"Tensor {t.name} must have rank in", wanted,
                                                             "Received rank:", rank], summarize=summarize)


def assert_same_float_dtype(tensors: Sequence[Any] | None = None, dtype: Any = None) -> dtypes.DType:
    """The common floating dtype of `tensors` (and `dtype`); ValueError when they differ or are not float."""
    want = None if dtype is None else dtypes.as_dtype(dtype)
    for t in tensors or []:
        got = t.dtype
        if want is None:
            want = got
        elif got is not want:
            raise ValueError(f"Expected {want.name}, got {got.name} for tensor {t!r}.")
    if want is None:
        return dtypes.float32
    if not want.is_floating:
        raise ValueError(f"Expected floating point type, got {want.name}.")
    return want


def assert_proper_iterable(values: Any) -> None:
    """TypeError unless `values` is an iterable of values (not a tensor, array, string or bytes)."""
    if isinstance(values, (Tensor, SparseTensor, np.ndarray)) or np.isscalar(values) and \
            not isinstance(values, (str, bytes)):
        raise TypeError(f"Expected argument 'values' to be a \"proper\" iterable.  Found: {type(values)}")
    if isinstance(values, (str, bytes)):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f"Expected argument 'values' to be iterable.  Found: {type(values)}")


def assert_shapes(shapes: Any, data: Any = None, summarize: int | None = None, message: str | None = None,
                  name: str | None = None) -> Operation:
    """Assert tensors have the given shapes, where a named dimension must be the same size everywhere.

    `shapes` is a list (or dict) of (tensor, shape) pairs; a shape lists sizes (int), names (str, tied
    across tensors), None or '.' (any size), and may start with '...' for any leading dims.
    """
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    with name_scope(name, "assert_shapes", [t for t, _ in pairs]):
        sizes: dict[str, Any] = {}
        checks = []
        for value, spec in pairs:
            t = convert_to_tensor(value)
            spec = list(spec)
            ellipsis = bool(spec) and spec[0] == "..."
            dims = spec[1:] if ellipsis else spec
            rank = t.shape.ndims
            if rank is not None and (rank < len(dims) if ellipsis else rank != len(dims)):
                raise ValueError(f"{message or ''}Specified by tensor {t.name} dimension 0.  Tensor {t.name} must "
                                 f"have rank {'at least ' if ellipsis else ''}{len(dims)}.  Received rank {rank}, "
                                 f"shape {t.shape}")
            dynamic = array_ops.shape(t)
            offset = (rank - len(dims)) if rank is not None else None
            for k, want in enumerate(dims):
                if want is None or want == ".":
                    continue
                static = t.shape.as_list()[offset + k] if offset is not None else None
                if isinstance(want, str):
                    if want not in sizes:
                        sizes[want] = static if static is not None else dynamic[offset + k]
                        continue
                    want = sizes[want]
                if isinstance(want, int) and static is not None:
                    if static != want:
                        raise ValueError(f"{message or ''}Specified by tensor {t.name} dimension {k}.  Tensor "
                                         f"{t.name} dimension {k} must have size {want}.  Received size {static}, "
                                         f"shape {t.shape}")
                    continue
                got = dynamic[offset + k]
                checks.append(Assert(math_ops.equal(got, math_ops.cast(want, got.dtype)),
                                     ([message] if message else []) +
                                     [f"Tensor {t.name} dimension {k} must have size", want, "Received:", got],
                                     summarize=summarize))
        return group(*checks) if checks else no_op(name="static_checks_determined_all_ok")
