"""The fast back end: a plan's steps written as one straight-line Python function.

Each step becomes one line calling its bound kernel, each dying slot is released (`v7 = None`)
right after its last use, and steps inside a `tf.cond` branch sit under an `if` on the predicate.
Constants, kernels and variable boxes are globals of the generated function; only this module
knows their names. A run therefore costs about one Python call per op and no graph work at all.
"""

from __future__ import annotations

import collections
import linecache
import re
import time
from typing import Any, Callable

import numpy as np

from tftk.client import side_thread
from tftk.client.plan import Action, Plan, Step
from tftk.framework import errors
from tftk.kernels import work_sharing

__all__ = ["compile_plan", "compile_streams", "compile_rows", "compile_timed", "plan_source", "slot_name",
           "unbound_slot", "uninitialized"]

_counter = 0


def slot_name(slot: int) -> str:
    """The Python name of a slot in generated code (also how UnboundLocalError names it)."""
    return f"v{slot}"


def unbound_slot(exc: UnboundLocalError) -> int | None:
    """The slot an UnboundLocalError of a plan found unset (its value is in an untaken branch)."""
    match = re.search(r"local variable 'v(\d+)'", str(exc))
    return int(match.group(1)) if match else None


def uninitialized(name: str) -> None:
    raise errors.FailedPreconditionError(
        None, None, f"Attempting to use uninitialized value {name}: run its initializer first "
        "(e.g. sess.run(tf.global_variables_initializer())) or restore it from a checkpoint.")


def _namespace(plan: Plan) -> dict[str, Any]:
    """The globals every generated function of `plan` starts from: helpers and the constants."""
    namespace: dict[str, Any] = {"_uninitialized": uninitialized, "_copy": np.copy}
    for slot, value in plan.constants.items():
        namespace[slot_name(slot)] = value
    return namespace


def _compile(plan: Plan, lines: list[str], steps: dict[int, Step], namespace: dict, name: str) -> Callable:
    """Compile the source `lines` (`steps`: line number -> step, for errors) and return its function `name`."""
    global _counter
    _counter += 1
    filename = f"<tftk-plan-{_counter}>"
    text = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)
    plan.line_to_step.update(((filename, line), step) for line, step in steps.items())
    return namespace[name]


def _results(plan: Plan) -> str:
    """The return statement of a plan's function: its fetches, variable storage copied."""
    results = [f"_copy({slot_name(s)})" if s in plan.storage else slot_name(s) for s in plan.fetch_slots]
    return f"    return ({', '.join(results)}{',' if results else ''})"


def compile_plan(plan: Plan) -> None:
    """Generate, compile and attach `plan.function` (and its lines in `plan.line_to_step` for errors)."""
    plan.function = _serial(plan, timed=False)


def compile_timed(plan: Plan) -> Callable:
    """`plan.function` with a clock: called as `f(times, *feeds)`, it also appends `time.perf_counter()`
    to the list `times` before its first step and after each step (a step's seconds are the difference
    of its two times; errors name their op as `plan.function`'s do)."""
    return _serial(plan, timed=True)


def _serial(plan: Plan, timed: bool) -> Callable:
    """The plan's steps as one function (see the module docstring); `timed`: see `compile_timed`."""
    namespace = _namespace(plan)
    namespace["_clock"] = time.perf_counter
    body: list[str] = ["    _t.append(_clock())"] if timed else []
    line_steps: dict[int, Step] = {}
    open_guard: list[tuple] = [()]  # the guard of the `if` block lines are currently written in

    def emit(line: str, guard: tuple, step: Step | None = None) -> None:
        if guard != open_guard[0]:
            open_guard[0] = guard
            if guard:
                body.append("    if " + " and ".join(slot_name(p) if taken else f"not {slot_name(p)}"
                                                     for p, taken in guard) + ":")
        body.append(("        " if guard else "    ") + line)
        if step is not None:
            line_steps[len(body) + 1] = step  # +1 for the def line

    for index, step in enumerate(plan.steps):
        for line in _lines(step, index, namespace):
            emit(line, step.guard, step)
        for slot in step.free:
            emit(f"{slot_name(slot)} = None", step.guard)
        if timed:
            emit("_t.append(_clock())", step.guard)

    params = ", ".join(["_t"] * timed + [slot_name(i) for i in range(len(plan.feeds))])
    return _compile(plan, [f"def _plan({params}):"] + body + [_results(plan)], line_steps, namespace, "_plan")


def compile_streams(plan: Plan, streams: tuple[list[int], list[int]], deps: list[set[int]],
                    shared: frozenset[int] = frozenset()) -> Callable:
    """`plan`'s steps as two streams (`tftk.client.streams`): returns a function called as
    `plan.function` that runs `streams[0]` (step indices in run order) itself and `streams[1]` on the
    helper thread (`tftk.client.side_thread`), each step after the steps of the other stream it depends
    on (`deps`). The plan's steps must carry no cond guard.

    A step waits on the latch of the latest step of the other stream it depends on, unless an earlier
    wait of its stream already covered that one; a value made in one stream and read in the other
    goes through a list shared by both (`_x`), written by the producer before it releases its latch,
    taken (and the list's reference dropped) by the reader's first use. Each stream releases its own
    names after their last use in it, as `compile_plan` does. The caller's steps in `shared` run with
    two work-sharing workers (`tftk.kernels.work_sharing`: their conv calls and big products cut in
    pieces): the schedule expects the helper's stream idle meanwhile, so the second core is free."""
    steps = plan.steps
    stream_of = {i: s for s, order in enumerate(streams) for i in order}
    position = {i: p for order in streams for p, i in enumerate(order)}
    producer = {slot: i for i, step in enumerate(steps) for slot in step.outputs if slot is not None}
    fetched = set(plan.fetch_slots)
    latch_of: dict[int, int] = {}  # step -> the latch it releases
    waits: dict[int, int] = {}  # step -> the latch it takes first
    loads: dict[int, list[int]] = collections.defaultdict(list)  # step -> slots it takes from _x first
    transfer: dict[int, int] = {}  # slot -> its index in _x
    late: list[int] = []  # fetched slots the helper's stream makes and the caller's never reads: taken at the end
    for s, order in enumerate(streams):
        known, loaded = -1, set()
        for i in order:
            latest = max((position[j] for j in deps[i] if stream_of[j] != s), default=-1)
            if latest > known:
                waits[i] = latch_of.setdefault(streams[1 - s][latest], len(latch_of))
                known = latest
            for slot in _runtime_inputs(steps[i]):
                if slot in producer and stream_of[producer[slot]] != s and slot not in loaded:
                    loaded.add(slot)
                    loads[i].append(slot)
                    transfer.setdefault(slot, len(transfer))
        if s == 0:
            late = [slot for slot in dict.fromkeys(plan.fetch_slots)
                    if slot in producer and stream_of[producer[slot]] == 1 and slot not in loaded]
            for slot in late:
                transfer[slot] = len(transfer)
    namespace = _namespace(plan)
    namespace.update(_spawn=side_thread.spawn, _join=side_thread.join, _fail=side_thread.fail,
                     _latches=side_thread.latches, _Aborted=side_thread.Aborted, _workers=work_sharing.set_workers)
    sources: list[list[str]] = []
    stream_lines: list[dict[int, Step]] = []  # per stream: body line (from 0) -> its step
    for s, order in enumerate(streams):
        indent = "        " if s == 0 else "    "
        body: list[str] = []
        lines: dict[int, Step] = {}
        sharing = False
        dying = _dying(steps, order, lambda slot: slot in producer and slot not in fetched)
        for p, i in enumerate(order):
            step = steps[i]
            if i in waits:
                body += [f"{indent}_L[{waits[i]}].acquire()", f"{indent}if _st[0] is not None: raise _Aborted"]
            for slot in loads[i]:
                body += [f"{indent}{slot_name(slot)} = _x[{transfer[slot]}]", f"{indent}_x[{transfer[slot]}] = None"]
            if s == 0 and (i in shared) != sharing:
                sharing = not sharing
                body.append(f"{indent}_workers({2 if sharing else 1})")
            for line in _lines(step, i, namespace):
                lines[len(body)] = step
                body.append(indent + line)
            body += [f"{indent}_x[{transfer[slot]}] = {slot_name(slot)}" for slot in step.outputs if slot in transfer]
            if i in latch_of:
                body.append(f"{indent}_L[{latch_of[i]}].release()")
            body += [f"{indent}{slot_name(slot)} = None" for slot in dying[p]]
        if sharing:
            body.append(f"{indent}_workers(1)")
        sources.append(body)
        stream_lines.append(lines)
    own = [tuple(latch for i, latch in latch_of.items() if stream_of[i] == s) for s in (0, 1)]
    namespace.update(_own_main=own[0], _own_side=own[1])
    params = ", ".join(slot_name(i) for i in range(len(plan.feeds)))
    side = [f"def _side(_x, _st, _L{', ' if params else ''}{params}):"] + (sources[1] or ["    pass"])
    main = [f"def _plan({params}):", f"    _x = [None] * {len(transfer)}", "    _st = [None]",
            f"    _L = _latches({len(latch_of)})",
            f"    _job = _spawn(_side, _st, _L, _own_side, (_x, _st, _L{', ' if params else ''}{params}))",
            "    try:"] + (sources[0] or ["        pass"]) + [
            "    except BaseException as _e:"] + (["        _workers(1)"] if shared else []) + [
            "        _fail(_e, _job, _own_main)", "    _join(_job)"]
    main += [f"    {slot_name(slot)} = _x[{transfer[slot]}]" for slot in late]
    # line numbers from 1: the side function's body starts on line 2, the caller's after its 6 first lines
    numbered = {**{line + 2: step for line, step in stream_lines[1].items()},
                **{len(side) + 7 + line: step for line, step in stream_lines[0].items()}}
    return _compile(plan, side + main + [_results(plan)], numbered, namespace, "_plan")


def compile_rows(plan: Plan, layout: Any, helpers: dict[str, Any]) -> Callable:
    """`plan`'s steps with its regions run on slices of the batch (`tftk.client.rows`): returns a function
    called as `plan.function`. `layout` is a `rows.Layout`; `helpers` the functions the generated code
    calls (`_batch`, `_run` and the combining ones, by the names `rows.build` gives).

    The caller's function runs the serial segments' steps and, for each region, `_run` of the region's
    function (`_region<k>(_i, _b0, _b1, _rows, _n, *inputs)`: rows inputs sliced to the slice's rows, an
    earlier region's values taken from its per-slice lists `p<slot>`), then combines its exports: per
    slice for later regions, whole (by kind) for serial steps and fetches. A step of a region that would
    write into an input's buffer gets a copy of it. The slices are known once the batch's sources are
    (after the first segment when it is serial: an input pipeline's batch); where they disagree on the
    batch's size, or it is below two slices, each region runs once on all its rows (`_batch`)."""
    from tftk.framework.batch_rows import Rows
    steps = plan.steps
    namespace = _namespace(plan)
    namespace.update(helpers)
    source: list[str] = []
    line_steps: dict[int, Step] = {}
    combiners = {Rows.ROWS: "_stack({})", Rows.PARTIAL: "_add({})", Rows.SAME: "_first({})",
                 Rows.SHAPE: "_whole_shape({})"}
    rescalers = {Rows.MEAN: "_mean_part", Rows.COUNT: "_whole_count"}
    main: list[tuple[list[str], list[Step | None], list[str]]] = []  # (lines, their steps, names read)
    for number, (what, segment) in enumerate(layout.segments):
        if what == "serial":
            for i in segment:
                lines = _lines(steps[i], i, namespace)
                main.append((lines, [steps[i]] * len(lines), [slot_name(s) for s in _runtime_inputs(steps[i])]))
            continue
        region, name = segment, f"_region{number}"
        params = [slot_name(s) for s in region.whole + region.same] + [f"p{s}" for s in region.sliced]
        source.append(f"def {name}(_i, _b0, _b1, _rows, _n{''.join(', ' + p for p in params)}):")
        for slot in region.whole:
            sliced = f"{slot_name(slot)}[_b0:_b1]"
            source.append(f"    {slot_name(slot)} = " + (f"_copy({sliced})" if slot in region.copied else sliced))
        for slot in region.same:
            if slot in region.copied:
                source.append(f"    {slot_name(slot)} = _copy({slot_name(slot)})")
        for slot in region.sliced:
            taken = f"p{slot}[_i]"
            source.append(f"    {slot_name(slot)} = " + (f"_copy({taken})" if slot in region.copied else taken))
        kept = set(region.exports)
        dying = _dying(steps, region.steps, lambda slot: slot not in kept and slot not in plan.constants)
        for p, i in enumerate(region.steps):
            for line in _lines(steps[i], i, namespace):
                line_steps[len(source) + 1] = steps[i]
                source.append("    " + line)
            for slot in steps[i].outputs:
                if slot in region.rescaled:
                    source.append(f"    {slot_name(slot)} = {rescalers[region.rescaled[slot]]}"
                                  f"({slot_name(slot)}, _rows, _n)")
            source += [f"    {slot_name(s)} = None" for s in dying[p]]
        exports = ", ".join(slot_name(s) for s in region.exports)
        source.append(f"    return ({exports}{',' if region.exports else ''})")
        lines = [f"_r = _run({name}, _b, _n, ({''.join(p + ', ' for p in params)}))"]
        for k, slot in enumerate(region.exports):
            parts = f"[_s[{k}] for _s in _r]"
            if slot in layout.per_slice:
                lines.append(f"p{slot} = {parts}")
            if slot in layout.combined:
                lines.append(f"{slot_name(slot)} = " + combiners[layout.kinds[slot]].format(parts))
        lines.append("_r = None")
        main.append((lines, [None] * len(lines), params))
    # the slices, once the batch's sources are known: after the first segment's steps when it is serial
    known = len(layout.segments[0][1]) if layout.segments[0][0] == "serial" else 0
    sources = [slot_name(s) for s in layout.sources]
    main.insert(known, ([f"_b, _n = _batch({', '.join(sources)})"], [None], sources))
    # each name of the caller's function released after its last read there (fetches kept)
    last: dict[str, int] = {}
    for position, (_, _, names) in enumerate(main):
        for read in names:
            last[read] = position
    fetched = {slot_name(s) for s in plan.fetch_slots}
    constants = {slot_name(s) for s in plan.constants}
    source.append(f"def _plan({', '.join(slot_name(i) for i in range(len(plan.feeds)))}):")
    for position, (lines, owners, _) in enumerate(main):
        for line, owner in zip(lines, owners):
            if owner is not None:
                line_steps[len(source) + 1] = owner
            source.append("    " + line)
        source += [f"    {read} = None" for read, at in last.items()
                   if at == position and read not in fetched and read not in constants]
    return _compile(plan, source + [_results(plan)], line_steps, namespace, "_plan")


def _dying(steps: list[Step], order: list[int], releasable: Callable[[int], bool]) -> list[list[int]]:
    """For each position of `order` (step indices run in that order by one function), the slots read or
    made there that no later step of it reads, among those `releasable`."""
    last_read: dict[int, int] = {}
    for p, i in enumerate(order):
        for slot in _runtime_inputs(steps[i]):
            last_read[slot] = p
    return [[slot for slot in dict.fromkeys(_runtime_inputs(steps[i]) + steps[i].outputs)
             if slot is not None and releasable(slot) and last_read.get(slot, -1) <= p] for p, i in enumerate(order)]


def _runtime_inputs(step: Step) -> tuple[int, ...]:
    """The slots a step's lines read (a constant's or an alias's step runs nothing)."""
    return () if step.action is Action.NAME else step.inputs


def _lines(step: Step, index: int, namespace: dict) -> list[str]:
    """The source lines of one step (none for constants and aliases: they are just names)."""
    outs = [slot_name(s) if s is not None else "_" for s in step.outputs]
    args = [slot_name(s) for s in step.inputs]
    if step.action is Action.READ:
        box = f"box{index}"
        namespace[box] = step.box
        return [f"{outs[0]} = {box}.value", f"if {outs[0]} is None: _uninitialized({box}.name)"]
    if step.action is Action.MERGE:  # tf.cond's join: inputs (pred, true_value, false_value)
        p, if_true, if_false = args
        return [f"{outs[0]} = {if_true} if {p} else {if_false}"]
    if step.action is Action.NAME:
        return []
    fn = f"k{index}"
    namespace[fn] = step.kernel
    call = f"{fn}({', '.join(args)})" + ("" if step.donor is None else
                                         f"  # in place: {slot_name(step.inputs[step.donor])}")
    if len(outs) == 1:
        return [f"{outs[0]} = {call}"]
    if any(o != "_" for o in outs):
        return [f"{', '.join(outs)} = {call}"]
    return [call]


def plan_source(plan: Plan) -> str:
    """The generated source of a plan (for debugging and tests)."""
    filename = plan.function.__code__.co_filename
    return "".join(linecache.cache.get(filename, (0, None, [], ""))[2])
