"""Execution plans as values: small passes turn (graph, fetches, feeds) into a list of `Step`s.

    prune -> order (Kahn's in-degree counting, seed 001) -> check feeds -> fuse -> assign slots
          -> liveness -> buffer donation -> variable-read placement -> steps -> bind kernels

Every value of a run lives in a numbered *slot*: feeds first, then constants, then what ops
compute. A `Step` says what to run (a bound kernel, a variable read, a cond merge), which slots
it reads and writes, the cond guard it runs under and which slots die after it. The back ends
consume the same steps: `codegen` writes them as one straight-line Python function (the fast
path), `interpreter` walks them one by one (traced runs, the NaN finder). Nothing here knows an
op type's name: what to do with an op comes from its registry entry (`OpKind`).
"""

from __future__ import annotations

import collections
import enum
from dataclasses import dataclass, field
from typing import Any, Callable

from tftk.framework import errors, registry
from tftk.framework.ops import Operation, Tensor

Inline = registry.Inline

__all__ = ["Action", "Step", "Plan", "build_steps", "prune", "order", "fuse_ops", "FusedOp",
           "variable_of", "state_name"]


class Action(enum.Enum):
    """What a step does."""

    CALL = "call"  # outputs = kernel(*inputs)
    READ = "read"  # output = the variable's stored array (FailedPrecondition when uninitialised)
    MERGE = "merge"  # output = inputs[1] if inputs[0] else inputs[2] (tf.cond's join)
    NAME = "name"  # a constant or an alias: its value already sits in a slot; nothing to run


@dataclass
class Step:
    """One op of a plan: what to run, on which slots, under which cond guard, what dies after."""

    action: Action
    op: Any  # the Operation (or FusedOp) the step runs, for errors, traces and timings
    inputs: tuple[int, ...]  # slots read, in the kernel's argument order
    outputs: tuple[int | None, ...]  # slots written (None: an output no one reads, or a fed one)
    guard: tuple[tuple[int, bool], ...] = ()  # run only if each slot's truth equals its flag
    free: tuple[int, ...] = ()  # slots released after this step
    donor: int | None = None  # the input position the kernel may overwrite (buffer reuse)
    kernel: Callable | None = None  # CALL: the bound kernel
    box: Any = None  # READ: the variable's box in the session (`.value`, `.name`)


@dataclass
class Plan:
    """One run of a graph as data: call `function(*feed_arrays)` for the fetched arrays (a tuple).

    `function` is the compiled back end (codegen); `steps` is what it was generated from, which
    the interpreter runs too.
    """

    steps: list[Step]
    ops: list[Any]
    feeds: list[Tensor]
    fetches: list[Tensor]
    slot_of: dict[Tensor, int]  # the slot of every value of the run
    fetch_slots: list[int]
    constants: dict[int, Any]  # slot -> value of each constant
    storage: set[int]  # slots whose array may be variable storage: fetched as copies
    n_slots: int
    function: Callable | None = None
    line_to_step: dict[int, Step] = field(default_factory=dict)  # generated line -> step


# ---- pass 1: prune ------------------------------------------------------------------------------

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
        stack.extend(pred.op for pred, _ in op.guard if pred not in feeds and pred.op not in needed)
    return list(needed)


# ---- pass 2: order --------------------------------------------------------------------------------

def order(ops: list[Operation], feeds: set[Tensor]) -> list[Operation]:
    """Topological order by in-degree counting with a first-in-first-out ready queue (seed 001).

    The queue starts with the ready ops in creation order and consumers are released in creation
    order, so plans are deterministic; FIFO matches TF1's executor where ordering is observable
    (e.g. an increment and a read of the same variable fetched in one run).
    """
    ops = sorted(ops, key=lambda o: o.id)
    members = set(ops)
    deps_of = {op: _dependencies(op, feeds) & members for op in ops}
    with_writes = _writes_before_reads(ops, deps_of)
    try:
        return _kahn(ops, with_writes)
    except errors.InvalidArgumentError:
        return _kahn(ops, deps_of)  # the extra edges closed a cycle: keep the graph's own order


def _dependencies(op: Operation, feeds: set[Tensor]) -> set[Operation]:
    kind_refs = registry.lookup(op.type).ref_inputs
    deps = {t.op for i, t in enumerate(op.inputs) if i not in kind_refs and t not in feeds}
    deps.update(op.control_inputs)
    deps.update(pred.op for pred, _ in op.guard if pred not in feeds)
    return deps


def _writes_before_reads(ops: list[Operation], deps_of: dict) -> dict:
    """Add edges so a variable update runs before reads of that variable it is not ordered with.

    TF1 programs rely on this: `sess.run([global_step.assign_add(1), decayed_lr])` shows the
    incremented step (seed 000), and moving averages grouped after a train op see the updated
    weights (seed 004). A read that the update itself needs (the gradient) is left alone.
    """
    writers: dict[Operation, list[Operation]] = collections.defaultdict(list)
    for op in ops:
        for i in registry.lookup(op.type).ref_inputs:
            writers[variable_of(op.inputs[i])].append(op)
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


variable_of = registry.state_holder  # the op holding the state behind a reference


def _readers(variable: Operation, members: set) -> list[Operation]:
    """Ops of the plan that consume the variable's storage as a value (through aliases)."""
    readers, frontier = [], list(variable.outputs)
    while frontier:
        tensor = frontier.pop()
        for consumer in tensor.consumers():
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
                                          + ", ".join(op.name for op in stuck[:5]))
    return result


# ---- pass 3: feeds and placement ----------------------------------------------------------------

def check_feeds(ops: list[Operation], feeds: set[Tensor],
                on_placement: Callable[[Operation], None] | None) -> None:
    """Every placeholder the run needs is fed; the caller's device check sees every op."""
    for op in ops:
        if _inline(op) is Inline.FEED and not any(t in feeds for t in op.outputs):
            shape = op.outputs[0].shape
            raise errors.InvalidArgumentError(
                None, op, f"You must feed a value for placeholder tensor '{op.name}' with dtype "
                f"{op.outputs[0].dtype.name}" + ("" if shape.ndims is None else f" and shape {shape}"))
        if on_placement is not None:
            on_placement(op)


# ---- pass 4: fusion -------------------------------------------------------------------------------

class FusedOp:
    """Two adjacent ops run as one kernel: `consumer(producer(*inputs), *more)` (see register_fusion).

    Its inputs are the producer's, then the consumer's other inputs (`more`).
    """

    def __init__(self, fused_type: str, producer: Operation, consumer: Operation):
        self.type = fused_type
        self.producer, self.consumer = producer, consumer
        self.name = consumer.name
        self.inputs = tuple(producer.inputs) + tuple(consumer.inputs[1:])
        self.outputs = consumer.outputs
        self.control_inputs = consumer.control_inputs
        self.guard = producer.guard
        self.id = consumer.id
        self.graph = consumer.graph

    def get_attr(self, name: str) -> Any:
        return self.producer.get_attr(name)

    def __repr__(self) -> str:
        return f"<FusedOp {self.type}: {self.producer.name} -> {self.consumer.name}>"


def fuse_ops(ops: list, fetches: list[Tensor], feeds: set[Tensor]) -> list:
    """Replace adjacent (producer, consumer) pairs that have a registered fusion by one FusedOp.

    Only where the producer's single output is the consumer's first input and read by nothing else
    (not even the consumer's other inputs), is not fetched or fed, and both ops live in the same
    cond branch: the fused plan then computes the same values. The consumer's other inputs come
    before the producer in the order (the two are adjacent), so they are ready when the fused op runs.
    Fusions chain left to right: a FusedOp is the producer of the next pair when its fused type has a
    fusion with the next op (Conv2D + BiasAdd, then + Relu).
    """
    readers: dict[Tensor, int] = collections.Counter()
    for op in ops:
        for t in op.inputs:
            readers[t] += 1
        for pred, _ in op.guard:
            readers[pred] += 1
    fetched = set(fetches)
    result: list = []
    for op in ops:
        last = result[-1] if result else None
        fused = registry.fusion(last.type, op.type) if last is not None else None
        if fused is not None and len(last.outputs) == 1 and op.inputs and op.inputs[0] is last.outputs[0] \
                and readers[last.outputs[0]] == 1 and last.outputs[0] not in fetched \
                and last.outputs[0] not in feeds and last.guard == op.guard:
            result[-1] = FusedOp(fused, last, op)
        else:
            result.append(op)
    return result


# ---- pass 5: slots --------------------------------------------------------------------------------

@dataclass
class _Slots:
    """Where each value lives: slot numbers, which slots are constants, temporaries, storage."""

    of: dict[Tensor, int]
    constants: dict[int, Any]
    computed: set[int]  # slots an op of this run writes (the rest are feeds and constants)
    storage: set[int]  # slots whose array may be (a view of) a variable's storage

    def own(self, op: Any) -> tuple[int | None, ...]:
        """The slots `op` writes: its outputs' slots unless fed or aliased."""
        return tuple(self.of[t] if self.of[t] in self.computed and not _aliases(op) else None
                     for t in op.outputs)


def assign_slots(ops: list, feeds: list[Tensor]) -> _Slots:
    """Aliases share their input's slot; constants get a slot holding their value."""
    of: dict[Tensor, int] = {t: i for i, t in enumerate(feeds)}
    constants: dict[int, Any] = {}
    computed: set[int] = set()
    storage: set[int] = set()
    next_slot = len(feeds)
    for op in ops:
        kind = registry.lookup(op.type)
        for t in op.outputs:
            if t in of:
                continue
            if kind.inline is Inline.ALIAS:
                of[t] = of[op.inputs[0]]
                continue
            of[t] = slot = next_slot
            next_slot += 1
            if kind.inline is Inline.CONSTANT:
                constants[slot] = op.get_attr("value")
            else:
                computed.add(slot)
                if kind.inline is Inline.VARIABLE:
                    storage.add(slot)
    for op in ops:  # ops updating storage return it; other kernels may return views of inputs
        kind = registry.lookup(op.type)
        if kind.ref_inputs or (not kind.fresh and any(of[t] in storage for t in op.inputs if t in of)):
            storage.update(of[t] for t in op.outputs if of[t] in computed)
    return _Slots(of, constants, computed, storage)


# ---- pass 6: liveness and donation ----------------------------------------------------------------

def reads(op: Any, slots: _Slots) -> list[int]:
    """The slots an op reads: its value inputs (not references) and its guard's predicates."""
    refs = registry.lookup(op.type).ref_inputs
    return [slots.of[t] for i, t in enumerate(op.inputs) if i not in refs] + [slots.of[p] for p, _ in op.guard]


def last_uses(ops: list, slots: _Slots) -> dict[int, int]:
    """The index of the last op reading each slot."""
    last: dict[int, int] = {}
    for index, op in enumerate(ops):
        for slot in reads(op, slots):
            last[slot] = index
    return last


def donation_rule(ops: list, slots: _Slots, last_use: dict, kept: set) -> Callable[[int, int], bool]:
    """When an op may write its result into an input's buffer instead of allocating.

    The input must be a temporary this run allocated (its producer is `fresh`), not variable
    storage, not fetched, dying at this step, and no view of it may outlive the step.
    """
    owned: set[int] = set()
    viewers: dict[int, set[int]] = collections.defaultdict(set)
    for op in ops:
        outs = [s for s in slots.own(op) if s is not None]
        if registry.lookup(op.type).fresh:
            owned.update(outs)
        elif not _aliases(op):  # the output may be a view of any input
            for t in op.inputs:
                if t in slots.of:  # a reference input of a variable not read in this plan has none
                    viewers[slots.of[t]].update(outs)

    def all_viewers(slot: int) -> set[int]:
        seen: set[int] = set()
        stack = list(viewers.get(slot, ()))
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack.extend(viewers.get(v, ()))
        return seen

    def donatable(slot: int, index: int) -> bool:
        return (slot in owned and slot not in slots.storage and slot not in kept
                and last_use.get(slot) == index
                and all(v not in kept and last_use.get(v, -1) <= index for v in all_viewers(slot)))

    return donatable


# ---- pass 7: variable reads -------------------------------------------------------------------------

def place_variable_reads(ops: list, slots: _Slots, kept: set) -> dict[int, list[tuple[Operation, tuple]]]:
    """Before which op each variable is read, and under which guard.

    A variable is read (and checked for initialisation) just before its first reader, under the
    guard all its readers share: a read needed only by an untaken cond branch must not fail, and a
    read ordered after an Assign (control dependency) must see the assigned array.
    """
    readers: dict[int, list[tuple[int, tuple]]] = collections.defaultdict(list)
    for index, op in enumerate(ops):
        if _inline(op) is Inline.MERGE:  # reads one branch's value, depending on the predicate
            pred, if_true, if_false = op.inputs
            readers[slots.of[pred]].append((index, op.guard))
            readers[slots.of[if_true]].append((index, op.guard + ((pred, True),)))
            readers[slots.of[if_false]].append((index, op.guard + ((pred, False),)))
        elif not _aliases(op):  # aliases: their consumers read the input
            for slot in reads(op, slots):
                readers[slot].append((index, op.guard))
    placed: dict[int, list[tuple[Operation, tuple]]] = collections.defaultdict(list)
    for op in ops:
        if _inline(op) is Inline.VARIABLE:
            slot = slots.of[op.outputs[0]]
            uses = readers[slot] + ([(len(ops), ())] if slot in kept else [])
            if uses:
                placed[min(i for i, _ in uses)].append((op, _common_prefix([g for _, g in uses])))
    return placed


def _common_prefix(guards: list[tuple]) -> tuple:
    """The cond branches every one of `guards` lies in."""
    prefix = guards[0]
    for guard in guards[1:]:
        n = 0
        while n < min(len(prefix), len(guard)) and prefix[n] == guard[n]:
            n += 1
        prefix = prefix[:n]
    return prefix


# ---- pass 8: steps -------------------------------------------------------------------------------

def build_steps(ops: list, fetches: list[Tensor], feeds: list[Tensor]) -> Plan:
    """The unbound plan: steps in run order with slots, guards, frees and donors."""
    slots = assign_slots(ops, feeds)
    for t in fetches:
        if t not in slots.of:
            raise errors.InvalidArgumentError(None, t.op, f"Fetch {t.name} is not produced by this run")
    kept = {slots.of[t] for t in fetches}
    last_use = last_uses(ops, slots)
    donatable = donation_rule(ops, slots, last_use, kept)
    variable_reads = place_variable_reads(ops, slots, kept)

    def guard_of(guard: tuple) -> tuple[tuple[int, bool], ...]:
        return tuple((slots.of[p], taken) for p, taken in guard)

    def temporary(slot: int) -> bool:
        return slot in slots.computed and slot not in kept

    steps: list[Step] = []

    def add_reads(index: int) -> None:
        for var_op, guard in variable_reads.get(index, ()):
            steps.append(Step(Action.READ, var_op, (), (slots.of[var_op.outputs[0]],), guard_of(guard)))

    for index, op in enumerate(ops):
        add_reads(index)
        kind = registry.lookup(op.type)
        outputs = slots.own(op)
        read = reads(op, slots)
        free = [s for s in dict.fromkeys(read) if last_use.get(s) == index and temporary(s)]
        free += [s for s in outputs if s is not None and s not in last_use and temporary(s)]
        if kind.inline is Inline.VARIABLE:
            continue  # read where first used (add_reads)
        inputs = tuple(slots.of[t] for i, t in enumerate(op.inputs) if i not in kind.ref_inputs)
        if kind.inline in (Inline.CONSTANT, Inline.ALIAS, Inline.FEED):
            action = Action.NAME
        elif kind.inline is Inline.MERGE:
            action = Action.MERGE
        else:
            if kind.kernel is None:
                raise errors.UnimplementedError(None, op, f"Op type {op.type!r} ({op.name}) has no kernel")
            action = Action.CALL
        donor = None
        if action is Action.CALL and kind.inplace is not None:
            donor = next((i for i, t in enumerate(op.inputs) if t in slots.of and donatable(slots.of[t], index)),
                         None)
        steps.append(Step(action, op, inputs, outputs, guard_of(op.guard), tuple(free), donor))
    add_reads(len(ops))  # variables fetched but read by no op
    return Plan(steps, ops, list(feeds), list(fetches), slots.of, [slots.of[t] for t in fetches],
                slots.constants, slots.storage, max(slots.of.values(), default=-1) + 1)


# ---- pass 9: binding ------------------------------------------------------------------------------

def bind(plan: Plan, ctx: Any) -> None:
    """Give each step its kernel (or variable box) in the kernel context `ctx` (a session's)."""
    for step in plan.steps:
        if step.action is Action.CALL:
            step.kernel = ctx.bind(step.op, registry.lookup(step.op.type), step.donor)
        elif step.action is Action.READ:
            step.box = ctx.box(step.op)


def _inline(op: Any) -> Inline | None:
    return registry.lookup(op.type).inline


def _aliases(op: Any) -> bool:
    return registry.lookup(op.type).inline is Inline.ALIAS
