"""Python operators on tensors (+ - * / // % ** @, unary -, comparisons, [], &, |, ^, ~), as TF1."""

from __future__ import annotations

from typing import Any, Callable

from tftk.framework.ops import Tensor
from tftk.ops import math_ops, slicing_ops
from tftk.ops.op_builder import op_scope


def _binary(fn: Callable, scope_name: str, reverse: bool = False) -> Callable:
    """`x <op> y` named as TF1's operator wrappers name it: op `mul`, a Python operand `mul/y`."""
    def operator(self: Tensor, other: Any) -> Tensor:
        with op_scope(None, scope_name, [self, other]) as scope:
            return fn(other, self, name=scope) if reverse else fn(self, other, name=scope)

    return operator


def _install() -> None:
    pairs: dict[str, Callable[[Any, Any], Tensor]] = {
        "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
        "truediv": math_ops.truediv, "floordiv": math_ops.floordiv, "mod": math_ops.mod,
        "pow": math_ops.pow, "matmul": math_ops.matmul, "and": math_ops.logical_and,
        "or": math_ops.logical_or, "xor": math_ops.logical_xor,
    }
    for name, fn in pairs.items():
        setattr(Tensor, f"__{name}__", _binary(fn, name))
        setattr(Tensor, f"__r{name}__", _binary(fn, name, reverse=True))
    # comparisons call the ops directly in TF1: `x < 1` is op `Less` with `Less/y`
    for name, fn in {"lt": math_ops.less, "le": math_ops.less_equal, "gt": math_ops.greater,
                     "ge": math_ops.greater_equal}.items():
        setattr(Tensor, f"__{name}__", lambda self, other, fn=fn: fn(self, other))
    Tensor.__neg__ = lambda self: math_ops.negative(self)
    Tensor.__abs__ = lambda self: math_ops.abs(self)
    Tensor.__invert__ = lambda self: math_ops.logical_not(self)
    Tensor.__getitem__ = slicing_ops.getitem


_install()
