"""`FuncGraph`: a sub-graph for a loop body or condition, traced from a Python function.

Outer tensors it uses become placeholders ("captures") fed by the op that runs it, so the
sub-graph can be compiled into its own plan. Variables always live in the root graph: a body
that reads a variable sees the value it had when the loop started (a captured value), and a
body that updates one (`assign_add` inside a loop) writes the outer variable's storage through
a `CapturedState` stand-in.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable

from tftk.framework import registry
from tftk.framework.ops import Graph, Operation, Tensor

__all__ = ["FuncGraph", "root_graph"]


class FuncGraph(Graph):
    """A graph nested in `outer`: its ops may use outer tensors, which are captured."""

    def __init__(self, outer: Graph, name: str):
        super().__init__()
        self.outer_graph = outer
        self.name = name
        self.seed = outer.seed
        self.captures: dict[Tensor, Tensor] = {}  # outer tensor -> inner placeholder
        self.outer_control_inputs: list[Operation] = []
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self._state_captures: dict[Operation, Tensor] = {}  # outer stateful op -> CapturedState

    @contextlib.contextmanager
    def _outside_scopes(self):
        """Create an op at the top of the sub-graph: no name scope, control dependency or cond."""
        saved = self._name_stack, self._control_dependencies_stack, self._cond_stack
        self._name_stack, self._control_dependencies_stack, self._cond_stack = "", [], []
        try:
            yield
        finally:
            self._name_stack, self._control_dependencies_stack, self._cond_stack = saved

    def capture(self, tensor: Tensor) -> Tensor:
        """The inner placeholder standing for an outer tensor (created on first use)."""
        if tensor.graph is self:
            return tensor
        inner = self.captures.get(tensor)
        if inner is None:
            if isinstance(tensor.graph, FuncGraph) and tensor.graph is not self.outer_graph:
                tensor = self.outer_graph.capture(tensor)  # type: ignore[attr-defined]
            with self._outside_scopes():
                op = super().create_op("Placeholder", [], [(tensor.dtype, tensor.shape)], "capture",
                                       {"dtype": tensor.dtype, "shape": tensor.shape})
            inner = self.captures[tensor] = op.outputs[0]
        return inner

    def capture_state(self, ref: Tensor) -> Tensor:
        """A stand-in for the outer stateful op behind `ref`, for ops updating it in place."""
        holder = registry.state_holder(ref)
        stand_in = self._state_captures.get(holder)
        if stand_in is None:
            with self._outside_scopes():
                op = super().create_op("CapturedState", [], [(ref.dtype, ref.shape)], "captured_state",
                                       {registry.CAPTURED_STATE_ATTR: holder})
            stand_in = self._state_captures[holder] = op.outputs[0]
        return stand_in

    def create_op(self, op_type: str, inputs: Iterable[Tensor], output_specs: list, name: str | None = None,
                  attrs: dict | None = None, control_inputs: Iterable[Operation] = ()) -> Operation:
        kind = registry.find(op_type)
        refs = kind.ref_inputs if kind is not None else ()
        inputs = [t if t.graph is self else self.capture_state(t) if i in refs else self.capture(t)
                  for i, t in enumerate(inputs)]
        inner_controls = []
        for c in control_inputs:
            if c.graph is self:
                inner_controls.append(c)
            else:
                self.outer_control_inputs.append(c)
        return super().create_op(op_type, inputs, output_specs, name, attrs, inner_controls)

    def control_dependencies(self, control_inputs: Any):
        if control_inputs is not None:
            inner = []
            for c in control_inputs:
                op = c if isinstance(c, Operation) else getattr(c, "op", c)
                if getattr(op, "graph", self) is self:
                    inner.append(c)
                else:
                    self.outer_control_inputs.append(op)
            control_inputs = inner
        return super().control_dependencies(control_inputs)


def root_graph(graph: Graph) -> Graph:
    """The outermost graph: where variables, variable scopes and collections live."""
    while isinstance(graph, FuncGraph):
        graph = graph.outer_graph
    return graph


registry.register_op("CapturedState", inline=registry.Inline.VARIABLE, holds_state=True)
registry.not_differentiable("CapturedState")
