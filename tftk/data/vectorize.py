"""Map vectorisation: a `Dataset.map` function rewritten to run over a whole batch of elements.

Running the traced function once per element costs a plan call and a kernel call per op for every
record; input pipelines are dominated by that overhead, not by the arithmetic. When every op of
the function has a batched form, `vectorize` rebuilds the function graph over inputs with a
leading batch dimension, so one run maps many elements (TF's map vectorisation, for the ops
input pipelines use):

- the element's placeholders become [None] + shape placeholders; captured tensors stay as they are;
- ops reading no batched value (constants, shapes) are copied unchanged, unless stateful;
- element-wise ops (casts, arithmetic, comparisons, math functions) run as they are, when numpy
  broadcasting keeps each element with itself: every batched operand has the same rank, the
  others at most the element's rank;
- `Reshape` to a static shape becomes a reshape to [-1] + that shape;
- `parse_single_example` with only FixedLenFeatures becomes `parse_example` over the batch.

Anything else (sparse outputs, random or stateful ops, control dependencies, other op types)
leaves the function per element. Results are identical; on an error the caller re-runs the
batch element by element, so the message names the failing element as before.
"""

from __future__ import annotations

from tftk.framework import registry
from tftk.framework.func_graph import FuncGraph
from tftk.framework.ops import Operation, Tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_op import placeholder
from tftk.data.functions import TracedFunction

__all__ = ["vectorize"]

ELEMENTWISE = frozenset({
    "Identity", "Cast", "Neg", "Abs", "Sign", "Square", "Sqrt", "Rsqrt", "Exp", "Expm1", "Log", "Log1p",
    "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Tanh", "Sigmoid", "Reciprocal", "Erf",
    "Floor", "Ceil", "Round", "LogicalNot", "IsFinite", "IsNan", "IsInf",
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum", "Minimum", "Pow",
    "SquaredDifference", "Atan2", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
    "LogicalAnd", "LogicalOr",
})


class _NotVectorizable(Exception):
    """An op of the function has no batched form here."""


def vectorize(function: TracedFunction) -> TracedFunction | None:
    """The function over batches of elements (same inputs, captures and outputs, each with a
    leading batch dimension), or None when some op has no batched form."""
    if function.output_sparse and any(function.output_sparse):
        return None
    graph = function.graph
    batched = FuncGraph(graph.outer_graph, graph.name + "_vectorized")
    mapping: dict[Tensor, tuple[Tensor, bool]] = {}  # original tensor -> (its batched twin, has batch dim)
    captured = set(graph.captures.values())
    try:
        with batched.as_default():
            inputs = []
            for t in graph.inputs:
                twin = placeholder(t.dtype, TensorShape([None]).concatenate(t.shape), name=t.op.name)
                mapping[t] = (twin, True)
                inputs.append(twin)
            for outer, t in graph.captures.items():
                twin = placeholder(t.dtype, t.shape, name=t.op.name)
                mapping[t] = (twin, False)
                batched.captures[outer] = twin  # fed with the same outer values, in the same order
            for op in graph.get_operations():
                if op.outputs and all(t in mapping for t in op.outputs):
                    continue  # an input or capture placeholder, made above
                if op.outputs and op.outputs[0] in captured:
                    continue
                _copy(op, batched, mapping)
    except _NotVectorizable:
        return None
    outputs = []
    for t in function.outputs:
        twin, has_batch = mapping[t]
        if not has_batch:
            return None
        outputs.append(twin)
    batched.inputs = inputs
    batched.outputs = outputs
    return TracedFunction(batched, function.output_structure, outputs, function.what, function.output_sparse)


def _copy(op: Operation, graph: FuncGraph, mapping: dict) -> None:
    """Add the batched form of `op` to `graph`, recording its outputs in `mapping`."""
    if op.control_inputs or registry.lookup(op.type).stateful or any(t not in mapping for t in op.inputs):
        raise _NotVectorizable(op.type)
    inputs = [mapping[t][0] for t in op.inputs]
    flags = [mapping[t][1] for t in op.inputs]
    attrs = dict(op.attrs)
    if not any(flags):
        specs = [(t.dtype, t.shape) for t in op.outputs]
    elif op.type in ELEMENTWISE:
        _check_broadcast(op, flags)
        specs = [(t.dtype, TensorShape([None]).concatenate(t.shape)) for t in op.outputs]
    elif op.type == "Reshape" and op.outputs[0].shape.is_fully_defined():
        attrs["shape"] = (-1,) + op.outputs[0].shape.as_tuple()
        specs = [(op.outputs[0].dtype, TensorShape([None]).concatenate(op.outputs[0].shape))]
    elif op.type == "ParseExample" and _single_dense_parse(op, flags):
        attrs["batched"] = True
        specs = [(t.dtype, TensorShape([None]).concatenate(t.shape)) for t in op.outputs]
    else:
        raise _NotVectorizable(op.type)
    twin = graph.create_op(op.type, inputs, specs, op.name.split("/")[-1], attrs)
    for t, new in zip(op.outputs, twin.outputs):
        mapping[t] = (new, any(flags))


def _check_broadcast(op: Operation, flags: list[bool]) -> None:
    """numpy broadcasting pairs each element with itself only if the batched operands share one
    rank r + 1 and the others have at most rank r (all ranks known)."""
    ranks = [t.shape.ndims for t in op.inputs]
    if any(r is None for r in ranks):
        raise _NotVectorizable(op.type)
    element_ranks = {r for r, batched in zip(ranks, flags) if batched}
    if len(element_ranks) != 1:
        raise _NotVectorizable(op.type)
    rank = element_ranks.pop()
    if any(r > rank for r, batched in zip(ranks, flags) if not batched):
        raise _NotVectorizable(op.type)


def _single_dense_parse(op: Operation, flags: list[bool]) -> bool:
    """parse_single_example of FixedLenFeatures only, without example_names."""
    return (not op.get_attr("batched") and not op.get_attr("sparse") and flags == [True]
            and not any(spec.sequence for spec in op.get_attr("dense")))

