"""Python operators on tensors (+ - * / // % ** @, unary -, comparisons, [], &, |, ^, ~), as TF1."""

from __future__ import annotations

from typing import Any, Callable

from tftk.framework.ops import Tensor
from tftk.ops import math_ops, slicing_ops


def _binary(fn: Callable, reverse: bool = False) -> Callable:
    if reverse:
        return lambda self, other: fn(other, self)
    return lambda self, other: fn(self, other)


def _install() -> None:
    pairs: dict[str, Callable[[Any, Any], Tensor]] = {
        "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
        "truediv": math_ops.truediv, "floordiv": math_ops.floordiv, "mod": math_ops.mod,
        "pow": math_ops.pow, "matmul": math_ops.matmul, "and": math_ops.logical_and,
        "or": math_ops.logical_or, "xor": math_ops.logical_xor,
    }
    for name, fn in pairs.items():
        setattr(Tensor, f"__{name}__", _binary(fn))
        setattr(Tensor, f"__r{name}__", _binary(fn, reverse=True))
    for name, fn in {"lt": math_ops.less, "le": math_ops.less_equal, "gt": math_ops.greater,
                     "ge": math_ops.greater_equal}.items():
        setattr(Tensor, f"__{name}__", _binary(fn))
    Tensor.__neg__ = lambda self: math_ops.negative(self)
    Tensor.__abs__ = lambda self: math_ops.abs(self)
    Tensor.__invert__ = lambda self: math_ops.logical_not(self)
    Tensor.__getitem__ = slicing_ops.getitem


_install()
