"""A loop body cut in two stages, so that a while loop's iterations run as a pipeline on two threads.

dynamic_rnn over a 2-layer MultiRNNCell runs one While op, whose body computes layer 1's step t and
then layer 2's: nothing inside one iteration can run beside anything else. Across iterations it can:
layer 1's step t+1 needs only layer 1's state, so it may run while layer 2 computes step t (TF's
executor does this with `parallel_iterations`). Its gradient loop is the same, reversed: layer 2's
backward step needs only its own carried gradients, layer 1's reads what layer 2's made.

`cut` finds such a split of a body: the loop variables whose next values depend only on loop
variables of the same set (a prefix of the carried variables' dependency order, by strongly connected
components) make stage 1 with every op they need; everything else is stage 2, which reads the values
stage 1 made (`cross`). Stage 1 of iteration t+1 then only waits for stage 1 of iteration t, and the
While kernels (`tftk.ops.while_loop`) run stage 1 on the calling thread and stage 2 on the helper
beside it. Of the possible cuts the most even one is taken, judged by each op's cost estimated from
its shapes (`_op_weight`). Where no such proper set gains, every loop variable is stage 1's and stage
2 makes only what no iteration reads back: a one-layer LSTM's gradient loop carries the recursion on
the calling thread while the helper makes the weight gradient's product (a 128-unit layer's step:
16.7 ms pipelined against 16.4 on BLAS's two threads and 22.3 on one, in-process; a way without
BLAS's per-call barriers for the thread policy to turn to). A cut whose smaller stage weighs less
than `MIN_SHARE` of the body gains too little for the hand-over of every iteration's values, as does
one under `MIN_STAGE_MICROSECONDS`. Bodies with stateful ops (random numbers,
assignments: their order would change), cond branches or control inputs are not cut.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Operation, Tensor

__all__ = ["Stages", "cut", "reads", "Pipeline", "MIN_SHARE", "keep_totals"]

MIN_SHARE = 0.2
MIN_STAGE_MICROSECONDS = 30.0  # a stage shorter than an iteration's hand-over to the helper (20-50 us) gains nothing
CALL_COST = 3.0  # what any op costs (microseconds): the Python of a kernel call in a plan
FLOPS_PER_US = 5e4  # a float32 product's speed on one core (50 GFLOP/s)
ELEMENTS_PER_US = 1e3  # an element-wise kernel's (about 1 ns an element)
UNKNOWN_DIM = 32  # what an unknown dimension counts as
_CELL_WEIGHTS = {"LSTMBlockCell": (3,), "GRUBlockCell": (2, 3)}  # the inputs holding a fused cell's weights


@dataclass
class Stages:
    """A cut body: which of the outputs each stage computes (indices), and what stage 2 reads of stage 1."""

    first: list[int]
    second: list[int]
    cross: list[Tensor]
    weights: tuple[int, int]


def _ancestors(tensors: Sequence[Tensor], stops: set[Tensor]) -> set[Operation]:
    """The ops computing `tensors` from the `stops` (fed each iteration)."""
    seen: set[Operation] = set()
    stack = [t.op for t in tensors if t not in stops]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack.extend(t.op for t in op.inputs if t not in stops and t.op not in seen)
        stack.extend(c for c in op.control_inputs if c not in seen)
    return seen


def reads(outputs: Sequence[Tensor], placeholders: Sequence[Tensor]) -> set[int]:
    """The indices of the `placeholders` that `outputs` are computed from."""
    fed = set(placeholders)
    needed = _ancestors(outputs, fed)
    used = {t for op in needed for t in op.inputs} | set(outputs)
    return {k for k, placeholder in enumerate(placeholders) if placeholder in used}


def _dims(tensor: Tensor) -> list[int]:
    shape = tensor.shape
    return [] if shape.ndims is None else [UNKNOWN_DIM if d is None else d for d in shape.as_list()]


def _size(tensor: Tensor) -> int:
    size = 1
    for d in _dims(tensor) or [UNKNOWN_DIM]:
        size *= d
    return size


def _op_weight(op: Operation) -> float:
    """An op's estimated share of an iteration's time (microseconds): constants and aliases nothing,
    products by their flops, fused cells by their gates' product, the rest by the elements they make."""
    if registry.lookup(op.type).inline is not None:
        return 0.0
    elements = sum(_size(t) for t in op.outputs)
    flops = 0.0
    if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2") and len(_dims(op.inputs[0])) >= 2:
        a = _dims(op.inputs[0])
        inner = a[-2] if op.attrs.get("transpose_a") or op.attrs.get("adj_x") else a[-1]
        flops = 2.0 * elements * inner
    elif op.type in _CELL_WEIGHTS:  # the gates' products: batch x each weight matrix
        batch = (_dims(op.inputs[0]) or [UNKNOWN_DIM])[0]
        flops = 2.0 * batch * sum(_size(op.inputs[i]) for i in _CELL_WEIGHTS[op.type] if i < len(op.inputs))
    return CALL_COST + flops / FLOPS_PER_US + elements / ELEMENTS_PER_US


def _weight(ops: set[Operation], halves: set[Operation] = frozenset()) -> float:
    """The ops' weight; a product in `halves` is computed half in each stage (`_shared_products`)."""
    return sum(_op_weight(op) * (0.5 if op in halves else 1.0) for op in ops)


def _balance(first_ops: set[Operation], body_ops: set[Operation], available: set[Tensor],
             shared: set[Operation] = frozenset(), pinned: set[Operation] = frozenset()) -> None:
    """Move ops of stage 2 that read only what stage 1 has into stage 1 while that evens the stages: a
    2-layer LSTM's gradient body needs only layer 2's backward step for the next iteration, but layer
    2's weight-gradient product can run beside it rather than with all of layer 1's backward step.
    `available`: the fed inputs stage 1 holds current values of; `pinned`: ops that stay in stage 2."""
    first = _weight(first_ops, shared)
    second = _weight(body_ops - first_ops, shared) + _weight(shared, shared)
    moved = True
    while moved:
        moved = False
        for op in sorted(body_ops - first_ops - pinned, key=lambda o: o.id):
            weight = _op_weight(op)
            if first + weight <= second - weight and all(t in available or t.op in first_ops for t in op.inputs):
                first_ops.add(op)
                first, second = first + weight, second - weight
                moved = True


def _components(edges: list[set[int]]) -> list[list[int]]:
    """The strongly connected components of the graph `edges` (k -> the nodes k depends on), each after
    the components it depends on (Tarjan's algorithm emits them in that order)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    result: list[list[int]] = []

    def visit(v: int) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            result.append(sorted(component))

    for v in range(len(edges)):
        if v not in index:
            visit(v)
    return result


def cut(carried: Sequence[tuple[Tensor, Tensor]], outputs: Sequence[Tensor], stops: set[Tensor],
        must_first: set[int] = frozenset()) -> Stages | None:
    """The most even two-stage cut of a loop body, or None where none gains.

    `carried`: (the placeholder an iteration reads a loop value from, the output with its next value);
    `outputs`: every tensor the body's plan fetches (the carried next values among them); `stops`: all
    that is fed each iteration (placeholders, captures); `must_first`: the carried values (indices) the
    loop's condition reads, which stage 1 (the calling thread, which also tests the condition) must carry."""
    body_ops = _ancestors(outputs, stops)
    if any(registry.lookup(op.type).stateful or op.guard or op.control_inputs for op in body_ops):
        return None
    inputs = [placeholder for placeholder, _ in carried]
    reads_of: list[set[int]] = []
    for _, following in carried:
        reads_of.append(reads([following], inputs) if following not in stops else
                        {j for j, placeholder in enumerate(inputs) if placeholder is following})
    best = None
    chosen: set[int] = set()
    for component in _components(reads_of)[:-1]:  # every proper prefix, in dependency order
        chosen |= set(component)
        if not must_first <= chosen:
            continue
        stages = _stages(carried, outputs, stops, chosen, body_ops)
        if stages is not None and (best is None or max(stages.weights) < max(best.weights)):
            best = stages
    if not _gains(best):  # every loop value in stage 1, stage 2 making what no iteration reads back
        best = _stages(carried, outputs, stops, set(range(len(carried))), body_ops)
    return best if _gains(best) else None


def _gains(stages: Stages | None) -> bool:
    """Whether the cut's smaller stage is worth an iteration's hand-over (`MIN_SHARE`, `MIN_STAGE_MICROSECONDS`)."""
    return stages is not None and min(stages.weights) >= max(MIN_SHARE * sum(stages.weights), MIN_STAGE_MICROSECONDS)


def _stages(carried, outputs, stops, chosen: set[int], body_ops: set[Operation]) -> Stages | None:
    """The stages where the carried values `chosen` (and all they need) are stage 1's."""
    first_ops = _ancestors([carried[k][1] for k in chosen], stops)
    shared = _shared_products(first_ops, body_ops)
    pinned = {reader for product in shared for reader in _readers(product, body_ops) if reader not in first_ops}
    # stage 1 has every input of an iteration but the loop values stage 2 carries: those it holds stale
    _balance(first_ops, body_ops, stops - {carried[k][0] for k in range(len(carried)) if k not in chosen},
             shared, pinned)
    first_outputs = {carried[k][1] for k in chosen}
    first = [i for i, t in enumerate(outputs) if t in first_outputs or (t not in stops and t.op in first_ops)]
    second = [i for i in range(len(outputs)) if i not in first]
    only_first = first_ops - shared
    second_ops = _ancestors([outputs[i] for i in second], stops) - only_first
    cross = list(dict.fromkeys(t for op in second_ops for t in op.inputs if t not in stops and t.op in only_first))
    if not second_ops or not first_ops:
        return None
    return Stages(first, second, cross, (_weight(first_ops, shared), _weight(second_ops, shared)))


def _readers(op: Operation, body_ops: set[Operation]) -> list[Operation]:
    return [reader for t in op.outputs for reader in t.consumers() if reader in body_ops]


def _shared_products(first_ops: set[Operation], body_ops: set[Operation]) -> set[Operation]:
    """Products of stage 1 read through two slices, one for each stage: each stage computes only its
    slice's columns (the plans fuse a product with its one slice, `MatMulStridedSlice`). A 2-layer
    LSTM's gradient multiplies layer 2's gate gradients by its weights once for [dx, dh]: dh carries
    layer 2's recursion (stage 1), dx is layer 1's (stage 2)."""
    shared = set()
    for op in first_ops:
        readers = _readers(op, body_ops)
        if len(op.outputs) == 1 and len(readers) == 2 and registry.fusion(op.type, "StridedSlice") is not None \
                and all(r.type == "StridedSlice" for r in readers) and sum(r in first_ops for r in readers) == 1:
            shared.add(op)
    return shared


class Pipeline:
    """A loop body's two stages compiled as sub-plans, and the iterations run through them on two threads.

    Built from the body's plan arguments (`inputs` fed per iteration, `invariants` per loop run, the
    `outputs` fetched) and `carried`: (input position, output index) pairs, the loop values an
    iteration hands the next. `run` returns what the whole body's plan would have, iteration by
    iteration."""

    def __init__(self, ctx: Any, graph: Any, inputs: Sequence[Tensor], invariants: Sequence[Tensor],
                 outputs: Sequence[Tensor], stages: Stages, carried: Sequence[tuple[int, int]],
                 summed: Sequence[int] = ()):
        self.ctx = ctx
        self.stages = stages
        self.n_outputs = len(outputs)
        first_at = {index: k for k, index in enumerate(stages.first)}
        second_at = {index: k for k, index in enumerate(stages.second)}
        self.carried_first = [(position, first_at[index]) for position, index in carried if index in first_at]
        self.carried_second = [(position, second_at[index]) for position, index in carried if index in second_at]
        # each stage's sub-plan adds the products among its summed outputs into their totals itself
        self.first, self.prepare_first, self.accumulated_first = ctx.loop_function(
            graph, list(inputs), list(invariants), [outputs[i] for i in stages.first] + stages.cross,
            [k for k, index in enumerate(stages.first) if index in summed])
        self.second, self.prepare_second, self.accumulated_second = ctx.loop_function(
            graph, list(inputs) + stages.cross, list(invariants), [outputs[i] for i in stages.second],
            [k for k, index in enumerate(stages.second) if index in summed])

    def run(self, invariant_arrays: Sequence[Any], begin: list, advance: Callable[[dict], list | None],
            totals: dict[int, Any] | None = None) -> list[tuple[list, list]] | None:
        """Run the iterations: `begin` is the first iteration's inputs, `advance(updates)` the next one's
        given the new values of the carried inputs stage 1 made (position -> array), or None to stop.
        Stage 2 runs on the helper thread; returns [(inputs, outputs)] per iteration, the inputs as the
        body read them. None where no second thread may be used now (the caller runs the body whole).

        `totals` (output index -> array): outputs added up over the iterations, each into its array by
        the thread of the stage making it, as soon as it is made and in iteration order (a loop
        gradient's weight gradients: the sum no longer waits for the pipeline's end on one thread, and
        no iteration's value is kept); their place in the returned outputs is None."""
        totals = totals or {}
        handoff: queue.SimpleQueue = queue.SimpleQueue()
        failed: list = []
        # stage 2 prepares its own invariants (the transposed weights its products read: 0.3-0.4 ms for
        # a 2-layer LSTM's gradient) beside stage 1 preparing its own, not before stage 1 starts
        join = self.ctx.beside(self._second_stage, handoff, invariant_arrays, failed,
                               _summed(self.stages.second, totals, self.accumulated_second),
                               _totals(self.stages.second, totals, self.accumulated_second))
        if join is None:
            return None
        made = len(self.stages.first)
        summed_first = _summed(self.stages.first, totals, self.accumulated_first)
        totals_first = _totals(self.stages.first, totals, self.accumulated_first)
        firsts = []
        try:
            prepared = self.prepare_first(*invariant_arrays)  # (inside: stage 2 must hear of its failure)
            inputs = begin
            while inputs is not None and not failed:
                out = self.first(*inputs, *prepared, *totals_first)
                handoff.put((inputs, out))
                keep_totals(out, self.accumulated_first, totals_first)
                firsts.append(_add_into(out[:made], summed_first, self.accumulated_first))
                inputs = advance({position: out[k] for position, k in self.carried_first})
        finally:
            handoff.put(None)
            seconds = join()  # raises stage 2's error
        results = []
        for first, (inputs, second) in zip(firsts, seconds):
            outputs: list = [None] * self.n_outputs
            for index, value in zip(self.stages.first, first):
                outputs[index] = value
            for index, value in zip(self.stages.second, second):
                outputs[index] = value
            results.append((inputs, outputs))
        return results

    def _second_stage(self, handoff: queue.SimpleQueue, invariant_arrays: Sequence[Any], failed: list,
                      summed: list[tuple[int, Any]], totals: list) -> list:
        """Stage 2 of each iteration handed over, with its own carried values: [(inputs, outputs)]."""
        made = len(self.stages.first)
        current: dict[int, Any] = {}
        results = []
        try:
            prepared = self.prepare_second(*invariant_arrays)
            while (item := handoff.get()) is not None:
                inputs, first = item
                inputs = list(inputs)
                for position, value in current.items():
                    inputs[position] = value
                out = self.second(*inputs, *first[made:], *prepared, *totals)
                current = {position: out[k] for position, k in self.carried_second}
                keep_totals(out, self.accumulated_second, totals)
                results.append((inputs, _add_into(out, summed, self.accumulated_second)))
        except BaseException:
            failed.append(True)
            raise
        return results


def _summed(indices: Sequence[int], totals: dict[int, Any], accumulated: Sequence[int]) -> list[tuple[int, Any]]:
    """(position among a stage's outputs, total) for each of the stage's outputs `indices` in `totals`
    that its sub-plan does not add into the total itself (`accumulated`)."""
    return [(k, totals[index]) for k, index in enumerate(indices) if index in totals and k not in accumulated]


def _totals(indices: Sequence[int], totals: dict[int, Any], accumulated: Sequence[int]) -> list:
    """The totals a stage's sub-plan adds its `accumulated` outputs (positions among `indices`) into."""
    return [totals[indices[k]] for k in accumulated]


def keep_totals(out: Sequence[Any], accumulated: Sequence[int], totals: Sequence[Any]) -> None:
    """After a call adding its `accumulated` outputs into `totals` (`KernelContext.loop_function`): where
    one came back as another array than its total (not added in place), copy it into the total."""
    for k, total in zip(accumulated, totals):
        if out[k] is not total:
            np.copyto(total, out[k])


def _add_into(out: Sequence[Any], summed: list[tuple[int, Any]], accumulated: Sequence[int]) -> Sequence[Any]:
    """Add a stage's summed outputs into their totals; the outputs, those summed (None), here or by
    the sub-plan (`accumulated`), left out."""
    if not summed and not accumulated:
        return out
    out = list(out)
    for k, total in summed:
        np.add(total, out[k], out=total)
        out[k] = None
    for k in accumulated:
        out[k] = None
    return out
