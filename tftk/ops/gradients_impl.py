"""Symbolic differentiation: `tf.gradients` builds gradient ops into the graph.

Walk the ops between xs and ys in reverse creation order (a valid reverse topological order,
since an op's inputs always exist before it), call each op's registered rule, and sum the
contributions each tensor receives.
"""

from __future__ import annotations

import enum

from typing import Any, Sequence

from tftk.framework import registry
from tftk.framework.indexed_slices import IndexedSlices
from tftk.ops.indexed_slices_ops import densify
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, guard_scope, name_scope

__all__ = ["gradients", "AggregationMethod"]


class UnconnectedGradients(str, enum.Enum):
    """What `gradients` returns for an x the ys do not depend on: None (TF's default) or zeros."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """Accepted for compatibility; contributions are always summed with add_n."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _as_x(x: Any) -> Tensor:
    if hasattr(x, "_ref"):  # a Variable: differentiate with respect to its reference tensor
        return x._ref()
    return convert_to_tensor(x)


def _ops_between(ys: list[Tensor], xs: list[Tensor], stops: set[Operation]) -> set[Operation]:
    """Ops on some path from an x to a y (the only ones whose rules need calling)."""
    reached: set[Operation] = set()
    frontier = [x.op for x in xs]
    while frontier:
        op = frontier.pop()
        if op in reached:
            continue
        reached.add(op)
        for t in op.outputs:
            frontier.extend(c for c in t.consumers() if c not in reached)
    between: set[Operation] = set()
    frontier = [y.op for y in ys if y.op in reached]
    while frontier:
        op = frontier.pop()
        if op in between:
            continue
        between.add(op)
        if op not in stops:
            frontier.extend(t.op for t in op.inputs if t.op in reached and t.op not in between)
    return between


def _aggregate(contributions: list[Any]) -> Any:
    from tftk.ops.math_ops import add_n
    if not contributions:
        return None
    if len(contributions) == 1:
        return contributions[0]
    if all(isinstance(c, IndexedSlices) for c in contributions):
        from tftk.ops.array_ops import concat
        return IndexedSlices(concat([c.values for c in contributions], 0),
                             concat([c.indices for c in contributions], 0),
                             contributions[0].dense_shape)
    return add_n([densify(c) if isinstance(c, IndexedSlices) else c for c in contributions])


def _leave_branches(grad: Any, from_guard: tuple, to_guard: tuple, like: Tensor) -> Any:
    """A gradient computed inside cond branches, made valid outside them (zero when not taken)."""
    from tftk.ops.array_ops import zeros_like
    from tftk.ops.control_flow_ops import merge
    if isinstance(grad, IndexedSlices):
        grad = densify(grad)
    for level in range(len(from_guard) - 1, len(to_guard) - 1, -1):
        pred, taken = from_guard[level]
        with guard_scope(like.graph, from_guard[:level]):
            zero = zeros_like(like) if like.dtype is grad.dtype else zeros_like(grad)
            grad = merge(pred, grad, zero) if taken else merge(pred, zero, grad)
    return grad


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = UnconnectedGradients.NONE) -> list[Any]:
    """d(sum of ys)/d(x) for each x in xs; None (or zeros, with UnconnectedGradients.ZERO) for an x
    that ys do not depend on."""
    unconnected = UnconnectedGradients(unconnected_gradients)
    ys = [convert_to_tensor(y) for y in (ys if isinstance(ys, (list, tuple)) else [ys])]
    xs = [_as_x(x) for x in (xs if isinstance(xs, (list, tuple)) else [xs])]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    stop_ops = {convert_to_tensor(s).op for s in (stop_gradients or [])}
    graph = ys[0].graph
    with name_scope(name, "gradients", ys + xs):
        between = _ops_between(ys, xs, stop_ops)
        grads: dict[Tensor, list[Any]] = {}
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                from tftk.ops.array_ops import ones_like
                with guard_scope(graph, y.op.guard):
                    # a run-time OnesLike, as TF's Fill(Shape(y)): the seed depends on y, so
                    # fetching a gradient runs the forward ops its rules read state from
                    gy = ones_like(y, name=f"grad_ys_{ys.index(y)}", optimize=False)
            grads.setdefault(y, []).append(convert_to_tensor(gy, dtype=y.dtype))
        for op in sorted(between, key=lambda o: o.id, reverse=True):
            if op in stop_ops or not any(t in grads for t in op.outputs):
                continue
            if not op.inputs:
                continue
            with guard_scope(graph, op.guard):
                out_grads = [_aggregate(grads.get(t, [])) for t in op.outputs]
                for t, g in zip(op.outputs, out_grads):
                    if g is not None:
                        grads[t] = [g]
                in_grads = _call_rule(op, out_grads)
            for x, g in zip(op.inputs, in_grads):
                if g is None or x.op not in between:
                    continue
                if len(x.op.guard) < len(op.guard):
                    g = _leave_branches(g, op.guard, x.op.guard, x)
                grads.setdefault(x, []).append(g)
        results = [_aggregate(grads.get(x, [])) for x in xs]
        if unconnected is UnconnectedGradients.ZERO:
            from tftk.ops.array_ops import zeros_like
            results = [zeros_like(x) if g is None else g for x, g in zip(xs, results)]
        return results


def _call_rule(op: Operation, out_grads: list[Any]) -> Sequence[Any]:
    kind = registry.lookup(op.type)
    if not kind.differentiable:
        return [None] * len(op.inputs)
    if kind.gradient is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
    if len(op.outputs) > 1 and any(g is None for g in out_grads):
        # As TF1: only trainable (float, complex) outputs get zeros; an int output (MaxPool's argmax,
        # TopK's indices) passes None, so no ZerosLike reads an output TF's op does not have.
        from tftk.ops.array_ops import zeros_like
        out_grads = [zeros_like(t) if g is None and (t.dtype.is_floating or t.dtype.is_complex) else g
                     for t, g in zip(op.outputs, out_grads)]
    with name_scope(op.name + "_grad"):
        result = kind.gradient(op, *out_grads)
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(result) != len(op.inputs):
        raise ValueError(f"Gradient rule of {op.type} returned {len(result)} gradients for "
                         f"{len(op.inputs)} inputs of op '{op.name}'")
    return result
