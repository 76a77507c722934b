"""tftk's `cond` written as TF1's Switch/Merge, the form TF1 graphs (and their importers) use.

tftk keeps a cond's branch ops in the enclosing graph, each with a guard ((pred, taken), ...),
and joins them with `Merge(pred, if_true, if_false)`; only the taken branch runs. TF1 expresses
the same with dead tensors: a tensor entering a branch goes through `Switch(data, pred)` (output 1
lives when pred is true, output 0 when false), an op fed a dead tensor is dead, and
`Merge(inputs)` forwards its one live input. So, per exported op:

- an input made outside the guard of the op reading it enters through a Switch per guard level
  (shared by every reader);
- a guarded op without inputs (a Const) gets a control input from the branch's pivot,
  `Identity(Switch(pred, pred)[taken])`, so it is dead when the branch is not taken;
- tftk's Merge(pred, t, f) becomes TF's Merge([t, f]), each input switched into its branch if it was
  made outside it (a gradient's zeros leaving a branch).

Ops outside any cond are untouched, so graphs without a cond are written as before.
"""

from __future__ import annotations

__all__ = ["write_conds"]


def _ref_parts(ref: str) -> tuple[str, int]:
    node, _, index = ref.partition(":")
    return node, int(index) if index else 0


def _name(tensor) -> str:
    return tensor.op.name if tensor.value_index == 0 else f"{tensor.op.name}:{tensor.value_index}"


class _Switches:
    """The Switch nodes taking tensors into branches, one per (tensor, guard prefix)."""

    def __init__(self, graph, guard_of: dict, taken: set) -> None:
        self.graph, self.guard_of, self.taken = graph, guard_of, taken
        self.nodes: list = []
        self._made: dict = {}

    def _unique(self, name: str) -> str:
        base, k = name, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name

    def _dtype(self, ref: str):
        node, index = _ref_parts(ref)
        try:
            return self.graph.get_operation_by_name(node).outputs[index].dtype
        except (KeyError, ValueError, IndexError):
            raise ValueError(f"cond export: cannot find the dtype of {ref!r} entering a cond branch") from None

    def enter(self, ref: str, guard: tuple, dtype=None) -> str:
        """`ref` as seen inside `guard`: through a Switch for each level it was made outside of."""
        source = self.guard_of.get(_ref_parts(ref)[0], ())
        if len(source) >= len(guard):
            return ref
        if guard[:len(source)] != source:
            raise ValueError(f"cond export: {ref!r} is read in a cond branch it was not made in")
        dtype = dtype or self._dtype(ref)
        for level in range(len(source), len(guard)):
            key = (ref, guard[:level + 1])
            if key not in self._made:
                pred, taken = guard[level]
                pred_ref = self.enter(_name(pred), guard[:level])
                self._made[key] = self._switch(ref, pred_ref, dtype, taken)
            ref = self._made[key]
        return ref

    def _switch(self, data: str, pred: str, dtype, taken: bool) -> str:
        from tftk.summary.graph_def import attr_value
        from tftk.proto.tensorflow import NodeDef
        name = self._unique(f"{_ref_parts(data)[0]}/cond_switch")
        node = NodeDef(name=name, op="Switch", input=[data, pred])
        node.attr["T"].CopyFrom(attr_value(dtype))
        self.nodes.append(node)
        self.guard_of[name] = ()  # its outputs are dead or alive by themselves
        return f"{name}:1" if taken else name

    def pivot(self, guard: tuple) -> str:
        """A node alive exactly when `guard`'s branches are taken (for ops without inputs)."""
        key = ("pivot", guard)
        if key not in self._made:
            from tftk.framework import dtypes
            from tftk.proto.tensorflow import NodeDef
            from tftk.summary.graph_def import attr_value
            pred, taken = guard[-1]
            pred_ref = self.enter(_name(pred), guard[:-1])
            switched = self._switch(pred_ref, pred_ref, dtypes.bool, taken)
            node = NodeDef(name=self._unique(f"{pred.op.name}/cond_pivot_{'t' if taken else 'f'}"), op="Identity",
                           input=[switched])
            node.attr["T"].CopyFrom(attr_value(dtypes.bool))
            self.nodes.append(node)
            self.guard_of[node.name] = guard
            self._made[key] = node.name
        return self._made[key]


def _merge_node(op, switches: _Switches):
    from tftk.proto.tensorflow import NodeDef
    from tftk.summary.graph_def import attr_value
    pred, if_true, if_false = op.inputs
    inputs = [switches.enter(_name(t), op.guard + ((pred, taken),), t.dtype)
              for t, taken in ((if_true, True), (if_false, False))]
    node = NodeDef(name=op.name, op="Merge", input=inputs + [f"^{c.name}" for c in op.control_inputs])
    node.attr["T"].CopyFrom(attr_value(op.outputs[0].dtype))
    node.attr["N"].i = 2
    return node


def _guard(op) -> tuple:
    """The op's cond guard; () for a stand-in op without one (summary's graph converter takes any
    object with the public Operation interface)."""
    return getattr(op, "guard", ())


def write_conds(graph, per_op: list) -> list:
    """The NodeDefs of [(op, its nodes)] with the cond ops in TF1's Switch/Merge form."""
    if not any(_guard(op) or op.type == "Merge" for op, _ in per_op):
        return [node for _, nodes in per_op for node in nodes]
    guard_of = {node.name: _guard(op) for op, nodes in per_op for node in nodes}
    switches = _Switches(graph, guard_of, set(guard_of))
    out = []
    for op, nodes in per_op:
        if op.type == "Merge" and len(op.inputs) == 3:
            out.append(_merge_node(op, switches))
            continue
        for node in nodes:
            if op.guard:
                data = [ref for ref in node.input if not ref.startswith("^")]
                controls = [ref for ref in node.input if ref.startswith("^")]
                if not data:
                    controls.append("^" + switches.pivot(op.guard))
                del node.input[:]
                node.input.extend([switches.enter(ref, op.guard) for ref in data] + controls)
            out.append(node)
    return switches.nodes + out
