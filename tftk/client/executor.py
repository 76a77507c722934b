"""Execution plans: prune, order (Kahn's in-degree counting, as seed 001 describes), compile.

A plan is built once per (fetches, feeds) and turned into one straight-line Python function:
each op becomes one line calling its bound kernel, each intermediate is released (`t = None`)
right after its last use, and ops inside a `tf.cond` branch sit under an `if` on the predicate.
The per-step loop therefore does no graph work at all and costs about one Python call per op.
"""

from __future__ import annotations

import collections
import linecache
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

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
        box = self.boxes.get(variable_op)
        if box is None:
            shared = variable_op.attrs.get("shared_name")  # queues etc. of one shared name share state
            twin = next((b for o, b in self.boxes.items() if o.attrs.get("shared_name") == shared), None) \
                if shared else None
            box = self.boxes[variable_op] = twin or VariableBox(variable_op.name)
        return box

    def ref_box(self, op: Operation, input_index: int) -> VariableBox:
        """The box behind a reference input (e.g. input 0 of Assign)."""
        producer = op.inputs[input_index].op
        while _inline(producer) is Inline.ALIAS and producer.inputs:
            producer = producer.inputs[0].op
        if not registry.lookup(producer.type).holds_state:
            raise errors.InvalidArgumentError(None, op, f"Input {input_index} of {op.name} ({op.type}) "
                                              "must be a variable reference")
        return self.box(producer)

    def bind(self, op: Operation, kind: Any, donor: int | None) -> Callable:
        """The kernel of `op` in this context (writing into input `donor` when not None)."""
        return kind.kernel(op, self) if donor is None else kind.inplace(op, self, donor)

    def close(self) -> None:
        """Release what the context holds outside the process (connections); nothing here."""

    def resource(self, op: Operation, key: str, create: Callable[[], Any]) -> Any:
        """Per-session state of one op (random generators, ...), created on first use."""
        k = (op, key)
        if k not in self._resources:
            self._resources[k] = create()
        return self._resources[k]


@dataclass
class Plan:
    """A compiled run: call `function(*feed_arrays)` to get the fetched arrays (a tuple)."""

    function: Callable
    ops: list[Operation]
    fetches: list[Tensor]
    feeds: list[Tensor]
    line_to_op: dict[int, Operation] = field(default_factory=dict)
    value_names: dict[Tensor, str] = field(default_factory=dict)  # the Python name of each value
    storage_names: set[str] = field(default_factory=set)  # values fetched as copies (see _compile)
    traced_function: Callable | None = None


def prune(fetches: list[Tensor], targets: list[Operation], feeds: set[Tensor]) -> list[Operation]:
    """The ops the fetches and targets need, following data, control and cond-guard edges."""
    needed: set[Operation] = set()
    stack: list[Operation] = [t.op for t in fetches if t not in feeds] + list(targets)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        ref_inputs = registry.lookup(op.type).ref_inputs
        for i, t in enumerate(op.inputs):
            if i not in ref_inputs and t not in feeds and t.op not in needed:
                stack.append(t.op)
        stack.extend(c for c in op.control_inputs if c not in needed)
        stack.extend(pred.op for pred, _ in op._guard if pred not in feeds and pred.op not in needed)
    return list(needed)


def order(ops: list[Operation], feeds: set[Tensor]) -> list[Operation]:
    """Topological order by in-degree counting with a first-in-first-out ready queue (seed 001).

    The queue starts with the ready ops in creation order and consumers are released in creation
    order, so plans are deterministic; FIFO matches TF1's executor where ordering is observable
    (e.g. an increment and a read of the same variable fetched in one run).
    """
    ops = sorted(ops, key=lambda o: o._id)
    members = set(ops)
    deps_of = {op: _dependencies(op, feeds) & members for op in ops}
    with_writes = _writes_before_reads(ops, deps_of)
    try:
        return _kahn(ops, with_writes)
    except errors.InvalidArgumentError:
        return _kahn(ops, deps_of)  # the extra edges closed a cycle: keep the graph's own order


def _writes_before_reads(ops: list[Operation], deps_of: dict) -> dict:
    """Add edges so a variable update runs before reads of that variable it is not ordered with.

    TF1 programs rely on this: `sess.run([global_step.assign_add(1), decayed_lr])` shows the
    incremented step (seed 000), and moving averages grouped after a train op see the updated
    weights (seed 004). A read that the update itself needs (the gradient) is left alone.
    """
    writers: dict[Operation, list[Operation]] = collections.defaultdict(list)
    for op in ops:
        for i in registry.lookup(op.type).ref_inputs:
            writers[_variable_of(op.inputs[i])].append(op)
    if not writers:
        return deps_of
    members = set(ops)
    extra = {op: set(d) for op, d in deps_of.items()}
    ancestors_cache: dict[Operation, set] = {}

    def ancestors(op: Operation) -> set:
        if op not in ancestors_cache:
            seen: set = set()
            stack = list(deps_of[op])
            while stack:
                o = stack.pop()
                if o not in seen:
                    seen.add(o)
                    stack.extend(deps_of[o])
            ancestors_cache[op] = seen
        return ancestors_cache[op]

    for variable, writes in writers.items():
        for reader in _readers(variable, members):
            for write in writes:
                if reader is not write and reader not in ancestors(write) and reader not in writes:
                    extra[reader].add(write)
    return extra


def state_name(op: Operation) -> str:
    """The name a task keeps an op's state under: its shared_name when given, else its own name."""
    return op.attrs.get("shared_name") or op.name


def _variable_of(ref: Tensor) -> Operation:
    producer = ref.op
    while _inline(producer) is Inline.ALIAS and producer.inputs:
        producer = producer.inputs[0].op
    return producer


def _readers(variable: Operation, members: set) -> list[Operation]:
    """Ops of the plan that consume the variable's storage as a value (through Identity aliases)."""
    readers, frontier = [], list(variable.outputs)
    while frontier:
        tensor = frontier.pop()
        for consumer in tensor._consumers:
            if consumer not in members:
                continue
            refs = registry.lookup(consumer.type).ref_inputs
            if all(consumer.inputs[i] is not tensor for i in refs if i < len(consumer.inputs)) or not refs:
                if _inline(consumer) is Inline.ALIAS:
                    frontier.extend(consumer.outputs)
                else:
                    readers.append(consumer)
    return readers


def _kahn(ops: list[Operation], deps_of: dict) -> list[Operation]:
    indegree: dict[Operation, int] = {}
    consumers: dict[Operation, list[Operation]] = collections.defaultdict(list)
    for op in ops:
        deps = deps_of[op]
        indegree[op] = len(deps)
        for d in deps:
            consumers[d].append(op)
    ready = collections.deque(op for op in ops if indegree[op] == 0)
    result: list[Operation] = []
    while ready:
        op = ready.popleft()
        result.append(op)
        for c in consumers[op]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    if len(result) != len(ops):
        stuck = [op for op in ops if indegree[op] > 0]
        raise errors.InvalidArgumentError(None, stuck[0], "Graph has a cycle through: "
                                          + ", ".join(o.name for o in stuck[:5]))
    return result


def _dependencies(op: Operation, feeds: set[Tensor]) -> set[Operation]:
    kind_refs = registry.lookup(op.type).ref_inputs
    deps = {t.op for i, t in enumerate(op.inputs) if i not in kind_refs and t not in feeds}
    deps.update(op.control_inputs)
    deps.update(pred.op for pred, _ in op._guard if pred not in feeds)
    return deps


_plan_counter = 0


def build_plan(graph: Graph, fetches: list[Tensor], targets: list[Operation], feeds: list[Tensor],
               ctx: KernelContext, on_placement: Callable[[Operation], None] | None = None,
               fuse: bool = True) -> Plan:
    """Prune, order, (fuse,) bind kernels and compile one run of `graph`."""
    feed_set = set(feeds)
    ops = order(prune(fetches, targets, feed_set), feed_set)
    for op in ops:
        if _inline(op) is Inline.FEED and not any(t in feed_set for t in op.outputs):
            shape = op.outputs[0].shape
            raise errors.InvalidArgumentError(
                None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                f"{op.outputs[0].dtype.name}" + ("" if shape.ndims is None else f" and shape {shape}"))
        if on_placement is not None:
            on_placement(op)
    if fuse:
        ops = fuse_ops(ops, fetches, feed_set)
    return _compile(ops, fetches, feeds, ctx)


class FusedOp:
    """Two adjacent ops run as one kernel: `consumer(producer(*inputs))` (see register_fusion)."""

    def __init__(self, fused_type: str, producer: Operation, consumer: Operation):
        self.type = fused_type
        self.producer, self.consumer = producer, consumer
        self.name = consumer.name
        self.inputs = producer.inputs
        self.outputs = consumer.outputs
        self.control_inputs = consumer.control_inputs
        self._guard = producer._guard
        self._id = consumer._id
        self.graph = consumer.graph

    def get_attr(self, name: str) -> Any:
        return self.producer.get_attr(name)

    def __repr__(self) -> str:
        return f"<FusedOp {self.type}: {self.producer.name} -> {self.consumer.name}>"


def fuse_ops(ops: list, fetches: list[Tensor], feeds: set[Tensor]) -> list:
    """Replace adjacent (producer, consumer) pairs that have a registered fusion by one FusedOp.

    Only where the producer's single output is read by that consumer alone, is not fetched or fed,
    and both ops live in the same cond branch: the fused plan then computes the same values.
    """
    readers: dict[Tensor, int] = collections.Counter()
    for op in ops:
        for t in op.inputs:
            readers[t] += 1
        for pred, _ in op._guard:
            readers[pred] += 1
    fetched = set(fetches)
    result: list = []
    i = 0
    while i < len(ops):
        op = ops[i]
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        fused = registry.fusion(op.type, nxt.type) if nxt is not None else None
        if fused is not None and len(op.outputs) == 1 and tuple(nxt.inputs) == (op.outputs[0],) \
                and readers[op.outputs[0]] == 1 and op.outputs[0] not in fetched \
                and op.outputs[0] not in feeds and op._guard == nxt._guard:
            result.append(FusedOp(fused, op, nxt))
            i += 2
            continue
        result.append(op)
        i += 1
    return result


def _compile(ops: list[Operation], fetches: list[Tensor], feeds: list[Tensor],
             ctx: KernelContext) -> Plan:
    global _plan_counter
    _plan_counter += 1
    filename = f"<tftk-plan-{_plan_counter}>"
    namespace: dict[str, Any] = {"_uninitialized": _uninitialized, "_copy": np.copy}

    # 1. A Python name for every value. Identity-like ops alias their input and constants are
    #    globals of the generated function: neither costs a line.
    names: dict[Tensor, str] = {t: f"f{i}" for i, t in enumerate(feeds)}
    aliasing: set[str] = set()  # names whose array may be (a view of) a variable's storage
    for op in ops:
        for t in op.outputs:
            if t in names:
                continue
            if _inline(op) is Inline.CONSTANT:
                names[t] = f"c{op._id}"
                namespace[names[t]] = op.get_attr("value")
            elif _inline(op) is Inline.ALIAS:
                names[t] = names[op.inputs[0]]
            else:
                names[t] = f"t{op._id}_{t.value_index}"
                if _inline(op) is Inline.VARIABLE:
                    aliasing.add(names[t])
    for op in ops:  # ops updating storage return it; other kernels may return views of inputs
        kind = registry.lookup(op.type)
        if kind.ref_inputs or (not kind.fresh and any(names[t] in aliasing for t in op.inputs)):
            aliasing.update(names[t] for t in op.outputs if names[t].startswith("t"))

    # 2. The step after which each temporary name can be released.
    def reads(op: Operation) -> list[Tensor]:
        refs = registry.lookup(op.type).ref_inputs
        return [t for i, t in enumerate(op.inputs) if i not in refs] + [p for p, _ in op._guard]

    last_use: dict[str, int] = {}
    for step, op in enumerate(ops):
        for t in reads(op):
            last_use[names[t]] = step
    kept = {names[t] for t in fetches if t in names}

    def temporary(name: str) -> bool:
        return name.startswith("t") and name not in kept

    donatable = _donation_rule(ops, names, aliasing, last_use, kept)

    # A variable is read (and checked for initialisation) just before its first reader, under the
    # guard all its readers share: a read needed only by an untaken cond branch must not fail, and a
    # read ordered after an Assign (control dependency) must see the assigned array.
    readers: dict[str, list[tuple[int, tuple]]] = collections.defaultdict(list)
    for step, op in enumerate(ops):
        if _inline(op) is Inline.MERGE:  # reads one branch's value, depending on the predicate
            pred, if_true, if_false = op.inputs
            readers[names[pred]].append((step, op._guard))
            readers[names[if_true]].append((step, op._guard + ((pred, True),)))
            readers[names[if_false]].append((step, op._guard + ((pred, False),)))
        elif _inline(op) is not Inline.ALIAS:  # aliases: their consumers read the input
            for t in reads(op):
                readers[names[t]].append((step, op._guard))
    variable_reads: dict[int, list[tuple[Operation, tuple]]] = collections.defaultdict(list)
    for op in ops:
        if _inline(op) is Inline.VARIABLE:
            name = names[op.outputs[0]]
            uses = readers[name] + ([(len(ops), ())] if name in kept else [])
            if uses:
                variable_reads[min(s for s, _ in uses)].append((op, _common_prefix([g for _, g in uses])))

    # 3. Emit one line per op; ops of the same cond branch share one `if` block.
    body: list[str] = []
    line_to_op: dict[int, Operation] = {}
    open_guard: list[tuple] = [()]  # the guard of the `if` block lines are currently written in

    def emit(line: str, op: Operation | None = None) -> None:
        guard = current_guard
        if guard != open_guard[0]:
            open_guard[0] = guard
            if guard:
                body.append("    if " + " and ".join(names[p] if taken else f"not {names[p]}"
                                                     for p, taken in guard) + ":")
        body.append(("        " if guard else "    ") + line)
        if op is not None:
            line_to_op[len(body) + 1] = op  # +1 for the def line

    def emit_variable_reads(step: int) -> None:
        nonlocal current_guard
        for var_op, guard in variable_reads.get(step, ()):
            current_guard = guard
            box = f"box{var_op._id}"
            namespace[box] = ctx.box(var_op)
            emit(f"{names[var_op.outputs[0]]} = {box}.value", var_op)
            emit(f"if {names[var_op.outputs[0]]} is None: _uninitialized({box}.name)", var_op)

    current_guard: tuple = ()
    for step, op in enumerate(ops):
        emit_variable_reads(step)
        current_guard = op._guard
        kind = registry.lookup(op.type)
        outs = [names[t] if names[t].startswith("t") else "_" for t in op.outputs]
        args = ", ".join(names[t] for i, t in enumerate(op.inputs) if i not in kind.ref_inputs)
        if kind.inline in (Inline.CONSTANT, Inline.ALIAS, Inline.VARIABLE):
            pass
        elif kind.inline is Inline.MERGE:  # tf.cond's join: inputs (pred, true_value, false_value)
            p, if_true, if_false = (names[t] for t in op.inputs)
            emit(f"{outs[0]} = {if_true} if {p} else {if_false}", op)
        else:
            if kind.kernel is None:
                raise errors.UnimplementedError(None, op, f"Op type {op.type!r} ({op.name}) has no kernel")
            fn = f"k{op._id}"
            donor = next((i for i, t in enumerate(op.inputs) if t in names and donatable(names[t], step)), None) \
                if kind.inplace is not None else None
            namespace[fn] = ctx.bind(op, kind, donor)
            call = f"{fn}({args})" + ("" if donor is None else f"  # in place: {names[op.inputs[donor]]}")
            if len(op.outputs) == 1:
                emit(f"{outs[0]} = {call}", op)
            elif any(o != "_" for o in outs):
                emit(f"{', '.join(outs)} = {call}", op)
            else:
                emit(call, op)
        released = [n for n in dict.fromkeys(names[t] for t in reads(op))
                    if last_use.get(n) == step and temporary(n)]
        released += [n for n in outs if n != "_" and n not in last_use and temporary(n)]
        for name in released:
            emit(f"{name} = None")
    emit_variable_reads(len(ops))  # variables fetched but read by no op

    results = []
    for t in fetches:
        if t not in names:
            raise errors.InvalidArgumentError(None, t.op, f"Fetch {t.name} is not produced by this run")
        results.append(f"_copy({names[t]})" if names[t] in aliasing else names[t])
    params = ", ".join(f"f{i}" for i in range(len(feeds)))
    source = [f"def _plan({params}):"] + body + [f"    return ({', '.join(results)}{',' if results else ''})"]
    text = "\n".join(source) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return Plan(namespace["_plan"], ops, list(fetches), list(feeds), line_to_op, names, aliasing)


def _donation_rule(ops: list[Operation], names: dict, aliasing: set, last_use: dict, kept: set) -> Callable:
    """When an op may write its result into an input's buffer instead of allocating.

    The input must be a temporary this run allocated (its producer is `fresh`), not variable
    storage, not fetched, dying at this step, and no view of it may outlive the step.
    """
    owned: set[str] = set()
    viewers: dict[str, set[str]] = collections.defaultdict(set)
    for op in ops:
        outs = [names[t] for t in op.outputs if names[t].startswith("t")]
        if registry.lookup(op.type).fresh:
            owned.update(outs)
        elif _inline(op) is not Inline.ALIAS:  # the output may be a view of any input
            for t in op.inputs:
                if t in names:  # a reference input of a variable not read in this plan has none
                    viewers[names[t]].update(outs)

    def all_viewers(name: str) -> set[str]:
        seen: set[str] = set()
        stack = list(viewers.get(name, ()))
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(viewers.get(v, ()))
        return seen

    def donatable(name: str, step: int) -> bool:
        return (name in owned and name not in aliasing and name not in kept
                and last_use.get(name) == step
                and all(v not in kept and last_use.get(v, -1) <= step for v in all_viewers(name)))

    return donatable


def _common_prefix(guards: list[tuple]) -> tuple:
    """The cond branches every one of `guards` lies in."""
    prefix = guards[0]
    for guard in guards[1:]:
        n = 0
        while n < min(len(prefix), len(guard)) and prefix[n] == guard[n]:
            n += 1
        prefix = prefix[:n]
    return prefix


def _uninitialized(name: str) -> None:
    raise errors.FailedPreconditionError(
        None, None, f"Attempting to use uninitialized value {name}: run its initializer first "
        "(e.g. sess.run(tf.global_variables_initializer())) or restore it from a checkpoint.")


def failing_op(plan: Plan, exc: BaseException) -> Operation | None:
    """The op whose line in the compiled plan raised `exc`."""
    tb = exc.__traceback__
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_plan":
            found = plan.line_to_op.get(tb.tb_lineno)
        tb = tb.tb_next
    return found


def unbound_tensor(plan: Plan, exc: UnboundLocalError) -> Tensor | None:
    """The tensor (a fetch if possible) whose value `exc` found unset: it lives in an untaken branch."""
    match = re.search(r"local variable '(\w+)'", str(exc))
    if match is None:
        return None
    same = [t for t, n in plan.value_names.items() if n == match.group(1)]
    fetched = [t for t in plan.fetches if t in same]
    return (fetched or same or [None])[0]


def run_traced(plan: Plan, feed_values: list[np.ndarray], record: Callable) -> tuple:
    """Run `plan` op by op without compilation, calling `record(op, start_us, end_us, outputs)`.

    Used for RunOptions(trace_level=FULL_TRACE): slower, but gives per-op timings.
    """
    namespace = plan.function.__globals__
    values: dict[Tensor, Any] = dict(zip(plan.feeds, feed_values))

    def value(t: Tensor) -> Any:  # a variable is read when used, as in the compiled plan
        v = values[t]
        if isinstance(v, VariableBox):
            if v.value is None:
                _uninitialized(v.name)
            return v.value
        return v

    for op in plan.ops:
        if any(_truthy(value(p)) != taken for p, taken in op._guard):
            continue
        start = time.perf_counter()
        kind = registry.lookup(op.type)
        if kind.inline is Inline.MERGE:
            pred, if_true, if_false = op.inputs
            values[op.outputs[0]] = value(if_true) if _truthy(value(pred)) else value(if_false)
            record(op, start, time.perf_counter(), [values[op.outputs[0]]])
            continue
        if kind.inline is Inline.VARIABLE:
            out: Any = namespace.get(f"box{op._id}")  # absent when no op of the plan reads it
            if out is None:
                continue
        elif kind.inline is Inline.ALIAS:
            out = values[op.inputs[0]]
        elif kind.inline is Inline.CONSTANT:
            out = namespace[f"c{op._id}"]
        else:
            out = namespace[f"k{op._id}"](*[value(t) for i, t in enumerate(op.inputs)
                                            if i not in kind.ref_inputs])
        outs = [out] if len(op.outputs) == 1 else (list(out) if op.outputs else [])
        end = time.perf_counter()
        for t, v in zip(op.outputs, outs):
            values[t] = v
        record(op, start, end, [o.value if isinstance(o, VariableBox) else o for o in outs])
    return tuple(np.copy(value(t)) if plan.value_names[t] in plan.storage_names else value(t)
                 for t in plan.fetches)


def _inline(op: Operation) -> Inline | None:
    return registry.lookup(op.type).inline


def _truthy(value: Any) -> bool:
    return bool(value)


def plan_source(plan: Plan) -> str:
    """The generated source of a plan (for debugging and tests)."""
    filename = plan.function.__code__.co_filename
    return "".join(linecache.cache.get(filename, (0, None, [], ""))[2])


__all__ = ["Plan", "KernelContext", "VariableBox", "build_plan", "prune", "order", "failing_op",
           "unbound_tensor", "run_traced", "plan_source", "CPU_DEVICE"]
