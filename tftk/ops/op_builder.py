"""Helpers every op constructor uses: add an op to the default graph, static broadcasting."""

from __future__ import annotations

from typing import Any, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, get_default_graph
from tftk.framework.tensor_shape import TensorShape, as_shape

__all__ = ["make_op", "make_multi_op", "broadcast_shape", "binary_inputs", "graph_of", "op_scope", "float_input"]


def graph_of(tensors: Sequence[Any]):
    """The graph a new op over `tensors` belongs in: the default graph when it is (nested in) theirs."""
    default = get_default_graph()
    graphs = {t.graph for t in tensors if isinstance(t, Tensor)}
    if not graphs or all(_encloses(g, default) for g in graphs):
        return default
    return next(t.graph for t in tensors if isinstance(t, Tensor))


def op_scope(name: str | None, default_name: str, values: Sequence[Any]):
    """The name scope an op's constructor builds in, as TF1's op wrappers do.

    Constants made from Python operands inside it are named `<op>/y` (`mul/y`), never at the outer
    scope where they would take a name the user means for a variable or placeholder. The yielded
    scope ends in '/': passed as the op's `name`, it names the op exactly (`mul`).
    """
    return graph_of(values).name_scope(name or default_name)


def _encloses(outer, graph) -> bool:
    while graph is not None:
        if graph is outer:
            return True
        graph = getattr(graph, "outer_graph", None)
    return False


def _as_tensors(inputs: Sequence[Any]) -> list:
    """Inputs as tensors: an IndexedSlices (a gradient rule's sparse incoming gradient) as its dense value."""
    return [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in inputs]


def make_op(op_type: str, inputs: Sequence[Tensor], dtype: dtypes.DType, shape: Any,
            name: str | None = None, attrs: dict | None = None) -> Tensor:
    """Add a one-output op to the inputs' graph and return its output tensor."""
    inputs = _as_tensors(inputs)
    graph = graph_of(inputs)
    return graph.create_op(op_type, inputs, [(dtype, as_shape(shape))], name, attrs).outputs[0]


def make_multi_op(op_type: str, inputs: Sequence[Tensor], specs: list[tuple[dtypes.DType, Any]],
                  name: str | None = None, attrs: dict | None = None) -> Operation:
    """Add an op with any number of outputs (possibly none) and return the Operation."""
    inputs = _as_tensors(inputs)
    graph = graph_of(inputs)
    return graph.create_op(op_type, inputs, specs, name, attrs)


def broadcast_shape(a: TensorShape, b: TensorShape, op_name: str = "") -> TensorShape:
    """numpy broadcasting on static shapes; None dims stay unknown unless the other side decides."""
    da, db = a.as_tuple(), b.as_tuple()
    if da is None or db is None:
        return TensorShape(None)
    n = max(len(da), len(db))
    da = (1,) * (n - len(da)) + da
    db = (1,) * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y} for '{op_name}' with "
                             f"input shapes: {a}, {b}.")
    return TensorShape(out)


def binary_inputs(x: Any, y: Any, op_type: str) -> tuple[Tensor, Tensor]:
    """Convert two operands; a Python/numpy operand takes the dtype of the tensor operand.

    Constants are made in the tensor operand's graph, as TF does (`a * 2` with `a` from another
    graph builds there).
    """
    with graph_of([x, y]).as_default():
        if isinstance(x, Tensor) or not isinstance(y, Tensor):
            x = convert_to_tensor(x, name="x")
            y = _operand_like(y, x, "y")
        else:
            y = convert_to_tensor(y, name="y")
            x = _operand_like(x, y, "x")
    if x.dtype is not y.dtype:
        raise TypeError(f"Input 'y' of '{op_type}' Op has type {y.dtype.name} that does not match "
                        f"type {x.dtype.name} of argument 'x'.")
    return x, y


def _operand_like(value: Any, other: Tensor, name: str) -> Tensor:
    """`value` as a tensor of `other`'s dtype; what cannot be converted to it (a tensor or variable of
    another dtype) keeps its own, so the caller's check raises TF's TypeError naming the op's input
    rather than a conversion error."""
    try:
        return convert_to_tensor(value, dtype=other.dtype, name=name)
    except ValueError:
        return convert_to_tensor(value, name=name)


def float_input(x: Any, op_type: str, what: str = "features") -> Tensor:
    """`x` as a tensor, refused with a TypeError naming the op when it is not floating-point."""
    x = convert_to_tensor(x, name=what)
    if not x.dtype.is_floating:
        raise TypeError(f"{op_type}: {what} must be a floating-point tensor, got {x.dtype.name}")
    return x
