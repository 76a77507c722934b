"""Execution plans as values: small passes turn (graph, fetches, feeds) into a list of `Step`s.

    prune -> order (Kahn's in-degree counting, seed 001) -> check feeds -> fuse -> stream sums
          -> hoist transposed inputs -> share transposed inputs -> mark unread outputs -> sink copies
          -> assign slots -> liveness -> buffer donation -> variable-read placement -> steps -> bind kernels

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
from typing import Any, Callable, Sequence

from tftk.framework import errors, registry
from tftk.framework.ops import Operation, Tensor
from tftk.framework.tensor_shape import TensorShape

Inline = registry.Inline

__all__ = ["Action", "Step", "Plan", "build_steps", "prune", "order", "fuse_ops", "FusedOp", "PlanOp",
           "accumulate_into_totals",
           "stream_sums", "hoist_transposed_inputs", "share_transposed_inputs", "mark_unread_outputs", "sink_copies",
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
    # copies of invariant feeds made once per series of calls, fed after them (hoist_transposed_inputs)
    hoisted: list = field(default_factory=list)
    # the fetches (indices) made into running totals fed after the hoisted copies (`accumulate_into_totals`)
    accumulated: list = field(default_factory=list)
    # (file name, line) of a generated function (`function`, `split_function`'s) -> the step it runs
    line_to_step: dict[tuple[str, int], Step] = field(default_factory=dict)
    # the steps as two streams, the caller's and a helper's (`tftk.client.streams`), once a split wins
    split_function: Callable | None = None
    # the steps with the batch's per-example work run on slices, one per thread (`tftk.client.rows`)
    rows_function: Callable | None = None
    splitting: Any = None  # the measurements deciding the split (`streams.Splitting`)


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
    """Two ops run as one kernel: `consumer(producer(*inputs), *more)` (see register_fusion, fuse_ops).

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
    """Replace (producer, consumer) pairs that have a registered fusion by one FusedOp.

    Only where the producer's single output is the consumer's first input and read by nothing else
    (not even the consumer's other inputs), is not fetched or fed, and both ops live in the same
    cond branch: the fused plan then computes the same values. The fused op runs where the producer
    ran, so the consumer's other inputs must be ready there: either the two are adjacent in the
    order, or the consumer is moved up to its producer past ops that compute none of its inputs and
    change no state (a ReLU, a slice, reads nothing else; the tutorial's second `conv2d(h, w) + b`
    sits behind the Shape of h its input gradient reads). Fusions chain: a FusedOp is the producer of
    the next pair when its fused type has a fusion with its consumer (Conv2D + BiasAdd, then + Relu).
    """
    readers: dict[Tensor, int] = collections.Counter()
    reader_of: dict[Tensor, Any] = {}
    for op in ops:
        for t in op.inputs:
            readers[t] += 1
            reader_of[t] = op
        for pred, _ in op.guard:
            readers[pred] += 1
    fetched = set(fetches)
    moved: set = set()
    result: list = []
    position = {op: index for index, op in enumerate(ops)}

    def passes(consumer: Any, between: list) -> bool:
        """Whether `consumer` may run before the ops `between` (those not already moved up)."""
        needs = set(consumer.inputs) | {t for op in consumer.control_inputs for t in op.outputs}
        for op in between:
            if op in moved:
                continue
            kind = registry.lookup(op.type)
            if kind.stateful or kind.ref_inputs or kind.blocking or needs.intersection(op.outputs) \
                    or op in consumer.control_inputs:
                return False
        return True

    for index, op in enumerate(ops):
        if op in moved:
            continue
        last = index  # where the chain's last op sits in the order
        while True:
            out = op.outputs[0] if len(op.outputs) == 1 else None
            consumer = reader_of.get(out)
            fused = registry.fusion(op.type, consumer.type) if consumer is not None else None
            if fused is None or consumer.inputs[0] is not out or readers[out] != 1 or out in fetched \
                    or out in feeds or op.guard != consumer.guard:
                break
            adjacent = last + 1 < len(ops) and ops[last + 1] is consumer
            if not adjacent and (len(consumer.inputs) != 1 or consumer.control_inputs) \
                    and not passes(consumer, ops[last + 1:position[consumer]]):
                break
            last += adjacent
            op = FusedOp(fused, op, consumer)
            moved.add(consumer)
        result.append(op)
    return result


# ---- pass 4b: rearranged work (partial sums, shared transposed copies) ------------------------------

class PlanOp:
    """An op only a plan holds: a graph op (`like`) with other inputs, outputs or attrs, or a step of
    another (plan-only) type made on its behalf. Anything else is `like`'s (a FusedOp's producer, ...)."""

    def __init__(self, like: Any, name: str, inputs: tuple, output: Tensor | tuple | None = None,
                 attrs: dict | None = None, op_type: str | None = None, stands_for: tuple = ()):
        """`output`: `like`'s outputs when None, else this op's single output: that tensor, or a new
        one for a (dtype, shape) pair. `stands_for`: graph ops besides `like` whose work this step
        completes (what a control input on one of them waits for: a sum's last partial sum made by a
        product's step stands for the sum too)."""
        self.like = like
        self.stands_for = stands_for
        self.type = like.type if op_type is None else op_type
        self.name = name
        self.inputs = inputs
        if isinstance(output, tuple):
            output = Tensor(self, 0, *output)
        self.outputs = like.outputs if output is None else (output,)
        self.attrs = {**(getattr(like, "attrs", {}) if op_type is None else {}), **(attrs or {})}
        self.control_inputs = like.control_inputs if op_type is None else ()
        self.guard = like.guard
        self.id = like.id
        self.graph = like.graph

    def get_attr(self, name: str) -> Any:
        return self.attrs[name] if name in self.attrs or self.type != self.like.type else self.like.get_attr(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["like"], name)

    def __repr__(self) -> str:
        return f"<PlanOp {self.type} {self.name}>"


def _positions(ops: list) -> dict[Tensor, int]:
    return {t: index for index, op in enumerate(ops) for t in op.outputs}


def _read_counts(ops: list, fetches: Sequence[Tensor]) -> collections.Counter:
    """How many times each value is read: as an op's input or cond guard, or fetched."""
    readers: collections.Counter = collections.Counter()
    for op in ops:
        readers.update(op.inputs)
        readers.update(pred for pred, _ in op.guard)
    readers.update(fetches)
    return readers


def _rearranged(ops: list, removed: set[int], before: dict[int, list], after: dict[int, list]) -> list:
    """`ops` without the indices in `removed`, with the lists of `before` and `after` put around each index."""
    result: list = []
    for index, op in enumerate(ops):
        result.extend(before.get(index, ()))
        if index not in removed:
            result.append(op)
        result.extend(after.get(index, ()))
    return result


def stream_sums(ops: list, fetches: Sequence[Tensor] = (), feeds: Sequence[Tensor] = ()) -> list:
    """Add the inputs of a sum (AddN: `sums_inputs`) two at a time, each as soon as it is computed.

    A static RNN's weight gradient is the sum of one product per time step; summed at the end, the
    28 products of a [256, 512] LSTM weight (14 MB) all stay alive until the last one is made. Here a
    partial sum follows each input's producer (in place into the running sum: the executor donates
    it), so each product dies, still in the cache, as soon as it is added. Only for sums of three or
    more inputs, all computed by this plan under the sum's own cond guard, without control inputs.
    The inputs are added in the order they are computed, not in the op's: the result may differ
    from the graph's AddN in the last bits.

    A 2-D MatMul without control inputs read by nothing but the sum (not fetched or fed; maybe through
    a gradient's Identity, `_product_made_for`), other than the one starting the running sum, is not
    made on its own: its partial sum, where the MatMul was, is a MATMUL_ACCUMULATE step, one gemm
    adding the product into the running sum (`tftk.kernels.blas.add_product`; a [256, 512] LSTM
    weight's 28 products 11.3 -> 10.1 ms).
    """
    at = _positions(ops)
    readers = _read_counts(ops, fetches)
    readers.update(feeds)  # a fed product is the feed's value, not a product to make
    controlling = {c for op in ops for c in op.control_inputs}
    removed: set[int] = set()
    after: dict[int, list] = collections.defaultdict(list)
    for index, op in enumerate(ops):
        if not registry.lookup(op.type).sums_inputs or len(op.inputs) < 3 or op.control_inputs \
                or any(t not in at or ops[at[t]].guard != op.guard for t in op.inputs):
            continue
        # each input: (where it is made, the tensor, the ops a partial sum making it replaces)
        made = []
        for t in op.inputs:
            replaced = _product_made_for(t, ops, at, readers, controlling) if readers[t] == 1 else ()
            made.append((replaced[0], ops[replaced[0]].outputs[0], replaced) if replaced else (at[t], t, ()))
        made.sort(key=lambda entry: entry[0])
        total, acc = op.outputs[0], made[0][1]  # the last partial sum computes the op's own output
        for part, (position, t, replaced) in enumerate(made[1:], 1):
            output = total if part == len(made) - 1 else (total.dtype, total.shape)
            if replaced:
                product = ops[position]
                partial = PlanOp(product, f"{op.name}/part_{part}", (acc,) + tuple(product.inputs), output,
                                 {"transpose_a": product.get_attr("transpose_a"),
                                  "transpose_b": product.get_attr("transpose_b")}, registry.MATMUL_ACCUMULATE,
                                 stands_for=(op,) if output is total else ())
                removed.update(replaced)
            else:
                partial = PlanOp(op, f"{op.name}/part_{part}", (acc, t), output)
            after[position].append(partial)
            acc = partial.outputs[0]
        removed.add(index)
    return _rearranged(ops, removed, {}, after) if removed else ops


def _product_made_for(t: Tensor, ops: list, at: dict, readers: collections.Counter,
                      controlling: set) -> tuple[int, ...]:
    """The indices of the ops that make `t` (read by a sum only) as a 2-D product, the MatMul's first:
    a partial sum may make the product itself, where the MatMul ran (an op ordered after the MatMul
    by a control input still runs after it). The MatMul's, or an Identity's of a MatMul's output
    read by nothing else, itself no op's control input (TF's gradients hand a product on through
    `tf.tuple`'s Identity, whose control input only orders it after its siblings: the product's value
    is the same without it). Empty when `t` is not such a product."""
    producer = ops[at[t]]
    if _accumulable_product(producer):
        return (at[t],)
    if isinstance(producer, Operation) and producer.type == "Identity" and producer not in controlling:
        inner = producer.inputs[0]
        if inner in at and readers[inner] == 1 and _accumulable_product(ops[at[inner]]) \
                and ops[at[inner]].guard == producer.guard:
            return (at[inner], at[t])
    return ()


def accumulate_into_totals(ops: list, fetches: Sequence[Tensor], feeds: set[Tensor],
                           summed: Sequence[int]) -> tuple[list, list[Tensor], list[int]]:
    """Make the fetches `summed` (their indices) that a loop adds up over its iterations, where each is a
    2-D product read by nothing else, as `total += a @ b` into a running total the caller feeds.

    A loop gradient's weight gradient is one product per iteration added into a total (dynamic_rnn's
    [256, 512] LSTM weight: 28 products a step): made on its own, each product is written to a new
    array and then added, one more pass over it per iteration, on the pipelined gradient's critical
    path too (`tftk.ops.loop_stages`). Here its step is a MATMUL_ACCUMULATE, one gemm adding the product
    into the total in place (`tftk.kernels.blas.add_product`: the same bits as the product added).
    Returns the ops, the totals' tensors (fed after the plan's other feeds, each the fetch's value
    once the call is made: the total itself) and the indices made so, in the order of the totals."""
    at = _positions(ops)
    readers = _read_counts(ops, fetches)
    controlling = {c for op in ops for c in op.control_inputs}
    totals: list[Tensor] = []
    made: list[int] = []
    rewired: dict[int, PlanOp] = {}
    for index in summed:
        t = fetches[index]
        if t in feeds or t not in at or readers[t] != 1:
            continue
        product = ops[at[t]]
        if not _accumulable_product(product) or product.guard or product in controlling:
            continue
        total = PlanOp(product, f"{product.name}/running_total", (), (t.dtype, t.shape),
                       op_type=registry.MATMUL_ACCUMULATE).outputs[0]
        rewired[at[t]] = PlanOp(product, f"{product.name}/accumulate", (total,) + tuple(product.inputs), t,
                                {"transpose_a": product.get_attr("transpose_a"),
                                 "transpose_b": product.get_attr("transpose_b"), registry.IN_PLACE_ATTR: True},
                                registry.MATMUL_ACCUMULATE)
        totals.append(total)
        made.append(index)
    return [rewired.get(k, op) for k, op in enumerate(ops)], totals, made


def _accumulable_product(op: Any) -> bool:
    """A graph's 2-D MatMul without control inputs, which a partial sum may make as `c += a @ b`."""
    return (isinstance(op, Operation) and op.type == "MatMul" and not op.control_inputs
            and all(t.shape.ndims == 2 for t in op.inputs))


def hoist_transposed_inputs(ops: list, invariant: set[Tensor]) -> tuple[list, list[PlanOp]]:
    """Give ops reading transposed (`transposed_inputs`) a value fed unchanged to a series of calls
    (`invariant`: a loop body's captured weights) a transposed copy made once for the series.

    dynamic_rnn's gradient body multiplies by each weight transposed once per iteration, where one
    plan run holds one such product per weight, so `share_transposed_inputs` has nothing to share.
    Returns the ops, rewired to read the copies, and the copies: TRANSPOSED_COPY ops none of `ops`
    runs, whose outputs the caller feeds (see `KernelContext.loop_function`). An op is rewired only
    when all its transposed inputs are invariant (GRUBlockCellGrad takes both weights transposed or
    neither), and nothing is hoisted from a plan that may update state between or during its calls
    (an op with `ref_inputs`, or a `stateful` one: a loop nested in the body may assign a variable),
    which could change the array a copy was made from.
    """
    kinds = [registry.lookup(op.type) for op in ops]
    if not invariant or any(kind.ref_inputs or kind.stateful for kind in kinds):
        return ops, []
    copies: dict[Tensor, PlanOp] = {}
    rewired: dict[int, PlanOp] = {}
    for index, (op, kind) in enumerate(zip(ops, kinds)):
        transposed = () if kind.transposed_inputs is None else kind.transposed_inputs(op)
        if not transposed or any(op.inputs[i] not in invariant for i in transposed):
            continue
        for i in transposed:
            if op.inputs[i] not in copies:
                copies[op.inputs[i]] = _transposed_copy(op, op.inputs[i])
        inputs = tuple(copies[t].outputs[0] if i in transposed else t for i, t in enumerate(op.inputs))
        rewired[index] = PlanOp(op, op.name, inputs, attrs={registry.TRANSPOSED_INPUTS_ATTR: tuple(transposed)})
    if not rewired:
        return ops, []
    return [rewired.get(index, op) for index, op in enumerate(ops)], list(copies.values())


def _transposed_copy(reader: Any, value: Tensor) -> PlanOp:
    """A TRANSPOSED_COPY op of the 2-D `value` (made on behalf of `reader`)."""
    shape = value.shape if value.shape.ndims is None else TensorShape(value.shape.as_list()[::-1])
    return PlanOp(reader, f"{value.op.name}/{registry.TRANSPOSED_COPY}", (value,), (value.dtype, shape),
                  op_type=registry.TRANSPOSED_COPY)


def share_transposed_inputs(ops: list) -> list:
    """Give ops that read a 2-D input transposed (`transposed_inputs`) one transposed copy of it each run.

    A static RNN's backward pass multiplies by each weight matrix transposed once per time step
    (``dicfo @ w.T``); OpenBLAS's product with a transposed operand ran 12% slower here than with
    the same operand laid out transposed (a [128, 512] x [512, 256] float32 product: 383 vs 337 us on
    Zen 4). One copy (TRANSPOSED_COPY, ~0.1 ms for [256, 512]) is made before the first of the ops
    reading the value, which then get it listed in TRANSPOSED_INPUTS_ATTR. Only for values read so
    by two or more ops under one cond guard, with no op updating state (`ref_inputs`) between the
    first and the last: a variable assigned in between would leave the copy stale. Ops already
    reading a hoisted copy (`hoist_transposed_inputs`) are left alone.
    """
    readers: dict[Tensor, list[tuple[int, int]]] = collections.defaultdict(list)
    writes: list[int] = []
    for index, op in enumerate(ops):
        kind = registry.lookup(op.type)
        if kind.ref_inputs:
            writes.append(index)
        if kind.transposed_inputs is not None and not getattr(op, "attrs", {}).get(registry.TRANSPOSED_INPUTS_ATTR):
            for i in kind.transposed_inputs(op):
                readers[op.inputs[i]].append((index, i))
    rewired: dict[int, dict[int, Tensor]] = collections.defaultdict(dict)
    before: dict[int, list] = collections.defaultdict(list)
    for value, reads in readers.items():
        first, last = reads[0][0], reads[-1][0]
        if len({index for index, _ in reads}) < 2 or any(first < w < last for w in writes) \
                or any(ops[index].guard != ops[first].guard for index, _ in reads):
            continue
        copy = _transposed_copy(ops[first], value)
        before[first].append(copy)
        for index, i in reads:
            rewired[index][i] = copy.outputs[0]
    if not rewired:
        return ops
    for index, inputs in rewired.items():
        op = ops[index]
        before[index].append(PlanOp(op, op.name, tuple(inputs.get(i, t) for i, t in enumerate(op.inputs)),
                                    attrs={registry.TRANSPOSED_INPUTS_ATTR: tuple(sorted(inputs))}))
    return _rearranged(ops, set(rewired), before, {})


def mark_unread_outputs(ops: list, fetches: list[Tensor]) -> list:
    """Tell ops that can skip work (`skips_unread_outputs`) which of their outputs nothing reads.

    A first GRU layer's backward step makes the gradient of its input, data nobody differentiates:
    18% of that step's two products at 28 inputs and 128 units. The op is given
    UNREAD_OUTPUTS_ATTR listing those outputs' indices; its kernel returns None for them.
    """
    read = {t for op in ops for t in op.inputs} | {pred for op in ops for pred, _ in op.guard} | set(fetches)
    result: list = []
    for op in ops:
        unread = tuple(i for i, t in enumerate(op.outputs) if t not in read)
        if unread and registry.lookup(op.type).skips_unread_outputs:
            op = PlanOp(op, op.name, op.inputs, attrs={registry.UNREAD_OUTPUTS_ATTR: unread})
        result.append(op)
    return result


def sink_copies(ops: list) -> list:
    """Make a copy of other values (`copies_inputs`: ConcatV2) just before the first op reading it.

    The first-in-first-out order runs an op as soon as its inputs are ready. The gradient of a
    static LSTM step joins [x, h_prev] (ConcatV2) for its weight-gradient product: ready in the
    forward pass, it ran there, and the backward step read it long after, out of the cache. Made
    where it is read, the product finds it in the cache (a 2-layer static LSTM step: 1.7% less time).
    Not past an op updating state (an input may be a variable's storage) or one that waits for the
    copy (control input), and only for ops without control inputs of their own.
    """
    first_read: dict[Tensor, int] = {}
    stops: list[int] = []  # ops a copy may not move past: they update state
    waits: dict[Any, int] = {}  # op -> the first op with a control input on it
    for index, op in enumerate(ops):
        for t in op.inputs:
            first_read.setdefault(t, index)
        for pred, _ in op.guard:
            first_read.setdefault(pred, index)
        for c in op.control_inputs:
            waits.setdefault(c, index)
        if registry.lookup(op.type).ref_inputs:
            stops.append(index)
    moved: set[int] = set()
    before: dict[int, list] = collections.defaultdict(list)
    for index, op in enumerate(ops):
        if not registry.lookup(op.type).copies_inputs or op.control_inputs or len(op.outputs) != 1:
            continue
        target = min([first_read.get(op.outputs[0], index), waits.get(op, len(ops))]
                     + [s for s in stops if s > index])
        if target > index + 1:
            before[target].append(op)
            moved.add(index)
    return _rearranged(ops, moved, before, {}) if moved else ops


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
