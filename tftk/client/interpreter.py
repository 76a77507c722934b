"""The step-by-step back end: runs a plan's steps one at a time, reporting each op as it runs.

Slower than the generated function, but it sees every op: traced runs
(RunOptions(trace_level=FULL_TRACE)) time each op and the debugger (tfdbg's NaN hunt) inspects
each output. It runs the same steps as `codegen`, so both back ends compute the same values and
raise the same errors (an unset slot raises UnboundLocalError naming it as the generated code
would).
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from tftk.client.codegen import slot_name, uninitialized
from tftk.client.plan import Action, Plan

__all__ = ["interpret"]

_UNSET = object()


def interpret(plan: Plan, feed_values: list, record: Callable | None = None) -> tuple:
    """Run `plan` step by step; `record(op, start, end, outputs)` is called after each op."""
    values: list[Any] = [_UNSET] * plan.n_slots
    for slot, value in plan.constants.items():
        values[slot] = value
    values[:len(feed_values)] = feed_values

    def value(slot: int) -> Any:
        v = values[slot]
        if v is _UNSET:
            raise UnboundLocalError(f"cannot access local variable '{slot_name(slot)}' where it is "
                                    "not associated with a value")
        return v

    for step in plan.steps:
        if any(bool(value(p)) != taken for p, taken in step.guard):
            continue
        start = time.perf_counter()
        if step.action is Action.CALL:
            result = step.kernel(*[value(s) for s in step.inputs])
            outs = [result] if len(step.outputs) == 1 else (list(result) if step.outputs else [])
        elif step.action is Action.READ:
            outs = [step.box.value]
            if outs[0] is None:
                uninitialized(step.box.name)
        elif step.action is Action.MERGE:
            pred, if_true, if_false = step.inputs
            outs = [value(if_true) if value(pred) else value(if_false)]
        else:  # a constant or an alias: its value is already in its slot
            outs = [values[plan.slot_of[t]] for t in step.op.outputs]
        end = time.perf_counter()
        for slot, v in zip(step.outputs, outs):
            if slot is not None:
                values[slot] = v
        if record is not None:
            record(step.op, start, end, outs)
        for slot in step.free:
            values[slot] = _UNSET
    return tuple(np.copy(value(s)) if s in plan.storage else value(s) for s in plan.fetch_slots)
