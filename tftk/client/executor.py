"""The engine's entry points: build a plan for a run, bind it to a session, run it.

`build_plan` runs the passes of `tftk.client.plan` (prune, order, check feeds, fuse, slots,
liveness, donation, variable reads), binds each step's kernel in a `KernelContext` (a session's,
or a remote cluster's: the same plan either way) and compiles the straight-line function
(`codegen`); `run_traced` runs the same steps through the `interpreter`.

Sub-plans. Ops that run graphs of their own (while_loop bodies and conditions; next, tf.data's
map and filter functions) get them compiled through ONE entry point, the kernel context's
`function`, from inside their kernel factory:

    def _bind_my_op(op, ctx):
        body = ctx.function(graph, inputs=[placeholder_a, placeholder_b], outputs=[result])
        return lambda a, b: body(a, b)[0]      # compiled once per binding, called per step

`graph` is typically a FuncGraph the function was traced into with placeholder inputs; `inputs`
are the tensors fed positionally (placeholders, or any tensor of the graph), `outputs` the
tensors returned as a tuple of arrays. Sub-plans share the context's variables and per-op state,
so a body reads and updates the same variables as the run that calls it. The ops layer never
imports the client for this: the context comes to the kernel factory as its argument.

A sub-plan called many times in a row with some inputs unchanged (a loop body and its captures)
comes from `ctx.loop_function`, which may hoist work on those inputs out of the calls.

Cond branches are not sub-plans: their ops are steps of the enclosing plan under a guard.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

from tftk.client import codegen, interpreter, run_state, side_thread
from tftk.client.plan import (FusedOp, Plan, accumulate_into_totals, bind, build_steps, check_feeds, fuse_ops,
                              hoist_transposed_inputs, mark_unread_outputs, order, prune, share_transposed_inputs,
                              sink_copies, state_name, stream_sums, variable_of)
from tftk.framework import errors, registry
from tftk.framework.ops import Graph, Operation, Tensor

Inline = registry.Inline
CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class VariableBox:
    """The value of one variable inside one session (None until initialised)."""

    __slots__ = ("value", "name")

    def __init__(self, name: str):
        self.value: np.ndarray | None = None
        self.name = name

    @property
    def initialized(self) -> bool:
        return self.value is not None


class KernelContext:
    """What kernel factories may use: the session's variable boxes and per-op resources."""

    def __init__(self, session: Any):
        self.session = session
        self.closed = threading.Event()  # set when the session closes: waiting kernels give up
        self.timeout_secs: float | None = None  # how long a blocking kernel may wait (operation_timeout_in_ms)
        self.boxes: dict[Operation, VariableBox] = {}
        self._resources: dict[tuple[Operation, str], Any] = {}

    def box(self, variable_op: Operation) -> VariableBox:
        variable_op = variable_op.attrs.get(registry.CAPTURED_STATE_ATTR, variable_op)  # a loop body's stand-in
        box = self.boxes.get(variable_op)
        if box is None:
            shared = variable_op.attrs.get("shared_name")  # queues etc. of one shared name share state
            twin = next((b for o, b in self.boxes.items() if o.attrs.get("shared_name") == shared), None) \
                if shared else None
            box = self.boxes[variable_op] = twin or VariableBox(variable_op.name)
        return box

    def ref_box(self, op: Operation, input_index: int) -> VariableBox:
        """The box behind a reference input (e.g. input 0 of Assign)."""
        producer = variable_of(op.inputs[input_index])
        if not registry.lookup(producer.type).holds_state:
            raise errors.InvalidArgumentError(None, op, f"Input {input_index} of {op.name} ({op.type}) "
                                              "must be a variable reference")
        return self.box(producer)

    def bind(self, op: Operation, kind: Any, donor: int | None) -> Callable:
        """The kernel of `op` in this context (writing into input `donor` when not None)."""
        return kind.kernel(op, self) if donor is None else kind.inplace(op, self, donor)

    def close(self) -> None:
        """Release what the context holds outside the process (connections); nothing here."""

    def function(self, graph: Graph, inputs: Sequence[Tensor], outputs: Sequence[Tensor]) -> Callable[..., tuple]:
        """`outputs` of `graph` as a compiled function of `inputs`, bound to this context.

        The sub-plan entry point (see the module docstring): call the result with one array per
        input, positionally; it returns a tuple with one array per output.
        """
        return build_plan(graph, list(outputs), [], list(inputs), self).function

    def loop_function(self, graph: Graph, inputs: Sequence[Tensor], invariants: Sequence[Tensor],
                      outputs: Sequence[Tensor], summed: Sequence[int] = ()
                      ) -> tuple[Callable[..., tuple], Callable[..., tuple], list[int]]:
        """`function` for a sub-plan called in series with `invariants` fed the same arrays each call
        (a loop body's captures): returns `(call, prepare, accumulated)`.

        `prepare(*invariant_arrays)`, once per series, returns the middle arguments of each
        `call(*input_arrays, *prepared, *totals)`: the arrays themselves, then what the plan hoisted
        out of its calls (transposed copies of weights, `plan.hoist_transposed_inputs`). `summed`: the
        outputs (indices) the caller adds up over the series; those in `accumulated` the call adds
        into `totals` itself (one running total each, in that order; the output is the total after
        the call, the same array where it is C-contiguous: `plan.accumulate_into_totals`).
        """
        plan = build_plan(graph, list(outputs), [], list(inputs) + list(invariants), self, invariant=invariants,
                          summed=summed)
        first = len(inputs)
        copies = [(plan.feeds.index(copy.inputs[0]) - first, self.bind(copy, registry.lookup(copy.type), None))
                  for copy in plan.hoisted]
        if not copies:
            return plan.function, lambda *arrays: arrays, plan.accumulated

        def prepare(*arrays):
            return arrays + tuple(kernel(arrays[i]) for i, kernel in copies)

        return plan.function, prepare, plan.accumulated

    def beside(self, fn: Callable, *args: Any) -> Callable[[], Any] | None:
        """Run `fn(*args)` on the helper thread where this run may use a second thread (its session chose
        to run the step on two threads and nothing else of the run uses the helper now); returns the
        function waiting for its result, or None (then the caller runs it itself)."""
        if not side_thread.pipelines_allowed():
            return None
        side_thread.allow_pipelines(False)  # the helper is taken until join: nothing nested may queue on it
        join = side_thread.beside(fn, *args)

        def joined() -> Any:
            try:
                return join()
            finally:
                side_thread.allow_pipelines(True)

        return joined

    def resource(self, op: Operation, key: str, create: Callable[[], Any]) -> Any:
        """Per-session state of one op (random generators, ...), created on first use."""
        k = (op, key)
        if k not in self._resources:
            self._resources[k] = create()
        return self._resources[k]

    def run_resource(self, op: Operation, key: str, create: Callable[[], Any]) -> Any:
        """State of one op for the run calling the kernel (`tftk.client.run_state`): what a kernel hands
        to a later kernel of the same run (a loop's iterations to its gradient), created on first use in
        the run. Looked up at each call: runs of one session on several threads each have their own."""
        values = run_state.current().values
        k = (self, op, key)
        value = values.get(k)
        if value is None:
            value = values[k] = create()
        return value


def build_plan(graph: Graph, fetches: list[Tensor], targets: list[Operation], feeds: list[Tensor],
               ctx: KernelContext, on_placement: Callable[[Operation], None] | None = None,
               fuse: bool = True, invariant: Sequence[Tensor] = (), summed: Sequence[int] = ()) -> Plan:
    """Prune, order, check, (fuse, stream sums, accumulate summed fetches, hoist and share transposed
    inputs, mark unread outputs, sink copies,) lay out, bind and compile one run of `graph`.

    `invariant`: feeds fed the same arrays over a series of calls (see `KernelContext.loop_function`);
    the copies hoisted out of the calls (`plan.hoisted`) are fed after `feeds`. `summed`: the fetches
    (indices) the caller adds up over those calls; the ones the plan adds into running totals itself
    (`plan.accumulated`) take their totals fed after the copies.
    """
    feed_set = set(feeds)
    ops = order(prune(fetches, targets, feed_set), feed_set)
    check_feeds(ops, feed_set, on_placement)
    hoisted: list = []
    totals: list = []
    accumulated: list = []
    if fuse:  # the passes that change which kernels run (traced runs show the graph's ops)
        ops = stream_sums(fuse_ops(ops, fetches, feed_set), fetches, feed_set)
        if summed:
            ops, totals, accumulated = accumulate_into_totals(ops, fetches, feed_set, summed)
        ops, hoisted = hoist_transposed_inputs(ops, set(invariant))
        ops = sink_copies(mark_unread_outputs(share_transposed_inputs(ops), fetches))
    plan = build_steps(ops, fetches, list(feeds) + [copy.outputs[0] for copy in hoisted] + totals)
    plan.hoisted, plan.accumulated = hoisted, accumulated
    bind(plan, ctx)
    codegen.compile_plan(plan)
    return plan


def run_traced(plan: Plan, feed_values: list[np.ndarray], record: Callable) -> tuple:
    """Run `plan` op by op without compilation, calling `record(op, start_s, end_s, outputs)`.

    Used for RunOptions(trace_level=FULL_TRACE) and the debugger: slower, but sees every op.
    """
    return interpreter.interpret(plan, feed_values, record)


def failing_op(plan: Plan, exc: BaseException) -> Operation | None:
    """The op whose step in the compiled plan raised `exc` (None if it came from elsewhere)."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        step = plan.line_to_step.get((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        found = step.op if step is not None else found
        tb = tb.tb_next
    return found


def unbound_tensor(plan: Plan, exc: UnboundLocalError) -> Tensor | None:
    """The tensor (a fetch if possible) whose value `exc` found unset: it lives in an untaken branch."""
    slot = codegen.unbound_slot(exc)
    if slot is None:
        return None
    same = [t for t, s in plan.slot_of.items() if s == slot]
    fetched = [t for t in plan.fetches if t in same]
    return (fetched or same or [None])[0]


plan_source = codegen.plan_source


__all__ = ["Plan", "KernelContext", "VariableBox", "build_plan", "prune", "order", "fuse_ops", "FusedOp",
           "failing_op", "unbound_tensor", "run_traced", "plan_source", "state_name", "CPU_DEVICE"]
