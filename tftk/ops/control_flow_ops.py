"""Control flow: `cond` (only the taken branch runs), `case`, `group`, `tuple`, `no_op`.

A branch's ops are recorded with a guard (predicate, taken-when); the executor writes them
under an `if`, and a `Merge` op picks the taken branch's result.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tftk.framework import dtypes, nest, registry
from tftk.framework.ops import (Operation, Tensor, control_dependencies, convert_to_tensor,
                                get_default_graph, name_scope)
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["cond", "case", "group", "tuple", "no_op", "merge", "with_dependencies"]

_TupleType = type(())  # this module defines tf.tuple, which shadows the builtin

registry.register_op("NoOp", lambda op, ctx: _nothing)
registry.register_op("Merge", inline=registry.Inline.MERGE)
registry.not_differentiable("NoOp")


def _nothing() -> None:
    return None




@registry.register_gradient("Merge")
def _merge_grad(op, grad):
    pred = op.inputs[0]
    return [None, _branch_grad(grad, pred, True), _branch_grad(grad, pred, False)]


def _branch_grad(grad: Tensor, pred: Tensor, taken: bool) -> Tensor:
    """The output gradient as seen inside one branch (an alias valid only when it ran)."""
    graph = grad.graph
    with graph._cond_branch(pred, taken):
        return make_op("Identity", [grad], grad.dtype, grad.shape)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a target carrying control dependencies."""
    return make_multi_op("NoOp", [], [], name)


def group(*inputs: Any, name: str | None = None) -> Operation:
    """An op that runs all `inputs` (fetching it returns None)."""
    ops = []
    for item in inputs:
        for x in (item if isinstance(item, (list, _TupleType)) else [item]):
            ops.append(_as_op(x))
    graph = ops[0].graph if ops else get_default_graph()
    with graph.as_default(), control_dependencies(ops):
        return no_op(name=name or "group_deps")


def _as_op(x: Any) -> Operation:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    if hasattr(x, "op"):
        return x.op
    raise TypeError(f"group/tuple expect ops or tensors, got {x!r}")


def tuple(tensors: Sequence[Any], name: str | None = None, control_inputs: Any = None) -> list:  # noqa: A001
    """Identities of `tensors` that are only available once all of them are computed."""
    items = [None if t is None else t for t in tensors]
    with name_scope(name, "tuple", [t for t in items if t is not None]) as scope:
        deps = [_as_op(t) for t in items if t is not None] + [_as_op(c) for c in control_inputs or []]
        gate = group(*deps, name="control_dependency" if not scope else None)
        out = []
        for t in items:
            if t is None:
                out.append(None)
            elif isinstance(t, Operation):
                with control_dependencies([gate]):
                    out.append(no_op())
            else:
                with control_dependencies([gate]):
                    out.append(make_op("Identity", [t], t.dtype, t.shape))
        return out


def with_dependencies(dependencies: Sequence[Any], output_tensor: Any, name: str | None = None) -> Tensor:
    """`output_tensor`'s value, produced only after `dependencies` ran."""
    x = convert_to_tensor(output_tensor)
    with name_scope(name, "control_dependency", [x]), control_dependencies(dependencies):
        return make_op("Identity", [x], x.dtype, x.shape)


def merge(pred: Tensor, if_true: Tensor, if_false: Tensor, name: str | None = None) -> Tensor:
    """`if_true` when `pred` else `if_false`; only the chosen one needs to have been computed."""
    shape = if_true.shape if if_true.shape == if_false.shape else \
        (if_true.shape.merge_with(if_false.shape) if if_true.shape.is_compatible_with(if_false.shape)
         else if_true.shape.__class__(None))
    return make_op("Merge", [pred, if_true, if_false], if_true.dtype, shape, name)


def _run_branch(fn: Callable | None, pred: Tensor, taken: bool, label: str) -> Any:
    graph = pred.graph
    with graph._cond_branch(pred, taken), name_scope(label):
        result = fn() if fn is not None else None
    return result


def cond(pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None,
         strict: bool = False, name: str | None = None, fn1: Callable | None = None,
         fn2: Callable | None = None) -> Any:
    """`true_fn()` if `pred` else `false_fn()`; only the taken branch's ops run."""
    true_fn = true_fn or fn1
    false_fn = false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond needs callables true_fn and false_fn")
    with name_scope(name, "cond", [pred]):
        pred = convert_to_tensor(pred)
        if pred.dtype is not dtypes.bool or pred.shape.ndims not in (None, 0):
            raise ValueError(f"cond's pred must be a scalar bool tensor, got {pred!r}")
        true_out = _run_branch(true_fn, pred, True, "cond_true")
        false_out = _run_branch(false_fn, pred, False, "cond_false")
        t_leaves, f_leaves = nest.flatten(true_out), nest.flatten(false_out)
        if len(t_leaves) != len(f_leaves):
            raise ValueError(f"true_fn and false_fn must return the same structure: got {true_out!r} "
                             f"and {false_out!r}")
        merged = []
        for t, f in zip(t_leaves, f_leaves):
            if t is None and f is None:
                merged.append(None)
                continue
            if isinstance(t, Operation) or isinstance(f, Operation):
                with control_dependencies([x for x in (t, f) if x is not None]):
                    merged.append(no_op(name="merge_op"))
                continue
            t = _in_branch(convert_to_tensor(t), pred, True)
            f = _in_branch(convert_to_tensor(f, dtype=t.dtype), pred, False)
            merged.append(merge(pred, t, f))
        result = nest.pack_sequence_as(true_out, merged)
        if not strict and isinstance(result, list) and len(result) == 1:
            return result[0]
        return result


def _in_branch(value: Tensor, pred: Tensor, taken: bool) -> Tensor:
    """A branch result computed outside the branch still has to be *produced* by the branch."""
    if value.op.guard and value.op.guard[-1] == (pred, taken):
        return value
    with pred.graph._cond_branch(pred, taken):
        return make_op("Identity", [value], value.dtype, value.shape)


def case(pred_fn_pairs: Any, default: Callable | None = None, exclusive: bool = False,
         strict: bool = False, name: str = "case") -> Any:
    """The fn of the first true predicate (all of them checked when `exclusive`), else `default`."""
    from tftk.ops.math_ops import cast
    from tftk.ops.reduction_ops import reduce_sum
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if isinstance(pred_fn_pairs, dict):
        pairs.sort(key=lambda p: p[0].name)
    for p, f in pairs:
        if not callable(f):
            raise TypeError(f"fn for pred {p.name} must be callable")
    if default is None:
        if not pairs:
            raise ValueError("case needs at least one pair or a default")
        *pairs, (_, default) = pairs
    with name_scope(name, "case", [p for p, _ in pairs]):
        preds = [convert_to_tensor(p) for p, _ in pairs]
        if exclusive and preds:
            from tftk.ops.array_ops import stack
            count = reduce_sum(cast(stack(preds), dtypes.int32))
            check = make_op("AssertAtMostOneTrue", [count], dtypes.int32, [],
                            attrs={"preds": [p.name for p in preds]})
            preds = [_gate(p, check) for p in preds]
        result = default
        for p, f in reversed(list(zip(preds, [fn for _, fn in pairs]))):
            result = _lazy_cond(p, f, result)
        return result() if callable(result) else result


def _gate(pred: Tensor, check: Tensor) -> Tensor:
    with control_dependencies([check]):
        return make_op("Identity", [pred], pred.dtype, pred.shape)


def _lazy_cond(pred: Tensor, fn: Callable, otherwise: Callable) -> Callable:
    return lambda: cond(pred, fn, otherwise)


def _bind_assert_one(op, ctx):
    from tftk.framework import errors
    names = op.get_attr("preds")

    def kernel(count):
        if count > 1:
            raise errors.InvalidArgumentError(None, op, f"Input error: exclusive=True in case, but more "
                                              f"than one predicate is true among {names}")
        return count
    return kernel


registry.register_op("AssertAtMostOneTrue", _bind_assert_one)
registry.not_differentiable("AssertAtMostOneTrue")
