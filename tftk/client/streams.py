"""Inter-op parallelism: a plan's steps run as two streams, the calling thread's and a helper thread's.

A 2-layer static LSTM's forward pass is two chains of steps, one per layer, where layer 2's step t
needs layer 1's step t only: TF's executor runs ready ops on all its threads, and on 2 cores its
step took 41.8 ms where tftk's one straight-line function took 54 (`bench/bench_rnn.py`). Here a plan
is split in two sequences of steps, each written as a function (`codegen.compile_streams`): the
caller runs one, a helper thread the other, each kernel on one thread (BLAS and Numba too), and a
step waiting for another stream's result blocks on a latch the producing stream releases after it.

How a plan is split:

1. **Dependencies** (`dependencies`): between steps, data (a slot's producer before its readers),
   control inputs, each variable's writes against its reads (a read of a slot derived from the
   variable's storage waits for the last update before it in the plan; an update waits for the reads
   and the update before it), a donated buffer's overwrite after its other reads, and the order of
   stateful steps. Plans with cond guards are not split.
2. **Costs**: each step's seconds, measured in `PROFILE_RUNS` runs of the plan at one thread with a
   clock read after every step (`measure`, `codegen.compile_timed`: real runs, their results are the
   user's).
3. **Schedule** (`schedule`): list scheduling by each step's longest path to the end (HEFT): a step
   goes to the stream where it would finish first, a wait on the other stream costing
   `SYNC_SECONDS`, and leaving the stream of the predecessor it waits for last costing that again
   (its successors will likely wait for it there: fewer crossings than HEFT's greedy choice). Each
   stream runs its steps in the order of their simulated starts, a topological order of both, so
   neither can wait for the other in a cycle.
4. The split is kept when the simulated time is at most `MIN_GAIN` of the plan's serial time; the
   session then measures it against its other ways of running a 2-thread step
   (`tftk.client.threads`) and runs it only where it wins.
5. The caller's steps that no helper step overlaps in the simulation (`Schedule.alone`: a CNN's
   forward chain, the steps before a fork and after a join) run with two work-sharing workers, their
   conv calls and big products cut in pieces for the idle second core (`tftk.kernels.work_sharing`).
   In-process, split against split with them: LeNet 6.9-7.2 ms against 7.2-7.5 (3.9 of its 8.8 ms of
   steps run alone), deep-MNIST 21.6-22.6 against 23.9-24.8, the 2-layer LSTM unchanged (35.5-36.5
   against 35.7-35.9: 4.7 of its 55 ms run alone).

A step writing its result into an input's buffer (donation) waits for every other read of that
buffer, in either stream (`dependencies`). An error in either stream stops both: the other stream's next
wait raises, the caller waits for the helper's function to end, and the first error is raised.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from tftk.client import codegen, rows, side_thread
from tftk.client.plan import Action, FusedOp, Plan, PlanOp, state_name, variable_of
from tftk.framework import registry

__all__ = ["dependencies", "schedule", "Schedule", "Splitting", "profiling", "measure", "split", "PROFILE_RUNS",
           "MIN_GAIN", "SYNC_SECONDS"]

PROFILE_RUNS = 2  # step-by-step timed runs before a plan's split is decided; each step's minimum counts
MIN_GAIN = 0.85  # a split runs only where its simulated time is at most this fraction of the serial time
MIN_PLAN_SECONDS = 2e-3  # shorter plans are not split: a run's hand-over to the helper costs ~50 us
# what a wait on the other stream's result is charged in the schedule: the waiting thread is woken
# through a futex (measured 20-60 us on the 2-core VM), and the value arrives from another core's cache
SYNC_SECONDS = 40e-6
_EPSILON = 1e-9  # the least cost of a step, so that a predecessor's rank is always above its successors'


def dependencies(plan: Plan) -> list[set[int]] | None:
    """For each step, the indices of the steps that must end before it starts; None where the plan has
    cond guards or merges (not split)."""
    steps = plan.steps
    if any(step.guard or step.action is Action.MERGE for step in steps):
        return None
    deps: list[set[int]] = [set() for _ in steps]
    producer: dict[int, int] = {}
    step_of_op: dict[Any, int] = {}
    derived: dict[int, set[str]] = {}  # slot -> the variables whose storage it may be (or view)
    last_write: dict[str, int] = {}
    reads_since: dict[str, list[int]] = {}
    last_stateful = None
    buffers = _Buffers(steps)
    buffer_reads: dict[int, list[int]] = {}  # a buffer (its group's slot) -> the steps so far reading it
    for index, step in enumerate(steps):
        kind = registry.lookup(step.op.type)
        mine = deps[index]
        mine.update(producer[s] for s in step.inputs if s in producer)
        for control in getattr(step.op, "control_inputs", ()):
            if control in step_of_op:
                mine.add(step_of_op[control])
        read_keys = set().union(*(derived.get(s, ()) for s in step.inputs))
        if step.action is Action.READ:
            read_keys = {state_name(step.op)}
        write_keys = {state_name(variable_of(step.op.inputs[i])) for i in kind.ref_inputs
                      if i < len(step.op.inputs)} if step.action is Action.CALL else set()
        for key in read_keys - write_keys:
            if key in last_write:
                mine.add(last_write[key])
            reads_since.setdefault(key, []).append(index)
        for key in write_keys:
            if key in last_write:
                mine.add(last_write[key])
            mine.update(reads_since.pop(key, ()))
            last_write[key] = index
        if kind.stateful:
            if last_stateful is not None:
                mine.add(last_stateful)
            last_stateful = index
        if step.donor is not None:  # it overwrites the input: after every read of that buffer
            mine.update(buffer_reads.get(buffers.find(step.inputs[step.donor]), ()))
        for slot in step.inputs:
            buffer_reads.setdefault(buffers.find(slot), []).append(index)
        mine.discard(index)
        out_keys = write_keys | (read_keys if not kind.fresh else set())
        for slot in step.outputs:
            if slot is not None:
                producer[slot] = index
                if out_keys:
                    derived[slot] = out_keys
        for op in _graph_ops(step.op):
            step_of_op[op] = index
    return deps


class _Buffers:
    """Which slots may share memory: a step whose kernel is not `fresh` may return views of its inputs."""

    def __init__(self, steps: list) -> None:
        self.parent: dict[int, int] = {}
        for step in steps:
            if step.action is Action.CALL and not registry.lookup(step.op.type).fresh:
                for slot in step.outputs:
                    if slot is not None:
                        for source in step.inputs:
                            self.parent[self.find(slot)] = self.find(source)

    def find(self, slot: int) -> int:
        while self.parent.get(slot, slot) != slot:
            grandparent = self.parent.get(self.parent[slot], self.parent[slot])
            self.parent[slot] = grandparent  # path halving: later finds take half the steps
            slot = grandparent
        return slot


def _graph_ops(op: Any) -> list:
    """The graph ops a step's op stands for (a fused pair's both, a plan-only op's original and the ops
    it completes besides)."""
    if isinstance(op, FusedOp):
        return _graph_ops(op.producer) + _graph_ops(op.consumer) + [op]
    if isinstance(op, PlanOp):
        return _graph_ops(op.like) + [g for standing in op.stands_for for g in _graph_ops(standing)] + [op]
    return [op]


@dataclass
class Schedule:
    """Two streams of step indices, each in run order, the simulated and serial seconds, and the first
    stream's steps that run alone in the simulation (no step of the second overlaps them)."""

    streams: tuple[list[int], list[int]]
    seconds: float
    serial: float
    alone: frozenset[int] = frozenset()


def schedule(deps: list[set[int]], costs: list[float], sync: float = SYNC_SECONDS) -> Schedule:
    """Assign each step to one of two streams (HEFT: by decreasing longest path to the end, each step
    where it finishes first) and order each stream by the steps' simulated starts."""
    n = len(deps)
    costs = [max(c, _EPSILON) for c in costs]
    successors: list[list[int]] = [[] for _ in range(n)]
    for index, before in enumerate(deps):
        for j in before:
            successors[j].append(index)
    rank = [0.0] * n
    for index in reversed(range(n)):
        rank[index] = costs[index] + max((rank[s] for s in successors[index]), default=0.0)
    free = [0.0, 0.0]
    start, finish, stream_of = [0.0] * n, [0.0] * n, [0] * n
    for index in sorted(range(n), key=lambda i: (-rank[i], i)):
        # its home is the stream of the predecessor it waits for last: moving away costs a wait later too
        home = stream_of[max(deps[index], key=finish.__getitem__)] if deps[index] else 0
        best = None
        for stream in (home, 1 - home):
            ready = max((finish[j] + (sync if stream_of[j] != stream else 0.0) for j in deps[index]), default=0.0)
            begin = max(free[stream], ready)
            judged = begin + costs[index] + (sync if stream != home else 0.0)
            if best is None or judged < best[0]:
                best = (judged, stream, begin)
        stream_of[index], start[index] = best[1], best[2]
        finish[index] = free[best[1]] = best[2] + costs[index]
    streams = tuple(sorted((i for i in range(n) if stream_of[i] == s), key=lambda i: (start[i], -rank[i], i))
                    for s in (0, 1))
    busy = [(start[i], finish[i]) for i in streams[1]]
    alone = frozenset(i for i in streams[0] if not any(b0 < finish[i] and start[i] < b1 for b0, b1 in busy))
    return Schedule(streams, max(finish, default=0.0), sum(costs), alone)


class Splitting:
    """One plan's way to a split: its timed function, the step times measured so far, the decision."""

    def __init__(self, plan: Plan) -> None:
        self.deps = dependencies(plan)
        self.timed = codegen.compile_timed(plan) if self.deps is not None else None
        self.costs: list[float] | None = None
        self.runs = 0
        self.decided = self.deps is None
        self.lock = threading.Lock()  # runs of the plan on several threads at once: one decides


def profiling(plan: Plan) -> bool:
    """Whether the plan's next multi-thread run is to be timed step by step (`measure`): its split is not
    decided yet (a plan with cond guards is decided at once: not split)."""
    if plan.splitting is None:
        plan.splitting = Splitting(plan)
    return not plan.splitting.decided


def measure(plan: Plan, feed_values: list) -> tuple[tuple, bool]:
    """Run `plan` timing each step (a real run: its outputs are returned), and after `PROFILE_RUNS` such
    runs decide the split and the slices (each step's cost is its least time over them): `(outputs,
    decided)` where `decided` says that `plan.split_function` and `plan.rows_function`
    (`tftk.client.rows`) have just been made, or found not to gain (None)."""
    splitting = plan.splitting
    timed = splitting.timed
    if timed is None:  # another thread's run of the plan decided since `profiling`
        return plan.function(*feed_values), False
    times: list[float] = []
    outputs = timed(times, *feed_values)
    seconds = [b - a for a, b in zip(times, times[1:])]
    with splitting.lock:
        if splitting.decided:
            return outputs, False
        splitting.costs = seconds if splitting.costs is None else [min(a, b) for a, b in zip(splitting.costs, seconds)]
        splitting.runs += 1
        if splitting.runs < PROFILE_RUNS:
            return outputs, False
        plan.split_function = split(plan, splitting.deps, splitting.costs)
        if sum(splitting.costs) >= MIN_PLAN_SECONDS:
            plan.rows_function = rows.build(plan, splitting.deps, splitting.costs)
        splitting.decided, splitting.timed, splitting.deps = True, None, None  # what deciding needed
    return outputs, True


def split(plan: Plan, deps: list[set[int]], costs: list[float]) -> Callable | None:
    """The plan's two-stream function where the schedule of its steps (`costs`: seconds each) gains at
    least `1 - MIN_GAIN` of its serial time; else, where it runs loops that can pipeline their
    iterations on two threads (`tftk.ops.loop_stages`: dynamic_rnn over stacked cells), its function
    with the loops allowed to; else None."""
    if sum(costs) < MIN_PLAN_SECONDS:
        return None
    planned = schedule(deps, costs, SYNC_SECONDS)
    if planned.streams[1] and planned.seconds <= MIN_GAIN * planned.serial:
        return codegen.compile_streams(plan, planned.streams, deps, planned.alone)
    if any(getattr(step.kernel, "pipelines", False) for step in plan.steps):
        return _with_pipelines(plan.function)
    return None


def _with_pipelines(function: Callable) -> Callable:
    """`function` run with its loops allowed to put their second stages on the helper thread."""

    def run(*feeds: Any) -> tuple:
        side_thread.allow_pipelines(True)
        try:
            return function(*feeds)
        finally:
            side_thread.allow_pipelines(False)

    return run
