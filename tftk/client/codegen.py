"""The fast back end: a plan's steps written as one straight-line Python function.

Each step becomes one line calling its bound kernel, each dying slot is released (`v7 = None`)
right after its last use, and steps inside a `tf.cond` branch sit under an `if` on the predicate.
Constants, kernels and variable boxes are globals of the generated function; only this module
knows their names. A run therefore costs about one Python call per op and no graph work at all.
"""

from __future__ import annotations

import linecache
import re
from typing import Any

import numpy as np

from tftk.client.plan import Action, Plan, Step
from tftk.framework import errors

__all__ = ["compile_plan", "plan_source", "slot_name", "unbound_slot", "uninitialized"]

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


def compile_plan(plan: Plan) -> None:
    """Generate, compile and attach `plan.function` (and `plan.line_to_step` for errors)."""
    global _counter
    _counter += 1
    filename = f"<tftk-plan-{_counter}>"
    namespace: dict[str, Any] = {"_uninitialized": uninitialized, "_copy": np.copy}
    for slot, value in plan.constants.items():
        namespace[slot_name(slot)] = value
    body: list[str] = []
    open_guard: list[tuple] = [()]  # the guard of the `if` block lines are currently written in

    def emit(line: str, guard: tuple, step: Step | None = None) -> None:
        if guard != open_guard[0]:
            open_guard[0] = guard
            if guard:
                body.append("    if " + " and ".join(slot_name(p) if taken else f"not {slot_name(p)}"
                                                     for p, taken in guard) + ":")
        body.append(("        " if guard else "    ") + line)
        if step is not None:
            plan.line_to_step[len(body) + 1] = step  # +1 for the def line

    for index, step in enumerate(plan.steps):
        for line in _lines(step, index, namespace):
            emit(line, step.guard, step)
        for slot in step.free:
            emit(f"{slot_name(slot)} = None", step.guard)

    results = [f"_copy({slot_name(s)})" if s in plan.storage else slot_name(s) for s in plan.fetch_slots]
    params = ", ".join(slot_name(i) for i in range(len(plan.feeds)))
    source = [f"def _plan({params}):"] + body + [f"    return ({', '.join(results)}{',' if results else ''})"]
    text = "\n".join(source) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)
    plan.function = namespace["_plan"]


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
