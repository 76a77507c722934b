"""tftk's While and WhileGrad ops as TensorFlow's functional `While` nodes with FunctionDefs.

tftk's While takes (loop vars, sliced inputs, cond captures, body captures[, max iterations]) and
returns (loop vars, outputs stacked per iteration); its gradient op walks the iterations backwards
reading what the forward run kept per iteration (loop var values and the body intermediates
listed in the While's `saved` attr). TF's While has one list of loop variables, the same in and
out, and its gradient is another While reading accumulated intermediates from TensorLists (as
TF 2's while_v2 builds it). So each tftk op becomes:

- forward: `<op>/While` over [counter, loop vars, sliced inputs, captures, (max), one TensorList
  per stacked output, one per accumulated tensor]; the body gathers row `counter` of each sliced
  input and pushes stacked outputs and accumulated values; `<op>` is an IdentityN of the loop vars
  and the stacked lists' TensorListStack, in tftk's output order.
- gradient: `<grad>/While` over [t = iterations-1 counting down, the loop var gradients,
  the accumulators it reads, sliced inputs, stacked-output gradients, captures, one TensorList
  per sliced-input gradient, a running sum per capture gradient]; the body is the part of the body
  graph's gradient ops the gradient plan runs, its feeds read from the accumulators at `t`;
  `<grad>` is an IdentityN in WhileGrad's output order.
"""

from __future__ import annotations

import numpy as np

from tftk.framework import dtypes
from tftk.framework.tensor_shape import TensorShape
from tftk.formats.functions import FunctionBuilder, func_attr, unique_function_name
from tftk.proto.tensorflow import FunctionDefLibrary
from tftk.summary.graph_def import ops_nodes

__all__ = ["while_nodes"]


def _ops_between(graph, targets: list, stops: set) -> list:
    """The ops of `graph` computing `targets` from the tensors in `stops` (placeholders excluded),
    in creation order."""
    needed, stack = set(), [t.op for t in targets if t not in stops]
    while stack:
        op = stack.pop()
        if op in needed or op.type == "Placeholder":
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs if t not in stops)
        stack.extend(op.control_inputs)
    return [op for op in graph.get_operations() if op in needed]


def _function_nodes(graph, targets: list, stops: set, library) -> tuple[list, set]:
    """The NodeDefs computing `targets` from `stops` (and the placeholders), and the tensor names
    they read. A TF form may read tensors its tftk op does not take (LSTMBlockCellGrad reads the
    forward cell's inputs): the ops producing those are added until nothing is missing."""
    ops_by_name = {op.name: op for op in graph.get_operations()}
    stop_names = {t.name for t in stops}
    wanted = list(targets)
    while True:
        scratch = FunctionDefLibrary()  # a pass that finds a missing op is written again: keep one pass's functions
        scratch.CopyFrom(library)
        nodes = ops_nodes(graph, _ops_between(graph, wanted, stops), False, scratch)
        written = {n.name for n in nodes}
        read = {ref if ":" in ref else ref + ":0" for n in nodes for ref in n.input if not ref.startswith("^")}
        missing = [name for name in read if name.partition(":")[0] not in written and name not in stop_names
                   and ops_by_name[name.partition(":")[0]].type != "Placeholder"]
        if not missing:
            library.CopyFrom(scratch)
            return nodes, read | {t.name for t in targets}
        wanted += [graph.get_tensor_by_name(name) for name in missing]


def _shape_const(shape: TensorShape) -> np.ndarray:
    """A TensorList element_shape input: -1 for an unknown rank, -1 for each unknown dim."""
    if shape.ndims is None:
        return np.asarray(-1, np.int32)
    return np.asarray([-1 if d is None else d for d in shape.as_list()], np.int32)


def _layout(op) -> dict:
    n, n_sl, n_cc = op.get_attr("n_vars"), op.get_attr("n_sliced"), op.get_attr("n_cond_caps")
    has_max = op.get_attr("has_max")
    inputs = list(op.inputs)
    end = len(inputs) - has_max
    return {"n": n, "init": inputs[:n], "sliced": inputs[n:n + n_sl], "cond_caps": inputs[n + n_sl:n + n_sl + n_cc],
            "body_caps": inputs[n + n_sl + n_cc:end], "max": inputs[end:], "n_st": op.get_attr("n_stacked")}


def _gradient_parts(grad, library) -> dict:
    """What a WhileGrad's plan computes from what: its body ops, and which feeds they read."""
    forward = grad.get_attr("forward")
    body = forward.get_attr("body_graph")
    n = forward.get_attr("n_vars")
    feeds, fetches = list(grad.get_attr("plan_feeds")), list(grad.get_attr("plan_fetches"))
    n_in = len(body.inputs)
    n_caps = len(body.captures)
    n_seeds = len(grad.get_attr("loop_floats"))
    n_st = grad.get_attr("n_stacked")
    nodes, read = _function_nodes(body, fetches, set(feeds), library)
    used = {t for t in feeds if t.name in read}
    values = [t for t in feeds[:n] if t in used]
    saved = [t for t in feeds[n_in + n_caps + n_seeds + n_st:] if t in used]
    return {"nodes": nodes, "fetches": fetches, "values": values, "saved": saved,
            "rows": [(k, t) for k, t in enumerate(feeds[n:n_in]) if t in used],
            "caps": [(i, t) for i, t in enumerate(feeds[n_in:n_in + n_caps]) if t in used],
            "seeds": feeds[n_in + n_caps:n_in + n_caps + n_seeds],
            "stacked_seeds": [(k, t) for k, t in enumerate(feeds[n_in + n_caps + n_seeds:n_in + n_caps + n_seeds + n_st])
                              if t in used]}


def _accumulated(forward) -> list:
    """The body tensors the forward loop pushes each iteration: what its gradient ops read."""
    keys: dict = {}
    for op in forward.graph.get_operations():
        if op.type == "WhileGrad" and op.get_attr("forward") is forward:
            parts = _gradient_parts(op, FunctionDefLibrary())  # what it reads; its functions are not kept
            keys.update(dict.fromkeys(parts["values"] + parts["saved"]))
    return list(keys)


def while_nodes(op, library) -> list:
    """The TF nodes of a tftk While or WhileGrad (functions added to `library`)."""
    if library is None:
        raise ValueError(f"{op.type} {op.name!r}: a While is written with its functions; export the whole "
                         "graph (as_graph_def / export_meta_graph) rather than the op alone")
    return _forward_nodes(op, library) if op.type == "While" else _gradient_nodes(op, library)


def _store(library, builder: FunctionBuilder) -> None:
    """Replace the function's reserved entry in `library` by the finished FunctionDef."""
    entry = next(f for f in library.function if f.signature.name == builder.name)
    entry.CopyFrom(builder.finish())


class _Loop:
    """The loop variables of a TF While being built: their outer tensors (graph-form names), specs and
    the arg each gets in the cond and body functions."""

    def __init__(self) -> None:
        self.sources: list[str] = []
        self.specs: list[tuple] = []
        self.labels: list[str] = []

    def add(self, label: str, source: str, dtype, shape) -> int:
        self.sources.append(source)
        self.specs.append((dtype, shape if isinstance(shape, TensorShape) else TensorShape(shape)))
        self.labels.append(label)
        return len(self.sources) - 1

    def function(self, library, stem: str, graph) -> tuple[FunctionBuilder, list[str]]:
        """A builder for a function of these loop variables made from `graph`'s ops (whose names its
        args avoid), its name reserved in `library` at once (a While nested in the body picks its
        functions' names before this one is finished)."""
        builder = FunctionBuilder(unique_function_name(library, stem), {op.name for op in graph.get_operations()})
        library.function.add().signature.name = builder.name
        args = [builder.add_arg(label, dt, shape) for label, (dt, shape) in zip(self.labels, self.specs)]
        return builder, args

    def while_node(self, name: str, cond: str, body: str, controls: list[str]):
        from tftk.proto.tensorflow import NodeDef
        from tftk.summary.graph_def import attr_value
        node = NodeDef(name=name, op="While", input=self.sources + controls)
        node.attr["T"].CopyFrom(attr_value([dt for dt, _ in self.specs]))
        node.attr["output_shapes"].list.shape.extend(attr_value(s).shape for _, s in self.specs)
        node.attr["cond"].CopyFrom(func_attr(cond))
        node.attr["body"].CopyFrom(func_attr(body))
        node.attr["parallel_iterations"].i = 10
        return node


def _outer_node(op_type: str, name: str, inputs: list[str], **attrs):
    from tftk.proto.tensorflow import NodeDef
    from tftk.summary.graph_def import attr_value
    node = NodeDef(name=name, op=op_type, input=inputs)
    for key, value in attrs.items():
        node.attr[key].CopyFrom(attr_value(value))
    return node


def _outer_const(name: str, value) -> object:
    value = np.asarray(value)
    return _outer_node("Const", name, [], dtype=dtypes.as_dtype(value.dtype), value=value)


def _forward_nodes(op, library) -> list:
    cond_graph, body_graph = op.get_attr("cond_graph"), op.get_attr("body_graph")
    lay = _layout(op)
    n, n_st = lay["n"], lay["n_st"]
    accumulated = _accumulated(op)
    stacked = body_graph.outputs[n:n + n_st]
    prefix = op.name
    nodes = [_outer_const(f"{prefix}/counter", np.int32(0))]
    loop = _Loop()
    loop.add("counter", nodes[0].name, dtypes.int32, [])
    for i, t in enumerate(lay["init"]):
        loop.add(f"var_{i}", t.name, t.dtype, op.outputs[i].shape)
    for key in ("sliced", "cond_caps", "body_caps", "max"):
        for i, t in enumerate(lay[key]):
            loop.add(f"{key}_{i}", t.name, t.dtype, t.shape)
    lists = []
    for label, t in [(f"stacked_{k}", t) for k, t in enumerate(stacked)] + \
                    [(f"acc_{j}", t) for j, t in enumerate(accumulated)]:
        shape_node = _outer_const(f"{prefix}/{label}/element_shape", _shape_const(t.shape))
        empty = _outer_node("EmptyTensorList", f"{prefix}/{label}", [shape_node.name, f"{prefix}/max_elements"],
                            element_dtype=t.dtype, shape_type=dtypes.int32)
        nodes += [shape_node, empty]
        lists.append(loop.add(label, empty.name, dtypes.variant, []))
    if lists:
        nodes.append(_outer_const(f"{prefix}/max_elements", np.int32(-1)))
    first = {key: 1 + n + sum(len(lay[k]) for k in ("sliced", "cond_caps", "body_caps", "max")[:i])
             for i, key in enumerate(("sliced", "cond_caps", "body_caps", "max"))}

    # cond(counter, vars, ...) -> bool
    cond, args = loop.function(library, f"{prefix}_cond", cond_graph)
    for i, t in enumerate(cond_graph.inputs[:n]):
        cond.substitute(t.name, args[1 + i])
    for i, t in enumerate(cond_graph.captures.values()):
        cond.substitute(t.name, args[first["cond_caps"] + i])
    cond.add_nodes(_function_nodes(cond_graph, cond_graph.outputs[:1], set(), library)[0])
    result = cond_graph.outputs[0].name
    if lay["max"]:
        below = cond.node("Less", "tftk_below_max", [args[0], args[first["max"]]], T=dtypes.int32)
        result = cond.node("LogicalAnd", "tftk_cond", [below, result])
    cond.add_ret("cond", dtypes.bool, result)
    _store(library, cond)

    # body(counter, vars, ...) -> (counter + 1, new vars, the rest passed on or pushed to)
    body, args = loop.function(library, f"{prefix}_body", body_graph)
    for i, t in enumerate(body_graph.inputs[:n]):
        body.substitute(t.name, args[1 + i])
    axis = body.const("tftk_axis", np.int32(0)) if lay["sliced"] else None
    for k, t in enumerate(body_graph.inputs[n:]):
        row = body.node("GatherV2", f"tftk_row_{k}", [args[first["sliced"] + k], args[0], axis],
                        Tparams=t.dtype, Tindices=dtypes.int32, Taxis=dtypes.int32, batch_dims=0)
        body.substitute(t.name, row)
    for i, t in enumerate(body_graph.captures.values()):
        body.substitute(t.name, args[first["body_caps"] + i])
    targets = body_graph.outputs[:n + n_st] + accumulated
    body.add_nodes(_function_nodes(body_graph, targets, set(), library)[0])
    one = body.const("tftk_one", np.int32(1))
    body.add_ret("counter", dtypes.int32, body.node("AddV2", "tftk_next", [args[0], one], T=dtypes.int32))
    for i, t in enumerate(body_graph.outputs[:n]):
        body.add_ret(f"var_{i}", t.dtype, t.name)
    for i in range(1 + n, lists[0] if lists else len(args)):
        body.add_ret(loop.labels[i], loop.specs[i][0], args[i])
    for position, t in zip(lists, stacked + accumulated):
        pushed = body.node("TensorListPushBack", f"tftk_push_{loop.labels[position]}", [args[position], t.name],
                           element_dtype=t.dtype)
        body.add_ret(loop.labels[position], dtypes.variant, pushed)
    _store(library, body)

    name = f"{prefix}/While"
    nodes.append(loop.while_node(name, cond.name, body.name, [f"^{c.name}" for c in op.control_inputs]))
    outputs = [f"{name}:{1 + i}" for i in range(n)]
    for k, t in enumerate(stacked):
        shape_node = _outer_const(f"{prefix}/stack_{k}/element_shape", _shape_const(t.shape))
        nodes += [shape_node, _outer_node("TensorListStack", f"{prefix}/stack_{k}", [f"{name}:{lists[k]}", shape_node.name],
                                          element_dtype=t.dtype, num_elements=-1)]
        outputs.append(nodes[-1].name)
    nodes.append(_outer_node("IdentityN", prefix, outputs, T=[t.dtype for t in op.outputs]))
    return nodes


def _forward_list_outputs(forward) -> dict:
    """{body tensor: the forward While node's output holding its accumulator}."""
    lay = _layout(forward)
    first = 1 + lay["n"] + sum(len(lay[k]) for k in ("sliced", "cond_caps", "body_caps", "max")) + lay["n_st"]
    return {t: f"{forward.name}/While:{first + j}" for j, t in enumerate(_accumulated(forward))}


def _gradient_nodes(grad, library) -> list:
    forward = grad.get_attr("forward")
    lay = _layout(forward)
    parts = _gradient_parts(grad, library)
    n_lg = len(grad.get_attr("loop_floats"))
    sliced_floats, float_caps = grad.get_attr("sliced_floats"), grad.get_attr("float_caps")
    body_graph = forward.get_attr("body_graph")
    prefix = grad.name
    iterations = f"{forward.name}/While:0"
    nodes = [_outer_const(f"{prefix}/one", np.int32(1))]
    nodes.append(_outer_node("Sub", f"{prefix}/last", [iterations, nodes[0].name], T=dtypes.int32))
    loop = _Loop()
    loop.add("t", nodes[1].name, dtypes.int32, [])
    for k, t in enumerate(grad.inputs[:n_lg]):
        loop.add(f"grad_{k}", t.name, t.dtype, grad.outputs[k].shape)
    reads = []  # (body tensor, loop position of its accumulator)
    accumulators = _forward_list_outputs(forward)
    for j, t in enumerate(parts["values"] + parts["saved"]):
        reads.append((t, loop.add(f"acc_{j}", accumulators[t], dtypes.variant, [])))
    rows = [(t, loop.add(f"sliced_{k}", lay["sliced"][k].name, lay["sliced"][k].dtype, lay["sliced"][k].shape))
            for k, t in parts["rows"]]
    seeds_in = [(t, loop.add(f"stacked_grad_{k}", grad.inputs[n_lg + k].name, grad.inputs[n_lg + k].dtype,
                             grad.inputs[n_lg + k].shape)) for k, t in parts["stacked_seeds"]]
    caps = [(t, loop.add(f"cap_{i}", lay["body_caps"][i].name, lay["body_caps"][i].dtype, lay["body_caps"][i].shape))
            for i, t in parts["caps"]]
    row_lists, cap_sums = [], []
    for j, k in enumerate(sliced_floats):
        row = body_graph.inputs[lay["n"] + k]
        shape_node = _outer_const(f"{prefix}/row_grad_{j}/element_shape", _shape_const(row.shape))
        reserve = _outer_node("TensorListReserve", f"{prefix}/row_grad_{j}", [shape_node.name, iterations],
                              element_dtype=row.dtype, shape_type=dtypes.int32)
        nodes += [shape_node, reserve]
        row_lists.append(loop.add(f"row_grad_{j}", reserve.name, dtypes.variant, []))
    for j, i in enumerate(float_caps):
        cap = lay["body_caps"][i]
        nodes.append(_outer_node("ZerosLike", f"{prefix}/cap_grad_{j}", [cap.name], T=cap.dtype))
        cap_sums.append(loop.add(f"cap_grad_{j}", nodes[-1].name, cap.dtype, cap.shape))

    cond, args = loop.function(library, f"{prefix}_cond", body_graph)
    zero = cond.const("tftk_zero", np.int32(0))
    cond.add_ret("cond", dtypes.bool, cond.node("GreaterEqual", "tftk_more", [args[0], zero], T=dtypes.int32))
    _store(library, cond)

    body, args = loop.function(library, f"{prefix}_body", body_graph)
    for k, t in enumerate(parts["seeds"]):
        body.substitute(t.name, args[1 + k])
    for t, position in reads:
        shape = body.const(f"tftk_shape_{position}", _shape_const(t.shape))
        body.substitute(t.name, body.node("TensorListGetItem", f"tftk_read_{position}", [args[position], args[0], shape],
                                          element_dtype=t.dtype))
    axis = body.const("tftk_axis", np.int32(0)) if rows or seeds_in else None
    for t, position in rows + seeds_in:
        body.substitute(t.name, body.node("GatherV2", f"tftk_row_{position}", [args[position], args[0], axis],
                                          Tparams=t.dtype, Tindices=dtypes.int32, Taxis=dtypes.int32, batch_dims=0))
    for t, position in caps:
        body.substitute(t.name, args[position])
    body.add_nodes(parts["nodes"])
    fetches = parts["fetches"]
    one = body.const("tftk_one", np.int32(1))
    body.add_ret("t", dtypes.int32, body.node("Sub", "tftk_previous", [args[0], one], T=dtypes.int32))
    for k in range(n_lg):
        body.add_ret(f"grad_{k}", fetches[k].dtype, fetches[k].name)
    for i in range(1 + n_lg, row_lists[0] if row_lists else (cap_sums[0] if cap_sums else len(args))):
        body.add_ret(loop.labels[i], loop.specs[i][0], args[i])
    for j, position in enumerate(row_lists):
        g = fetches[n_lg + j]
        body.add_ret(loop.labels[position], dtypes.variant,
                     body.node("TensorListSetItem", f"tftk_set_{j}", [args[position], args[0], g.name],
                               element_dtype=g.dtype, resize_if_index_out_of_bounds=False))
    for j, position in enumerate(cap_sums):
        g = fetches[n_lg + len(row_lists) + j]
        body.add_ret(loop.labels[position], g.dtype, body.node("AddV2", f"tftk_sum_{j}", [args[position], g.name], T=g.dtype))
    _store(library, body)

    name = f"{prefix}/While"
    nodes.append(loop.while_node(name, cond.name, body.name, [f"^{c.name}" for c in grad.control_inputs]))
    outputs = [f"{name}:{1 + k}" for k in range(n_lg)]
    for j, position in enumerate(row_lists):
        row = body_graph.inputs[lay["n"] + sliced_floats[j]]
        shape_node = _outer_const(f"{prefix}/row_stack_{j}/element_shape", _shape_const(row.shape))
        nodes += [shape_node, _outer_node("TensorListStack", f"{prefix}/row_stack_{j}", [f"{name}:{position}", shape_node.name],
                                          element_dtype=row.dtype, num_elements=-1)]
        outputs.append(nodes[-1].name)
    outputs += [f"{name}:{position}" for position in cap_sums]
    nodes.append(_outer_node("IdentityN", prefix, outputs, T=[t.dtype for t in grad.outputs]))
    return nodes
