"""The op registry, keyed by op-type string: each entry holds a kernel factory and a gradient rule.

Kernel contract: `kernel(op, ctx)` is called once when a plan is bound to a session and returns a
function `fn(*input_arrays)` giving the op's output array (one output) or a tuple (several). The
factory does all attribute work up front so the per-step call is bare.

Execution facts are data on the entry (`OpKind`): whether plans write the op inline instead of
calling a kernel (`inline`), which inputs are variable references it writes through (`ref_inputs`),
whether its output is per-session state (`holds_state`), may wait on other ops (`blocking`), may
run on a task for another process (`remote`), ... Nothing outside the op's own module names an
op-type string to decide how to run it.

Gradient contract (TF1's): `gradient(op, *output_grads)` returns one gradient per input of `op`,
None where an input gets none. Ops listed with `not_differentiable` yield None for every input;
an op with neither is an error at `gradients()` time, naming the op.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["OpKind", "Inline", "register_op", "register_gradient", "not_differentiable", "lookup",
           "registered_types", "RegisterGradient", "NotDifferentiable", "register_fusion", "fusion",
           "state_holder", "find", "CAPTURED_STATE_ATTR", "TRANSPOSED_INPUTS_ATTR", "TRANSPOSED_COPY",
           "UNREAD_OUTPUTS_ATTR", "MATMUL_ACCUMULATE", "IN_PLACE_ATTR"]

# The attr of a sub-graph's stand-in for an outer stateful op (see func_graph.FuncGraph.capture_state)
CAPTURED_STATE_ATTR = "captured_state"
# A plan's attr on an op whose `transposed_inputs` it hands over already transposed: those inputs'
# indices. The copies are made by a step of the plan-only op type TRANSPOSED_COPY (2-D `x.T`, C-contiguous).
TRANSPOSED_INPUTS_ATTR = "_transposed_inputs"
TRANSPOSED_COPY = "TransposedCopy"
# The plan-only op type of a partial sum that adds a 2-D product into the running sum: inputs (sum, a, b),
# attrs transpose_a / transpose_b (`tftk.client.plan.stream_sums`).
MATMUL_ACCUMULATE = "MatMulAccumulate"
# A plan's attr on a MATMUL_ACCUMULATE whose sum is a running total the caller feeds and owns: the product
# is added into that array itself (`tftk.client.plan.accumulate_into_totals`).
IN_PLACE_ATTR = "_in_place"
# A plan's attr on an op that `skips_unread_outputs`: the indices of the outputs no step reads.
UNREAD_OUTPUTS_ATTR = "_unread_outputs"


class Inline(str, enum.Enum):
    """How a plan runs an op that has no kernel call of its own."""

    CONSTANT = "constant"  # the value is the op's `value` attr, known when the plan is built
    FEED = "feed"  # the value must be fed (a placeholder): a plan without the feed is an error
    ALIAS = "alias"  # output 0 is input 0 itself (Identity, StopGradient): no copy, no call
    VARIABLE = "variable"  # output 0 is the op's variable storage in the session (read when used)
    MERGE = "merge"  # tf.cond's join: inputs (pred, value_if_true, value_if_false)


@dataclass
class OpKind:
    """What the engine knows about one op type."""

    type: str
    kernel: Callable | None = None
    inline: Inline | None = None  # set for ops plans write inline (no kernel; see Inline)
    gradient: Callable | None = None
    differentiable: bool = True
    ref_inputs: tuple[int, ...] = ()  # inputs that are variable references, not values
    stateful: bool = False  # never pruned as a duplicate; kernel may keep per-session state
    fresh: bool = False  # the kernel always returns newly allocated arrays (never views of inputs)
    # `inplace(op, ctx, position)` -> fn(*inputs) that may write its result into inputs[position]
    # (when that input's shape and dtype allow); the executor uses it when the input dies there.
    inplace: Callable | None = None
    holds_state: bool = False  # the op's output refers to per-session state (variable, queue, ...)
    blocking: bool = False  # the kernel may wait for other ops; it synchronises itself
    remote: bool = False  # a task may run it for another process: it updates state the task holds
    # `static_value(tensor)` -> the output's value when known at build time (constant folding for
    # shapes and attributes), else None; see framework.constant_value
    static_value: Callable | None = None
    # the output is the element-wise sum of the inputs, each of the output's shape and dtype (AddN):
    # plans may add the inputs two at a time as they are computed (the kernel takes any count)
    sums_inputs: bool = False
    # `transposed_inputs(op)` -> indices of 2-D inputs the kernel reads transposed (MatMul's b under
    # transpose_b): a plan may hand them over as C-contiguous transposed copies, one copy shared by
    # all ops reading the same value, listing them in the op's TRANSPOSED_INPUTS_ATTR
    transposed_inputs: Callable | None = None
    # the kernel may return None for outputs a plan lists in the op's UNREAD_OUTPUTS_ATTR (saving their work)
    skips_unread_outputs: bool = False
    # the output is a copy of the inputs' elements (ConcatV2): plans make it just before its first reader
    copies_inputs: bool = False
    # `rows(op, kinds)` -> each output's kind given the inputs' (`tftk.framework.batch_rows`), or None:
    # whether the op can run on a slice of its step's batch (a plan then runs the examples in slices)
    rows: Callable | None = None
    defined_at: str = ""
    gradient_defined_at: str = ""
    extra: dict = field(default_factory=dict)


_REGISTRY: dict[str, OpKind] = {}


def _caller() -> str:
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def register_op(op_type: str, kernel: Callable | None = None, *, ref_inputs: tuple[int, ...] = (),
                stateful: bool = False, fresh: bool = False, inplace: Callable | None = None,
                holds_state: bool = False, blocking: bool = False, inline: Inline | None = None,
                remote: bool = False, static_value: Callable | None = None, sums_inputs: bool = False,
                transposed_inputs: Callable | None = None, skips_unread_outputs: bool = False,
                copies_inputs: bool = False, rows: Callable | None = None) -> OpKind:
    """Register an op type with its kernel factory (or how it is inlined); twice fails.

    `fresh` promises the kernel's outputs are new arrays; `inplace` gives a variant allowed to
    overwrite an input (see OpKind). Both let the executor reuse buffers of dying temporaries.
    `holds_state` marks ops whose output other ops take as a reference input (variables, queues);
    `blocking` marks kernels that may wait for other ops (and do their own locking); `remote` ops
    may run on a task for other processes. `inline` ops have no kernel (see Inline). `sums_inputs`,
    `transposed_inputs`, `skips_unread_outputs` and `copies_inputs` allow plans to rearrange the
    work (see OpKind); `rows` says which values the op keeps per example (`tftk.framework.batch_rows`).
    """
    if op_type in _REGISTRY and _REGISTRY[op_type].defined_at:
        raise KeyError(f"Op type {op_type!r} is already registered at {_REGISTRY[op_type].defined_at}")
    if (kernel is None) == (inline is None):
        raise ValueError(f"Op type {op_type!r} needs exactly one of a kernel factory or an inline rule")
    kind = _REGISTRY.setdefault(op_type, OpKind(op_type))
    kind.kernel = kernel
    kind.inline = Inline(inline) if inline is not None else None
    kind.remote = remote
    kind.static_value = static_value
    kind.ref_inputs = ref_inputs
    kind.stateful = stateful
    kind.fresh = fresh or inplace is not None
    kind.inplace = inplace
    kind.holds_state = holds_state
    kind.blocking = blocking
    kind.sums_inputs = sums_inputs
    kind.transposed_inputs = transposed_inputs
    kind.skips_unread_outputs = skips_unread_outputs
    kind.copies_inputs = copies_inputs
    kind.rows = rows
    kind.defined_at = _caller()
    return kind


def register_gradient(op_type: str) -> Callable[[Callable], Callable]:
    """Decorator: `@register_gradient("Relu") def _relu_grad(op, grad): ...`."""

    def decorate(fn: Callable) -> Callable:
        kind = _REGISTRY.setdefault(op_type, OpKind(op_type))
        if kind.gradient is not None or not kind.differentiable:
            raise KeyError(f"Gradient for {op_type!r} is already registered at {kind.gradient_defined_at}")
        kind.gradient = fn
        kind.gradient_defined_at = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
        return fn

    return decorate


def not_differentiable(*op_types: str) -> None:
    """Declare op types whose inputs get no gradient (explicitly, so nothing is silently zero)."""
    for op_type in op_types:
        kind = _REGISTRY.setdefault(op_type, OpKind(op_type))
        if kind.gradient is not None:
            raise KeyError(f"{op_type!r} already has a gradient at {kind.gradient_defined_at}")
        kind.differentiable = False
        kind.gradient_defined_at = _caller()


_FUSIONS: dict[tuple[str, str], str] = {}


def register_fusion(producer: str, consumer: str, fused: str) -> None:
    """Plans may run `consumer(producer(...), ...)` as the single op type `fused`, whose inputs are the
    producer's followed by the consumer's other inputs.

    The executor applies it only where the producer's output feeds nothing else and is not fetched;
    `fused`'s kernel factory receives a FusedOp whose `producer` and `consumer` are the two ops.
    """
    key = (producer, consumer)
    if key in _FUSIONS:
        raise KeyError(f"A fusion of {producer} into {consumer} is already registered")
    _FUSIONS[key] = fused


def fusion(producer: str, consumer: str) -> str | None:
    return _FUSIONS.get((producer, consumer))


def lookup(op_type: str) -> OpKind:
    try:
        return _REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"No op type {op_type!r} is registered") from None


def find(op_type: str) -> OpKind | None:
    """The registration of `op_type`, or None when nothing registered it (yet)."""
    return _REGISTRY.get(op_type)


def state_holder(ref: Any) -> Any:
    """The op holding the state behind a reference tensor: through aliases (Identity) and
    through a sub-graph's stand-in to the outer op (a variable assigned inside a loop body)."""
    producer = ref.op
    while True:
        kind = _REGISTRY.get(producer.type)
        if kind is not None and kind.inline is Inline.ALIAS and producer.inputs:
            producer = producer.inputs[0].op
        elif CAPTURED_STATE_ATTR in producer.attrs:
            producer = producer.attrs[CAPTURED_STATE_ATTR]
        else:
            return producer


def registered_types() -> list[str]:
    return sorted(_REGISTRY)


class RegisterGradient:
    """TF1 spelling: `@tf.RegisterGradient("MyOp")`."""

    def __init__(self, op_type: str):
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        return register_gradient(self._op_type)(fn)


NotDifferentiable = not_differentiable
