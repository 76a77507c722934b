"""Op types whose kernel is one numpy function of the input arrays and the op's attrs.

Many TF ops are a few lines of numpy with nothing decided at run time but the arrays: bitwise
ops, set operations, sorting, colour conversions, box suppression. `register_array_op` declares
such a function once as an op type's kernel (called ``fn(*arrays, **attrs)``, returning one array
or a tuple, one per output); `array_op` adds the op to the graph. Each output is cast to the
dtype its tensor was declared with, so the function may compute in float64.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Operation, Tensor
from tftk.ops.op_builder import make_multi_op

__all__ = ["register_array_op", "array_op", "function_attrs"]


def register_array_op(op_type: str, fn: Callable[..., Any], differentiable: bool = False) -> None:
    """Register `fn` as the kernel of `op_type`; without `differentiable` the op has no gradient."""
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        attrs = dict(op.attrs)
        kinds = [t.dtype for t in op.outputs]

        def cast(value: Any, dtype: dtypes.DType) -> np.ndarray:
            if dtype is dtypes.string:
                return np.asarray(value, dtype=object)
            return np.asarray(value).astype(dtype.as_numpy_dtype, copy=False)

        if len(kinds) == 1:
            return lambda *arrays: cast(fn(*arrays, **attrs), kinds[0])
        return lambda *arrays: tuple(cast(v, d) for v, d in zip(fn(*arrays, **attrs), kinds))

    registry.register_op(op_type, factory).extra["array_function"] = fn
    if not differentiable:
        registry.not_differentiable(op_type)


def array_op(op_type: str, inputs: Sequence[Tensor], outputs: Sequence[tuple[dtypes.DType, Any]],
             name: str | None = None, attrs: dict | None = None) -> Any:
    """Add an op of a registered array-function type: its one output, or the list of outputs."""
    op = make_multi_op(op_type, list(inputs), [(dtypes.as_dtype(d), s) for d, s in outputs], name, attrs)
    return op.outputs[0] if len(outputs) == 1 else op.outputs


def function_attrs(op_type: str, attrs: dict) -> dict | None:
    """The `attrs` an array-function op type's function takes as keywords (all of them when it
    takes **kwargs), or None when `op_type` is not an array-function op. A graph TensorFlow wrote
    carries attrs tftk's function does not take (`T`, `Tidx`); its importer keeps only these."""
    import inspect
    kind = registry.find(op_type)
    fn = kind.extra.get("array_function") if kind is not None else None
    if fn is None:
        return None
    try:
        params = inspect.signature(fn).parameters.values()
    except ValueError:  # a numpy ufunc: arrays only
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return dict(attrs)
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return {k: v for k, v in attrs.items() if k in names}
