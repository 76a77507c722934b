"""TF1's stacks (StackV2, StackPushV2, StackPopV2): how its gradient loops remember each iteration.

`tf.gradients` of a TF1 while loop adds, for every forward value the backward loop needs, a stack
created outside the loops, a StackPushV2 in the forward frame (run each iteration, ordered by
control edges into the forward counter's NextIteration) and a StackPopV2 in the backward frame.
tftk rebuilds them as stateful ops sharing one per-session list, found through the StackV2 op
the handle came from: StackV2 empties it at the start of each run, the pushes append and the pops
take from the end, in the order the rebuilt loops run them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.func_graph import FuncGraph
from tftk.framework.ops import Operation, Tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.formats.op_table import UnsupportedNodeError
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["STACK_BUILDERS"]


def _storage(ctx, stack: Operation) -> list:
    """The stack's elements in the calling run (each run has its own: `KernelContext.run_resource`)."""
    return ctx.run_resource(stack, "stack", list)


def _bind_stack(op, ctx):
    def kernel(max_size):
        _storage(ctx, op).clear()  # a new stack at each StackV2 execution, as TF creates one
        return np.int32(0)
    return kernel


def _bind_push(op, ctx):
    stack = op.get_attr("stack")

    def kernel(handle, elem):
        _storage(ctx, stack).append(np.array(elem, copy=True))
        return elem
    return kernel


def _bind_pop(op, ctx):
    stack = op.get_attr("stack")
    name = op.name

    def kernel(handle):
        storage = _storage(ctx, stack)
        if not storage:
            raise InvalidArgumentError(None, op, f"{name}: pop from an empty stack (its pushes did not run)")
        return storage.pop()
    return kernel


registry.register_op("StackV2", _bind_stack, stateful=True)
registry.register_op("StackPushV2", _bind_push, stateful=True)
registry.register_op("StackPopV2", _bind_pop, stateful=True)
registry.not_differentiable("StackV2", "StackPushV2", "StackPopV2")


def _stack_of(handle: Tensor, name: str) -> Operation:
    """The StackV2 op behind a handle that reached a push or pop through Enter, Switch or a capture."""
    while True:
        if handle.op.type == "StackV2":
            return handle.op
        if handle.op.type == "Identity":
            handle = handle.op.inputs[0]
            continue
        graph = handle.graph
        outer = next((o for o, inner in graph.captures.items() if inner is handle), None) \
            if isinstance(graph, FuncGraph) else None
        if outer is None:
            raise UnsupportedNodeError(f"node {name!r}: its stack handle does not come from a StackV2 node")
        handle = outer


def _stack(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    return make_op("StackV2", [x[0]], dtypes.int32, [], name, {"elem_type": a["elem_type"]})


def _push(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    return make_op("StackPushV2", [x[0], x[1]], x[1].dtype, x[1].shape, name, {"stack": _stack_of(x[0], name)})


def _pop(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    return make_multi_op("StackPopV2", [x[0]], [(a["elem_type"], TensorShape(None))], name,
                         {"stack": _stack_of(x[0], name)}).outputs[0]


STACK_BUILDERS = {"StackV2": _stack, "StackPushV2": _push, "StackPopV2": _pop}
