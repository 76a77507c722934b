"""Data parallelism inside one step: a plan's per-example work run on slices of its batch, one per thread.

Most of a training step's work is per example (`tftk.framework.batch_rows`): the forward pass of a CNN,
its loss per example, and the backward pass down to the weight gradients, which add the examples up.
Here such a plan runs in *segments*: serial ones, run once on the whole batch (variable reads, random
draws, the optimizer's updates, anything without a rule), and *regions*, whose steps run once per slice
of the batch, the caller and the work-sharing helper taking slices from a shared counter
(`tftk.kernels.work_sharing.run`: a helper late with its slice is overtaken). A region's values meet the
rest of the step through its exports: rows stacked, partial sums added in slice order, a rows value's
shape given the batch's row count, and values that are the same in every slice taken from the first; a
later region reads an earlier one's values slice by slice, with no stacking between.

LeNet (`bench_training.py cnn64`), two halves of its batch side by side: 5.3 ms against 7.9 for the
whole batch on one core and 6.8 for its two-stream split (`tftk.client.streams`), which finds little
to overlap in a CNN's chain of layers. Deep-MNIST's dropout draws its mask in a serial segment between
two regions (the draws are the step's, as on one thread).

How a plan is laid out (`layout`): each slot gets a kind. The batch's sources are the feeds with an
unknown first dimension and the rows an op of the first serial segment brings in from nowhere (an
input pipeline's next batch, `batch_rows.batch_source`); the step checks that they agree on the row
count before its first region, and runs each region once, on all its rows, where they do not (or
where the batch has a single row), which computes what the serial plan does. In the plan's order, a step whose op has a rule (`OpKind.rows`) saying what its outputs are, is
not stateful and reads a value that is not `SAME` runs in a region; a step on `SAME` values alone goes
where it can run first (with its inputs' region, else serially); any other step runs serially on whole
values. Each step takes the earliest segment its dependencies (`streams.dependencies`: data, control,
variable writes against reads, donated buffers, stateful order) allow. The layout is used where its
regions hold at least `MIN_REGION_SHARE` of the plan's measured time; the session's thread policy then
measures it against its other ways of running two threads and runs it where it wins
(`tftk.client.threads`).

A slice computed twice (overtaken) must give the same values: a region never writes into a value it
did not make (a step that would take such an input's buffer gets a copy).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from tftk.client import codegen
from tftk.client.plan import Action, Plan
from tftk.framework import batch_rows, registry
from tftk.framework.batch_rows import Rows
from tftk.kernels import work_sharing

__all__ = ["Region", "Layout", "layout", "build", "slices", "batch_slices", "run_region", "MIN_REGION_SHARE", "SLICES",
           "WHOLE"]

MIN_REGION_SHARE = 0.5  # of the plan's measured step time, in region steps
SLICES = 2  # slices of the batch: one per thread
# what a serial step sees of a value a region made: the sums, counts and shapes of the whole batch
_READ_WHOLE = {Rows.PARTIAL: Rows.SAME, Rows.MEAN: Rows.SAME, Rows.COUNT: Rows.SAME}


@dataclass
class Region:
    """Steps run once per slice, in plan order, and what crosses its border."""

    steps: list[int]
    whole: list[int] = field(default_factory=list)  # inputs: rows of the whole batch, sliced in the region
    same: list[int] = field(default_factory=list)  # inputs passed as they are
    sliced: list[int] = field(default_factory=list)  # inputs an earlier region made: one value per slice
    exports: list[int] = field(default_factory=list)  # values read after the region (or fetched)
    copied: set[int] = field(default_factory=set)  # inputs a step would write into: copied first
    rescaled: dict[int, Rows] = field(default_factory=dict)  # output slot -> MEAN or COUNT (module docstring)


@dataclass
class Layout:
    """A plan's segments in run order: ("serial", step indices) or ("region", Region)."""

    segments: list[tuple[str, Any]]
    kinds: dict[int, Rows]  # each slot's kind as its producer makes it
    # the batch's sources: feeds of rows and rows an op of the first serial segment brings in (an input
    # pipeline's next batch); their row counts must agree at run time
    sources: list[int]
    combined: set[int]  # region exports serial steps or fetches read whole
    per_slice: set[int]  # region exports later regions read slice by slice


def _feed_kind(tensor: Any) -> Rows:
    dims = tensor.shape.as_list() if tensor.shape.ndims else None
    return Rows.ROWS if dims and dims[0] is None else Rows.SAME


def _pure(kind: Any) -> bool:
    return not (kind.stateful or kind.blocking or kind.ref_inputs or kind.remote or kind.holds_state)


class _ReadWhole(Exception):
    """Values of one slice (`LOCAL`: a max pool's arg-maxes) that a serial step or a fetch reads whole."""

    def __init__(self, slots: set[int]):
        super().__init__(slots)
        self.slots = slots


def layout(plan: Plan, deps: list[set[int]]) -> Layout | None:
    """The plan's segments (module docstring), or None where no step runs on slices. A value of one slice
    that something reads whole (a max pool's arg-maxes read by a pooling gradient without a rule) has
    its producer run whole instead, and the plan is laid out again."""
    producer = {slot: index for index, step in enumerate(plan.steps) for slot in step.outputs if slot is not None}
    whole: set[int] = set()  # steps that run on the whole batch whatever their rules say
    while True:
        try:
            return _layout(plan, deps, whole)
        except _ReadWhole as needed:
            whole |= {producer[slot] for slot in needed.slots}


def _layout(plan: Plan, deps: list[set[int]], whole: set[int]) -> Layout | None:
    kinds: dict[int, Rows] = {slot: _feed_kind(tensor) for slot, tensor in enumerate(plan.feeds)}
    sources = [slot for slot, kind in kinds.items() if kind is Rows.ROWS]
    kinds.update((slot, Rows.SAME) for slot in plan.constants)
    segment_of: list[int] = []
    rescaled: dict[int, Rows] = {}
    for index, step in enumerate(plan.steps):
        earliest = max((segment_of[j] for j in deps[index]), default=0)
        segment = _place(step, earliest, kinds, rescaled, index in whole)
        segment_of.append(segment)
        brought = [slot for slot in step.outputs if slot is not None and kinds[slot] is Rows.ROWS] \
            if segment % 2 == 0 and all(kinds.get(s, Rows.SAME) is Rows.SAME for s in step.inputs) else []
        if brought and segment == 0:
            sources += brought  # an input pipeline's batch, before any region: checked with the feeds
        else:
            kinds.update((slot, Rows.SAME) for slot in brought)  # rows from nowhere, later on: whole
    if not sources or not any(segment % 2 for segment in segment_of):
        return None
    return _segments(plan, segment_of, kinds, rescaled, sources)


def _place(step: Any, earliest: int, kinds: dict[int, Rows], rescaled: dict[int, Rows], whole: bool) -> int:
    """One step's segment at or after `earliest` (odd: a region; never for a `whole` step), its outputs'
    kinds set (and those a region rescales in `rescaled`); raises _ReadWhole where a serial step would
    read one slice's value (`LOCAL`)."""
    if step.action is Action.NAME:
        return earliest  # a constant or an alias: no code
    kind = registry.lookup(step.op.type) if step.action is Action.CALL else None
    seen = tuple(kinds.get(slot, Rows.SAME) for slot in step.inputs)
    rule = kind.rows if kind is not None and _pure(kind) and not whole else None
    outputs = batch_rows.outputs(rule, step.op, seen) if rule is not None else None
    if outputs is not None and (earliest % 2 or any(k is not Rows.SAME for k in seen)):
        for slot, out in zip(step.outputs, outputs):
            if slot is not None:
                kinds[slot] = {Rows.MEAN: Rows.PARTIAL, Rows.COUNT: Rows.SAME}.get(out, out)
                if out in (Rows.MEAN, Rows.COUNT):
                    rescaled[slot] = out
        return earliest + 1 - earliest % 2
    if Rows.LOCAL in seen:
        raise _ReadWhole({slot for slot, k in zip(step.inputs, seen) if k is Rows.LOCAL})
    read = tuple(_READ_WHOLE.get(k, k) for k in seen)  # a serial step reads sums, counts and shapes whole
    outputs = batch_rows.outputs(kind.rows, step.op, read) if kind is not None and kind.rows is not None else None
    for position, slot in enumerate(step.outputs):
        if slot is not None:
            out = outputs[position] if outputs is not None else Rows.SAME
            kinds[slot] = out if out in (Rows.ROWS, Rows.SHAPE) else Rows.SAME
    return earliest + earliest % 2


def _segments(plan: Plan, segment_of: list[int], kinds: dict[int, Rows], rescaled: dict[int, Rows],
              sources: list[int]) -> Layout | None:
    """Group the placed steps into segments and work out what crosses each region's border."""
    producer = {slot: index for index, step in enumerate(plan.steps) for slot in step.outputs if slot is not None}
    numbers = sorted(set(segment_of[i] for i, step in enumerate(plan.steps) if step.action is not Action.NAME))
    regions = {number: Region([]) for number in numbers if number % 2}
    segments: list[tuple[str, Any]] = [("region", regions[n]) if n % 2 else ("serial", []) for n in numbers]
    members = dict(zip(numbers, (segment for _, segment in segments)))
    combined: set[int] = set()
    per_slice: set[int] = set()
    for index, step in enumerate(plan.steps):
        if step.action is Action.NAME:
            continue
        mine = segment_of[index]
        region = regions.get(mine)
        (region.steps if region is not None else members[mine]).append(index)
        for slot in dict.fromkeys(step.inputs):
            source = segment_of[producer[slot]] if slot in producer else None
            if source is not None and source % 2 and source != mine:  # made by another region
                (per_slice if region is not None else combined).add(slot)
                if slot not in regions[source].exports:
                    regions[source].exports.append(slot)
            if region is None or source == mine or slot in plan.constants:
                continue
            if source is None or not source % 2:
                if kinds.get(slot) in (Rows.SHAPE, Rows.LOCAL):  # a whole batch's shape: never a slice's
                    return None
            where = region.sliced if source is not None and source % 2 else \
                region.whole if kinds.get(slot) is Rows.ROWS else region.same
            if slot not in where:
                where.append(slot)
        if region is not None:
            donated = step.inputs[step.donor] if step.donor is not None else None
            if donated is not None and (donated not in producer or segment_of[producer[donated]] != mine):
                region.copied.add(donated)
            region.rescaled.update((slot, rescaled[slot]) for slot in step.outputs if slot in rescaled)
    for slot in plan.fetch_slots:
        if slot in producer and segment_of[producer[slot]] % 2:
            combined.add(slot)
            exports = regions[segment_of[producer[slot]]].exports
            if slot not in exports:
                exports.append(slot)
    local = {slot for slot in combined if kinds.get(slot) is Rows.LOCAL}
    if local:
        raise _ReadWhole(local)
    return Layout(segments, kinds, sources, combined, per_slice)


# ---- running it -----------------------------------------------------------------------------------

WHOLE = ((0, None, 1),), 1  # one slice of all the rows, its share of the batch 1/1


@functools.lru_cache(maxsize=64)
def slices(n: int) -> tuple[tuple[tuple[int, int, int], ...], int]:
    """`SLICES` row ranges (b0, b1, rows) covering n rows, the first (the caller's) the longest, and n."""
    bounds = [n * k // SLICES for k in range(SLICES + 1)]
    bounds[1:-1] = [n - b for b in reversed(bounds[1:-1])]
    return tuple((b0, b1, b1 - b0) for b0, b1 in zip(bounds[:-1], bounds[1:])), n


def batch_slices(*sources: Any) -> tuple[tuple[tuple[int, int, int], ...], int]:
    """The slices of a step's batch and its row count: `slices` where every source (a rows feed, an
    input pipeline's batch) has the same row count, of at least `SLICES`; else `WHOLE` (the regions
    then run once, on all their rows, as the serial plan would)."""
    n = sources[0].shape[0] if np.ndim(sources[0]) else 0
    if n < SLICES or any(np.ndim(s) == 0 or np.shape(s)[0] != n for s in sources[1:]):
        return WHOLE
    return slices(n)


def run_region(region: Callable, bounds: Sequence[tuple[int, int, int]], n: int, args: tuple) -> list[tuple]:
    """`region(i, b0, b1, rows, n, *args)` for each slice i, on the caller and the work-sharing helper
    (each slice's kernels whole, on one thread); the results in slice order."""
    results: list[Any] = [None] * len(bounds)

    def compute(index: int) -> tuple:
        workers = work_sharing.workers()
        work_sharing.set_workers(1)
        try:
            return region(index, *bounds[index], n, *args)
        finally:
            work_sharing.set_workers(workers)

    work_sharing.run(len(bounds), compute, results.__setitem__)
    return results


def stack(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The slices' rows as the batch's."""
    return np.concatenate(parts, axis=0)


def add(parts: Sequence[Any]) -> Any:
    """The slices' partial sums added in slice order (the same bits whichever thread ran which)."""
    return functools.reduce(np.add, parts)


def whole_shape(parts: Sequence[np.ndarray]) -> np.ndarray:
    """A rows value's shape for the whole batch (or its row count, a scalar): the slices' row counts added."""
    if len(parts) == 1:
        return parts[0]
    shape = np.array(parts[0])
    if shape.ndim == 0:
        return np.asarray(sum(int(p) for p in parts), dtype=shape.dtype)
    shape[0] = sum(int(p[0]) for p in parts)
    return shape


def first(parts: Sequence[Any]) -> Any:
    """A value the same in every slice."""
    return parts[0]


def mean_part(value: Any, rows: int, n: int) -> Any:
    """A mean over a slice's `rows` examples as its part of the mean over all `n`."""
    value = np.asarray(value)
    return np.multiply(value, rows / n, dtype=value.dtype)


def whole_count(value: Any, rows: int, n: int) -> Any:
    """A count over a slice's `rows` examples' elements as the count over all `n`'s."""
    value = np.asarray(value)
    return np.asarray(value // rows * n, dtype=value.dtype)


def build(plan: Plan, deps: list[set[int]], costs: list[float]) -> Callable | None:
    """The plan's function running its regions on slices (`codegen.compile_rows`), where the regions hold
    at least `MIN_REGION_SHARE` of the plan's measured seconds (`costs`: one per step); else None."""
    laid = layout(plan, deps)
    if laid is None:
        return None
    in_regions = sum(costs[i] for kind, segment in laid.segments if kind == "region" for i in segment.steps)
    if in_regions < MIN_REGION_SHARE * sum(costs):
        return None
    return codegen.compile_rows(plan, laid, {
        "_batch": batch_slices, "_run": run_region,
        "_stack": stack, "_add": add, "_first": first, "_whole_shape": whole_shape,
        "_mean_part": mean_part, "_whole_count": whole_count})
