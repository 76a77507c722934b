"""TF1's control flow in a GraphDef, rebuilt as tftk's `While` op and cond guards.

TensorFlow 1.x wrote `tf.while_loop` (and `dynamic_rnn`) as a *frame*: Enter nodes carry each
loop variable (and, with is_constant, each loop invariant) into the frame named by their
`frame_name`; per loop variable a Merge(Enter, NextIteration) feeds the condition and a
Switch(Merge, LoopCond) whose output 1 feeds the body and whose output 0 leaves through Exit. A
frame nested in a loop body enters from its parent frame. tftk's While takes traced cond/body
graphs instead, so each frame is rebuilt as one: the Merges become the cond graph's inputs, the
Switch outputs 1 the body graph's inputs, the NextIteration inputs the body's outputs, the
constant Enters captures, and the Exits the While's outputs.

`tf.cond` was written as Switch(data, pred) nodes whose outputs 0/1 live only when pred is
false/true, and a Merge taking whichever branch ran. tftk's cond records ops under a guard
(pred, taken): a Switch output becomes an Identity under its branch's guard, every node inherits
the deepest guard of its inputs, and a Merge of the two branches becomes tftk's Merge(pred, t, f).

The gradient loops `tf.gradients` added to TF1 graphs are frames like any other; their stacks and
gradient TensorArrays are rebuilt by stack_import and tensor_array_import. Anything else (a Merge
of three inputs, a loop Switch used outside its loop, a frame with two LoopConds, an Exit outside
any frame) is an UnsupportedNodeError naming the node.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tftk.framework.func_graph import FuncGraph
from tftk.framework.ops import Operation, Tensor, get_default_graph, guard_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.formats.op_table import UnsupportedNodeError
from tftk.ops import control_flow_ops
from tftk.ops.constant_op import placeholder
from tftk.ops.op_builder import make_op

__all__ = ["LOOP_OPS", "Frames", "LoopExit", "V1_BUILDERS", "node_guard"]

LOOP_OPS = frozenset({"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"})
ROOT = ""  # the frame of nodes outside every loop
_RETRACES = 3  # loop-variable shapes are relaxed and the frame retraced at most this often


def _source_name(ref: str) -> str:
    return ref.lstrip("^").partition(":")[0]


def _split(ref: str) -> tuple[str, int]:
    node, _, index = ref.partition(":")
    return node, int(index) if index else 0


def _is(node, *ops: str) -> bool:
    return node.op in ops or node.op in tuple("Ref" + o for o in ops)


class LoopExit:
    """Stands in for a top-level frame's Exit node in the importer's topological walk: its inputs
    are everything the whole frame reads from outside, so it comes after all of them."""

    def __init__(self, node, outer_inputs: list[str], frames: "Frames"):
        self.name, self.op, self.node = node.name, node.op, node
        self.input = ["^" + name for name in outer_inputs]
        self._frames = frames

    def build(self, resolve: Callable[[str], Tensor], control: Callable[[str], Operation | None],
              build_node: Callable) -> list[Tensor]:
        """This Exit's output, building its frame's While on first use."""
        return [self._frames.exit_tensor(self.node, resolve, control, build_node)]


class Frames:
    """The frames of a GraphDef: which frame every node lives in, and each frame's parent."""

    def __init__(self, nodes: dict[str, Any]):
        self.nodes = nodes
        self.frame_of: dict[str, str] = {}
        self.parent: dict[str, str] = {}
        for name in nodes:
            self._place(name)
        self.members: dict[str, list[str]] = {}
        for name, frame in self.frame_of.items():
            self.members.setdefault(frame, []).append(name)
        self._built: dict[tuple[Any, str], _FrameScope] = {}  # (graph, frame) -> the nodes after its While

    @staticmethod
    def present(nodes: Sequence[Any]) -> bool:
        """Whether a GraphDef's nodes use TF1 loops (frames)."""
        return any(n.op in LOOP_OPS for n in nodes)

    # ---- which frame each node is in -------------------------------------------------------------
    def _frame_source(self, node) -> str | None:
        """The input whose frame decides `node`'s (a Merge's Enter side, never its NextIteration)."""
        for ref in node.input:
            name = _source_name(ref)
            if name not in self.nodes:
                continue
            if _is(node, "Merge") and _is(self.nodes[name], "NextIteration"):
                continue
            return name
        return None

    def _place(self, start: str) -> None:
        stack = [start]
        while stack:
            name = stack[-1]
            if name in self.frame_of:
                stack.pop()
                continue
            node = self.nodes[name]
            source = self._frame_source(node)
            if source is not None and source not in self.frame_of:
                if source in stack:
                    raise UnsupportedNodeError(f"import_graph_def: node {name!r} ({node.op}) is on a cycle that "
                                               f"does not pass through a loop's Merge and NextIteration")
                stack.append(source)
                continue
            outer = ROOT if source is None else self.frame_of[source]
            if _is(node, "Enter"):
                frame = node.attr["frame_name"].s.decode()
                self.parent.setdefault(frame, outer)
                self.frame_of[name] = frame
            elif _is(node, "Exit"):
                if outer == ROOT:
                    raise UnsupportedNodeError(f"import_graph_def: Exit node {name!r} is not inside a loop frame")
                self.frame_of[name] = self.parent[outer]
            else:
                self.frame_of[name] = outer
            stack.pop()

    def _inside(self, frame: str, outer: str) -> bool:
        """Whether `frame` is `outer` or nested in it."""
        while frame != ROOT:
            if frame == outer:
                return True
            frame = self.parent[frame]
        return outer == ROOT

    # ---- the importer's view ---------------------------------------------------------------------
    def walk_nodes(self) -> list[Any]:
        """The root frame's nodes, each top-level Exit as a LoopExit standing for its whole frame."""
        outer_inputs: dict[str, list[str]] = {}
        for name, frame in self.frame_of.items():
            if frame == ROOT:
                continue
            top = frame
            while self.parent[top] != ROOT:
                top = self.parent[top]
            for ref in self.nodes[name].input:
                source = _source_name(ref)
                if source in self.frame_of and not self._inside(self.frame_of[source], top):
                    outer_inputs.setdefault(top, []).append(source)
        walk = []
        for name, node in self.nodes.items():
            if self.frame_of[name] != ROOT:
                continue
            if _is(node, "Exit"):
                frame = self.frame_of[_source_name(node.input[0])]
                walk.append(LoopExit(node, sorted(set(outer_inputs.get(frame, []))), self))
            else:
                walk.append(node)
        return walk

    def exit_tensor(self, exit_node, resolve, control, build_node) -> Tensor:
        """The tensor an Exit node leaves its frame with (the frame's While built once per graph).

        An Exit reads a loop variable's Switch output 0, directly or through ops after the loop
        (TF1's gradient loops pass it through a tuple's Identity): those are rebuilt after the While.
        """
        frame = self.frame_of[_source_name(exit_node.input[0])]
        key = (get_default_graph(), frame)
        if key not in self._built:
            loop = _Loop(self, frame)
            exits = loop.build(resolve, control, build_node)
            self._built[key] = _FrameScope(loop, {f"{s}:0": t for s, t in exits.items()}, resolve, control,
                                           build_node, after_loop=True)
        value = self._built[key].tensor(exit_node.input[0])
        with guard_scope(value.graph, value.op.guard):  # named as the Exit, which users fetch (a final state)
            return make_op("Identity", [value], value.dtype, value.shape, exit_node.name)


class _Loop:
    """One frame's structure: its loop variables (Enter, Merge, Switch, NextIteration) and LoopCond."""

    def __init__(self, frames: Frames, frame: str):
        self.frames, self.frame = frames, frame
        nodes = frames.nodes
        members = frames.members[frame]
        conds = [n for n in members if _is(nodes[n], "LoopCond")]
        if len(conds) != 1:
            raise UnsupportedNodeError(f"import_graph_def: loop frame {frame!r} has {len(conds)} LoopCond nodes, "
                                       f"tftk rebuilds frames with exactly one")
        self.loop_cond = nodes[conds[0]]
        self.variables: list[tuple[Any, Any, Any, Any]] = []  # (enter, merge, switch, next_iteration)
        switches = {_source_name(nodes[n].input[0]): nodes[n] for n in members
                    if _is(nodes[n], "Switch") and _source_name(nodes[n].input[1]) == self.loop_cond.name}
        for name in members:
            merge = nodes[name]
            if not _is(merge, "Merge"):
                continue
            sources = [nodes[_source_name(r)] for r in merge.input]
            nexts = [s for s in sources if _is(s, "NextIteration")]
            enters = [s for s in sources if _is(s, "Enter")]
            if not nexts:
                continue  # a cond's Merge inside the loop body
            if len(merge.input) != 2 or len(nexts) != 1 or len(enters) != 1 or name not in switches:
                raise UnsupportedNodeError(f"import_graph_def: Merge node {name!r} of loop {frame!r} is not "
                                           f"Merge(Enter, NextIteration) feeding a Switch on the LoopCond")
            self.variables.append((enters[0], merge, switches[name], nexts[0]))

    def build(self, resolve, control, build_node) -> dict[str, Tensor]:
        """Add the While op to the default graph; returns {Switch name: the loop variable's exit value}."""
        from tftk.ops.while_loop import _while_op
        outer = get_default_graph()
        init = [resolve(enter.input[0]) for enter, _, _, _ in self.variables]
        specs = [(t.dtype, t.shape) for t in init]
        for _ in range(_RETRACES + 1):
            cond_graph = self._trace("cond", specs, resolve, control, build_node,
                                     lambda inputs: {f"{m.name}:0": t for (_, m, _, _), t in zip(self.variables, inputs)},
                                     [self.loop_cond.input[0]])
            body_graph = self._trace("body", specs, resolve, control, build_node,
                                     lambda inputs: {f"{s.name}:1": t for (_, _, s, _), t in zip(self.variables, inputs)},
                                     [nxt.input[0] for _, _, _, nxt in self.variables])
            relaxed = [(dt, _relax(shape, out.shape)) for (dt, shape), out in zip(specs, body_graph.outputs)]
            for (enter, _, _, _), (dt, _), out in zip(self.variables, specs, body_graph.outputs):
                if out.dtype is not dt:
                    raise UnsupportedNodeError(f"import_graph_def: loop variable {enter.name!r} enters as {dt.name} "
                                               f"but the body returns {out.dtype.name}")
            if all(r[1] == s[1] for r, s in zip(relaxed, specs)):
                break
            specs = relaxed
        with guard_scope(outer, node_guard("While", outer, init + list(body_graph.captures)
                                           + list(cond_graph.captures), [])):
            outputs = _while_op(outer, init, specs, cond_graph, body_graph, 0, None)
        return {switch.name: out for (_, _, switch, _), out in zip(self.variables, outputs)}

    def _trace(self, label: str, specs, resolve, control, build_node, bind, fetches: list[str]) -> FuncGraph:
        graph = FuncGraph(get_default_graph(), label)
        with graph.as_default():
            graph.inputs = [placeholder(dt, shape, name=f"loop_var_{i}") for i, (dt, shape) in enumerate(specs)]
            scope = _FrameScope(self, bind(graph.inputs), resolve, control, build_node)
            graph.outputs = [scope.result(ref) for ref in fetches]
            graph.structured_outputs = graph.outputs
        return graph


def _relax(spec: TensorShape, seen: TensorShape) -> TensorShape:
    """The most specific shape both fit: a loop variable's shape invariant, once the body showed what
    it returns (TF1 kept shape_invariants only as the Merge's shape, which a GraphDef may not hold)."""
    if spec.ndims is None or seen.ndims is None or spec.ndims != seen.ndims:
        return TensorShape(None)
    return TensorShape([a if a == b else None for a, b in zip(spec.as_list(), seen.as_list())])


class _FrameScope:
    """Rebuilds one frame's nodes into the current sub-graph on demand, each once."""

    def __init__(self, loop: _Loop, bound: dict[str, Tensor], resolve, control, build_node, after_loop: bool = False):
        self.loop, self.frames, self.after_loop = loop, loop.frames, after_loop
        self.bound = dict(bound)  # "node:k" -> tensor (the loop variables' placeholders)
        self.outer_resolve, self.outer_control, self.build_node = resolve, control, build_node
        self.graph = get_default_graph()  # the sub-graph this scope's nodes go in, wherever they are asked for
        self.built: dict[str, list[Tensor]] = {}
        self.ops: dict[str, Operation | None] = {}
        self._loop_nodes = {n.name for v in loop.variables for n in v} | {loop.loop_cond.name}

    def _outside(self, name: str) -> bool:
        return not self.frames._inside(self.frames.frame_of[name], self.loop.frame)

    def tensor(self, ref: str) -> Tensor:
        name, index = _split(ref)
        if f"{name}:{index}" in self.bound:
            return self.bound[f"{name}:{index}"]
        if self._outside(name):
            return self.outer_resolve(ref)
        self._build(name)
        outputs = self.built[name]
        if index >= len(outputs):
            raise UnsupportedNodeError(f"import_graph_def: output {index} of node {name!r} is read, which has "
                                       f"{len(outputs)}")
        return outputs[index]

    def result(self, ref: str) -> Tensor:
        """A cond or body result: a NextIteration's input, after the NextIteration's control inputs
        (TF1's gradient loops order each iteration's stack pushes this way)."""
        name, _ = _split(ref)
        consumer = next((nxt for _, _, _, nxt in self.loop.variables if nxt.input[0] == ref), None)
        controls = [c for c in (self.control(r[1:]) for r in (consumer.input[1:] if consumer else [])
                                if r.startswith("^")) if c is not None]
        value = self.tensor(ref)
        if not controls:
            return value
        with get_default_graph().control_dependencies(controls):
            return make_op("Identity", [value], value.dtype, value.shape, f"{name}/ordered")

    def control(self, name: str) -> Operation | None:
        if self._outside(name):
            return self.outer_control(name)
        bound = [t for ref, t in self.bound.items() if ref.partition(":")[0] == name]
        if bound:
            return bound[0].op
        self._build(name)
        return self.ops[name]

    def _needs(self, node) -> list[str]:
        """The inputs of `node` in this frame still to be built."""
        bound_nodes = {k.partition(":")[0] for k in self.bound}
        needed = []
        for ref in node.input:
            name, index = _split(ref.lstrip("^"))
            if (name in bound_nodes if ref.startswith("^") else f"{name}:{index}" in self.bound):
                continue
            if not self._outside(name) and name not in self.built:
                needed.append(name)
        return needed

    def _build(self, start: str) -> None:
        with self.graph.as_default():
            self._build_in_graph(start)

    def _build_in_graph(self, start: str) -> None:
        stack, expanding = [(start, False)], set()
        while stack:
            name, ready = stack.pop()
            if name in self.built:
                continue
            node = self.frames.nodes[name]
            if not ready:
                self._check(node)
                if name in expanding:
                    raise UnsupportedNodeError(f"import_graph_def: node {name!r} of loop {self.loop.frame!r} "
                                               f"is on a cycle outside the loop's Merge/NextIteration")
                expanding.add(name)
                stack.append((name, True))
                if not (_is(node, "Enter") or _is(node, "Exit")):  # a constant Enter, a nested frame's Exit
                    stack.extend((dep, False) for dep in self._needs(node))
                continue
            expanding.discard(name)
            if _is(node, "Enter"):
                outputs, op = [self.outer_resolve(node.input[0])], None
            elif _is(node, "Exit"):
                outputs = [self.frames.exit_tensor(node, self.tensor, self.control, self.build_node)]
                op = outputs[0].op
            else:
                inputs = [self.tensor(r) for r in node.input if not r.startswith("^")]
                controls = [c for c in (self.control(r[1:]) for r in node.input if r.startswith("^")) if c is not None]
                op, outputs = self.build_node(node, inputs, controls)
            self.built[name], self.ops[name] = outputs, op

    def _check(self, node) -> None:
        """A loop's own nodes are only reached through the bound loop variables."""
        if self.after_loop and (_is(node, "Enter") or _is(node, "Exit")):
            raise UnsupportedNodeError(f"import_graph_def: node {node.name!r} ({node.op}) is read after loop "
                                       f"{self.loop.frame!r} ends, from the loop's inside (tftk reads a loop's "
                                       f"results from its Switch outputs 0 only)")
        if node.name in self._loop_nodes or _is(node, "NextIteration", "LoopCond"):
            raise UnsupportedNodeError(f"import_graph_def: node {node.name!r} ({node.op}) of loop {self.loop.frame!r} "
                                       f"is read where tftk's While cannot provide it (only the loop variables' "
                                       f"Merge in the condition and Switch:1 in the body are)")
        if _is(node, "Enter") and self.frames.frame_of[node.name] == self.loop.frame and \
                not node.attr["is_constant"].b:
            raise UnsupportedNodeError(f"import_graph_def: Enter node {node.name!r} of loop {self.loop.frame!r} "
                                       f"is not a loop variable's (it feeds no Merge) and not constant")


# ---- cond: Switch / Merge ---------------------------------------------------------------------

def _root_pred(pred: Tensor) -> Tensor:
    """The predicate behind TF1's `pred_id` Identity, so both branches' guards name one tensor."""
    while pred.op.type == "Identity" and pred.op.inputs and pred.op.guard == pred.op.inputs[0].op.guard:
        pred = pred.op.inputs[0]
    return pred


def node_guard(op_type: str, graph, inputs: Sequence[Tensor], controls: Sequence[Operation]) -> tuple:
    """The cond guard a node is rebuilt under: the deepest of its inputs' (a Merge: the one around
    its branches). Raises UnsupportedNodeError for inputs from two unrelated branches."""
    base = tuple(graph._cond_stack)  # a GraphDef imported inside a tf.cond branch stays in it
    guards = [op.guard for op in [t.op for t in inputs] + list(controls) if op.graph is graph]
    if op_type in ("Merge", "ControlTrigger"):  # both run whichever branch their inputs came from
        from tftk.client.plan import _common_prefix  # the executor's rule for the branches shared by all
        prefix = _common_prefix(guards) if guards else ()
        return prefix if len(prefix) > len(base) else base
    deepest = base
    for guard in guards:
        short, long = sorted((guard, deepest), key=len)
        if long[:len(short)] != short:
            raise UnsupportedNodeError("inputs from two different cond branches meet outside a Merge")
        deepest = long
    return deepest


def _switch(x: Sequence[Tensor], a: dict, name: str) -> list[Tensor]:
    """Switch(data, pred): output 0 lives when pred is false, output 1 when it is true."""
    data, pred = x
    if data.op.type == "VariableV2":  # RefSwitch of a variable: the ops in the branch update it in place;
        return [data, data]           # they are guarded through their other inputs (switch_t/f controls)
    graph = get_default_graph()
    pred = _root_pred(pred)
    outputs = _SwitchOutputs()
    for taken in (False, True):
        with graph._cond_branch(pred, taken):
            outputs.append(make_op("Identity", [data], data.dtype, data.shape, f"{name}_{str(taken).lower()}"))
    # a control edge from a Switch fires whichever branch is taken (TF: the Switch node itself ran)
    outputs.op = control_flow_ops.no_op(name=name)
    return outputs


class _SwitchOutputs(list):
    """A Switch's two outputs, and `op`: what a control edge from the Switch node waits on."""
    op: Operation


def _merge(x: Sequence[Tensor], a: dict, name: str) -> Tensor:
    """A cond's Merge of its two branches' results as tftk's Merge(pred, if_true, if_false)."""
    if len(x) != 2:
        raise UnsupportedNodeError(f"node {name!r}: a Merge of {len(x)} inputs (tftk rebuilds the two-branch "
                                   f"Merge of tf.cond)")
    around = len(get_default_graph()._cond_stack)
    branches = [t.op.guard[around] if len(t.op.guard) > around else None for t in x]
    if None in branches or branches[0][0] is not branches[1][0] or branches[0][1] == branches[1][1]:
        raise UnsupportedNodeError(f"node {name!r}: its inputs are not the two branches of one tf.cond "
                                   f"(Switch outputs 1 and 0 of one predicate)")
    pred = branches[0][0]
    if_true, if_false = (x[0], x[1]) if branches[0][1] else (x[1], x[0])
    return control_flow_ops.merge(pred, if_true, if_false, name=name)


V1_BUILDERS: dict[str, Callable[[Sequence[Tensor], dict, str], Any]] = {
    "Switch": _switch, "RefSwitch": _switch, "Merge": _merge, "RefMerge": _merge,
    "ControlTrigger": lambda x, a, name: control_flow_ops.no_op(name=name),
}
