"""`tf.while_loop`, `tf.scan`, `tf.map_fn`, `tf.foldl`, `tf.foldr` on one `While` op.

The condition and body are traced once into sub-graphs (FuncGraph) and compiled into plans of
their own; the While kernel loops in Python calling them. Each run keeps, per iteration, the loop
variables and the body's intermediates that the gradient reads, and the gradient op walks them
backwards through the body's gradient plan (back-propagation through the loop, without re-running
the forward ops). `scan` and `scan_carry` (dynamic_rnn's loop) hand the body its element rows as
sliced inputs of the While op.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import dtypes, nest, registry
from tftk.framework.func_graph import FuncGraph
from tftk.framework.indexed_slices import IndexedSlices
from tftk.ops.indexed_slices_ops import densify
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, get_default_graph, name_scope
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.kernels.scatter import scatter_into_zeros
from tftk.ops import loop_stages
from tftk.ops.constant_op import placeholder
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["while_loop", "scan", "scan_carry", "map_fn", "foldl", "foldr", "add_while_op"]


# ---- loop variables -----------------------------------------------------------------------------

def _flatten(structure: Any) -> list:
    """The leaves of nested loop variables; a TensorArray travels through a loop as its flow tensor."""
    return [leaf.flow if hasattr(leaf, "_with_flow") else leaf for leaf in nest.flatten(structure)]


def _pack(structure: Any, leaves: Sequence) -> Any:
    """`structure` rebuilt from loop leaves, each TensorArray from its new flow tensor."""
    templates = nest.flatten(structure)
    return nest.pack_sequence_as(structure, [t._with_flow(v) if hasattr(t, "_with_flow") else v
                                             for t, v in zip(templates, leaves)])


# ---- tracing --------------------------------------------------------------------------------

def _trace(outer, name: str, fn: Callable, structure: Any, specs: list[tuple]) -> FuncGraph:
    """Run `fn` on placeholders shaped like `specs` inside a new FuncGraph."""
    graph = FuncGraph(outer, name)
    with graph.as_default():
        graph.inputs = [placeholder(dt, shape, name=f"loop_var_{i}") for i, (dt, shape) in enumerate(specs)]
        result = fn(*_pack(structure, graph.inputs))
        graph.structured_outputs = result
        graph.outputs = [convert_to_tensor(t) for t in _flatten(result)]
    return graph


def _capture_placeholders(graph: FuncGraph) -> list[Tensor]:
    return list(graph.captures.values())


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               name: str | None = None, maximum_iterations: Any = None,
               return_same_structure: bool = False) -> Any:
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`; gradients flow through it."""
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    single = not isinstance(loop_vars, (list, tuple, dict))
    structure = [loop_vars] if single else loop_vars
    with name_scope(name, "while", _flatten(structure)):
        init = [convert_to_tensor(v) for v in _flatten(structure)]
        invariants = _flatten(shape_invariants) if shape_invariants is not None else [t.shape for t in init]
        if len(invariants) != len(init):
            raise ValueError("shape_invariants must have the same structure as loop_vars")
        specs = [(t.dtype, as_shape(s)) for t, s in zip(init, invariants)]
        for t, (_, s) in zip(init, specs):
            if not s.is_compatible_with(t.shape):
                raise ValueError(f"The shape invariant {s} is not compatible with the initial shape "
                                 f"{t.shape} of loop variable {t.name}.")
        outer = get_default_graph()
        body_fn = (lambda *a: [body(*a)]) if single else body
        cond_graph = _trace(outer, "cond", cond, structure, specs)
        body_graph = _trace(outer, "body", body_fn, structure, specs)
        _check_body(init, specs, body_graph, single)
        result = _while_op(outer, init, specs, cond_graph, body_graph, 0, maximum_iterations)
    if not return_same_structure and len(result) == 1:  # TF1 unwraps a single loop variable
        return result[0]
    return _pack(structure, result)


def _check_body(init: list[Tensor], specs: list[tuple], body_graph: FuncGraph, single: bool) -> None:
    outs = body_graph.outputs
    if len(outs) != len(init):
        raise ValueError(f"The body of the while loop returned {len(outs)} tensors for "
                         f"{len(init)} loop variables: they must have the same structure.")
    for i, (t, (dt, shape), out) in enumerate(zip(init, specs, outs)):
        if out.dtype is not dt:
            raise TypeError(f"Loop variable {i} enters the loop as {dt.name} but the body returns "
                            f"{out.dtype.name}")
        if not shape.is_compatible_with(out.shape):
            raise ValueError(f"Loop variable {t.name} has shape {shape} before the loop, but shape "
                             f"{out.shape} after one iteration. Provide shape invariants using "
                             "the `shape_invariants` argument of tf.while_loop.")


def add_while_op(outer, init: list[Tensor], specs: list[tuple], cond_graph: FuncGraph, body_graph: FuncGraph,
                 name: str) -> list[Tensor]:
    """A While over traced or imported (formats/functions) cond and body graphs: every input a loop
    variable, nothing sliced or stacked."""
    if cond_graph.outputs[0].dtype is not dtypes.bool:
        raise TypeError(f"While {name!r}: the condition returns {cond_graph.outputs[0].dtype.name}, not bool")
    return _while_op(outer, init, specs, cond_graph, body_graph, 0, None, name=name)


def _while_op(outer, init: list[Tensor], specs: list[tuple], cond_graph: FuncGraph,
              body_graph: FuncGraph, n_stacked: int, maximum_iterations: Any,
              sliced: Sequence[Tensor] = (), name: str = "while") -> list[Tensor]:
    """Add the While op: inputs are loop vars, sliced inputs, cond captures, then body captures.

    A sliced input [T, ...] reaches the body as one row per iteration (row t at iteration t), after
    the loop variables: scan's elements, without indexing a captured array in the body (whose
    gradient would be a full-size array per iteration).
    """
    cond_caps, body_caps = list(cond_graph.captures), list(body_graph.captures)
    extra = [] if maximum_iterations is None else [convert_to_tensor(maximum_iterations, dtype=dtypes.int32)]
    stacked_specs = [(t.dtype, TensorShape([None]).concatenate(t.shape))
                     for t in body_graph.outputs[len(init):len(init) + n_stacked]]
    with outer.control_dependencies(cond_graph.outer_control_inputs + body_graph.outer_control_inputs):
        op = make_multi_op("While", init + list(sliced) + cond_caps + body_caps + extra, specs + stacked_specs,
                           name, {"cond_graph": cond_graph, "body_graph": body_graph, "n_vars": len(init),
                                     "n_sliced": len(sliced), "n_cond_caps": len(cond_caps),
                                     "n_stacked": n_stacked, "has_max": bool(extra), "saved": []})
    return op.outputs


def _bind_while(op, ctx):
    cond_graph, body_graph = op.get_attr("cond_graph"), op.get_attr("body_graph")
    n, n_sl, n_cc, n_st = (op.get_attr(k) for k in ("n_vars", "n_sliced", "n_cond_caps", "n_stacked"))
    has_max = op.get_attr("has_max")
    cond_plan = ctx.function(cond_graph, cond_graph.inputs[:n] + _capture_placeholders(cond_graph),
                             cond_graph.outputs[:1])
    caps = _capture_placeholders(body_graph)
    outputs = body_graph.outputs[:n + n_st] + op.get_attr("saved")
    body_plan, prepare_body, _ = ctx.loop_function(body_graph, body_graph.inputs, caps, outputs)
    cond_reads = loop_stages.reads(cond_graph.outputs[:1], cond_graph.inputs[:n])
    pipeline = _pipeline(ctx, body_graph, body_graph.inputs, caps, outputs, [(k, k) for k in range(n)], cond_reads)
    stacked_shapes = [(t.dtype.as_numpy_dtype, t.shape) for t in op.outputs[n:]]
    first_cap = n + n_sl + n_cc

    def kernel(*inputs):
        values = list(inputs[:n])
        sliced = inputs[n:n + n_sl]
        cond_caps = inputs[n + n_sl:first_cap]
        body_caps = inputs[first_cap:len(inputs) - has_max]
        limit = int(inputs[-1]) if has_max else None
        # per iteration: (loop variables, intermediates the gradient reads); and what the gradient feeds
        history, fed = _record(ctx, op)
        history.clear()
        fed["sliced"], fed["body_caps"] = sliced, body_caps

        def iteration(t: int, current: list) -> list | None:
            """The body's inputs at iteration t from the loop values `current`, or None: the loop ends."""
            if (limit is not None and t >= limit) or not cond_plan(*current, *cond_caps)[0]:
                return None
            return current + [s[t] for s in sliced]

        stacks: list[list] = [[] for _ in range(n_st)]

        def take(body_inputs: list, out: tuple) -> list:
            """Keep an iteration's loop values and intermediates for the gradient, its stacked rows."""
            history.append((body_inputs[:n], out[n + n_st:]))
            for k in range(n_st):
                stacks[k].append(out[n + k])
            return list(out[:n])

        iterations = None
        if pipeline is not None and (begin := iteration(0, values)) is not None:
            walk = {"t": 0, "values": values}

            def advance(updates: dict) -> list | None:
                walk["t"] += 1
                walk["values"] = [updates.get(k, v) for k, v in enumerate(walk["values"])]
                return iteration(walk["t"], walk["values"])

            iterations = pipeline.run(body_caps, begin, advance)
        if iterations is None:  # on this thread alone (the loop as it always ran, in one tight loop)
            prepared = prepare_body(*body_caps)
            t = 0
            while (limit is None or t < limit) and cond_plan(*values, *cond_caps)[0]:
                body_inputs = values + [s[t] for s in sliced]
                values = take(body_inputs, body_plan(*body_inputs, *prepared))
                t += 1
        else:
            for body_inputs, out in iterations:
                values = take(body_inputs, out)
        results = values + [np.stack(s) if s else np.zeros((0,) + tuple(d or 0 for d in sh.as_list()[1:]), dt)
                            for s, (dt, sh) in zip(stacks, stacked_shapes)]
        return tuple(results) if len(results) > 1 else results[0]

    kernel.pipelines = pipeline is not None
    return kernel


def _record(ctx, forward: Operation) -> tuple[list, dict]:
    """What a While op's run records for its gradient in the same run: (its iterations, its fed data
    rows and captures); each run its own (`KernelContext.run_resource`: runs of one session on several
    threads at once do not read each other's)."""
    return ctx.run_resource(forward, "history", list), ctx.run_resource(forward, "fed", dict)


def _pipeline(ctx, graph: FuncGraph, inputs: list, invariants: list, outputs: list, carried: list,
              must_first: set[int] = frozenset(), summed: Sequence[int] = ()) -> loop_stages.Pipeline | None:
    """The body's iterations as a two-stage pipeline (`tftk.ops.loop_stages`), where its body has one;
    `summed`: the outputs (indices) added up over the iterations."""
    stages = loop_stages.cut([(inputs[p], outputs[i]) for p, i in carried], outputs, set(inputs) | set(invariants),
                             {k for k, (p, _) in enumerate(carried) if p in must_first})
    return None if stages is None else loop_stages.Pipeline(ctx, graph, inputs, invariants, outputs, stages, carried,
                                                            summed)


registry.register_op("While", _bind_while, stateful=True)


# ---- gradient -----------------------------------------------------------------------------------

def _saved_intermediates(body_graph: FuncGraph, forward_ops: set, grad_ops: list) -> list[Tensor]:
    """The forward tensors of the body that the gradient ops read: kept per iteration, not recomputed.

    Keeping them (as TF's stacks do) saves recomputing each iteration's forward ops in the backward
    loop, and gives the backward pass the very values the forward saw (dropout masks included). A
    body holding a While of its own is recomputed instead: the inner loop's gradient reads the state
    of its forward run, which must be the same iteration's. A tensor of a cond branch is recomputed
    too: in an iteration that did not take the branch it has no value to keep.
    """
    if any(op.type == "While" for op in forward_ops):
        return []
    fed = set(body_graph.inputs) | set(_capture_placeholders(body_graph))
    saved: dict[Tensor, None] = {}
    for op in grad_ops:
        for t in op.inputs:
            if t.op in forward_ops and t not in fed and not t.op.guard \
                    and registry.lookup(t.op.type).inline is not registry.Inline.CONSTANT:
                saved[t] = None
    return list(saved)


@registry.register_gradient("While")
def _while_grad(op, *out_grads):
    body_graph: FuncGraph = op.get_attr("body_graph")
    n, n_sl, n_cc, n_st = (op.get_attr(k) for k in ("n_vars", "n_sliced", "n_cond_caps", "n_stacked"))
    body_caps = _capture_placeholders(body_graph)
    floats = [i for i, t in enumerate(body_graph.inputs) if t.dtype.is_floating]  # loop vars and rows
    float_caps = [i for i, t in enumerate(body_caps) if t.dtype.is_floating]
    loop_floats = [i for i in floats if i < n]
    from tftk.ops.gradients_impl import gradients
    forward_ops = set(body_graph.get_operations())
    with body_graph.as_default():
        seeds = [placeholder(body_graph.outputs[i].dtype, body_graph.outputs[i].shape, name="grad_seed")
                 for i in loop_floats]
        stacked_seeds = [placeholder(t.dtype, t.shape, name="stacked_grad_seed")
                         for t in body_graph.outputs[n:n + n_st]]
        ys = [body_graph.outputs[i] for i in loop_floats] + body_graph.outputs[n:n + n_st]
        xs = [body_graph.inputs[i] for i in floats] + [body_caps[i] for i in float_caps]
        raw = gradients(ys, xs, grad_ys=seeds + stacked_seeds) if ys and xs else []
        grads = []
        for g, x in zip(raw, xs):
            if g is None:
                from tftk.ops.array_ops import zeros_like
                g = zeros_like(x)
            grads.append(densify(g) if isinstance(g, IndexedSlices) else g)
    saved = _saved_intermediates(body_graph, forward_ops,
                                 [o for o in body_graph.get_operations() if o not in forward_ops])
    op.get_attr("saved").extend(t for t in saved if t not in op.get_attr("saved"))
    loop_grads = [convert_to_tensor(out_grads[i]) for i in loop_floats]
    stacked_grads = [convert_to_tensor(g) for g in out_grads[n:n + n_st]]
    sliced_floats = [i - n for i in floats if i >= n]
    specs = [(op.inputs[i].dtype, op.inputs[i].shape) for i in floats] + \
            [(body_caps[i].dtype, body_caps[i].shape) for i in float_caps]
    with op.graph.control_dependencies([op]):  # its kernel reads what the forward loop recorded
        grad_op = make_multi_op("WhileGrad", loop_grads + stacked_grads, specs, "while_grad",
                                {"forward": op, "plan_fetches": grads, "saved": saved,
                                 "plan_feeds": body_graph.inputs + body_caps + seeds + stacked_seeds + saved,
                                 "loop_floats": loop_floats, "sliced_floats": sliced_floats,
                                 "float_caps": float_caps, "n_stacked": n_st})
    result: list[Any] = [None] * len(op.inputs)
    for k, i in enumerate(floats):  # a loop var's or a sliced input's: body input i is While input i
        result[i] = grad_op.outputs[k]
    for k, i in enumerate(float_caps):
        result[n + n_sl + n_cc + i] = grad_op.outputs[len(floats) + k]
    return result


def _bind_while_grad(op, ctx):
    forward = op.get_attr("forward")
    loop_floats, sliced_floats = op.get_attr("loop_floats"), op.get_attr("sliced_floats")
    float_caps, n_st = op.get_attr("float_caps"), op.get_attr("n_stacked")
    body_graph = forward.get_attr("body_graph")
    feeds = op.get_attr("plan_feeds")  # body inputs, captures, seeds, saved: the captures are the same each iteration
    n_in, n_caps = len(body_graph.inputs), len(_capture_placeholders(body_graph))
    n_loop, n_rows = len(loop_floats), len(sliced_floats)
    # the body's gradient leaves out what no one reads: the gradient of data rows (dynamic_rnn's
    # inputs) or of a capture; the loop variables' gradients carry the recursion, so they are all made
    unread = set(getattr(op, "attrs", {}).get(registry.UNREAD_OUTPUTS_ATTR, ()))
    made = [k for k in range(len(op.outputs)) if k < n_loop or k not in unread]
    rows_made = [k - n_loop for k in made if n_loop <= k < n_loop + n_rows]
    caps_made = [k - n_loop - n_rows for k in made if k >= n_loop + n_rows]
    n_made_rows = len(rows_made)
    first_cap = n_loop + n_made_rows  # the body plan's outputs from here on: the captures' gradients, summed
    summed = range(first_cap, len(made))
    plan, prepare, accumulated = ctx.loop_function(body_graph, feeds[:n_in] + feeds[n_in + n_caps:],
                                                   feeds[n_in:n_in + n_caps],
                                                   [op.get_attr("plan_fetches")[k] for k in made], summed)
    all_saved = forward.get_attr("saved")
    saved_at = [all_saved.index(t) for t in op.get_attr("saved")]

    carried = [(n_in + k, k) for k in range(n_loop)]  # each seed is the gradient the last iteration made
    pipeline = _pipeline(ctx, body_graph, feeds[:n_in] + feeds[n_in + n_caps:], feeds[n_in:n_in + n_caps],
                         [op.get_attr("plan_fetches")[k] for k in made], carried, summed=summed)

    def kernel(*inputs):
        loop_grads = list(inputs[:n_loop])
        stacked = inputs[n_loop:n_loop + n_st]
        history, fed = _record(ctx, forward)
        sliced, body_caps = fed["sliced"], fed["body_caps"]
        row_grads = [np.zeros_like(sliced[sliced_floats[k]]) for k in rows_made]
        cap_grads = [np.zeros_like(body_caps[float_caps[k]]) for k in caps_made]
        last = len(history) - 1

        def iteration(t: int, grads: list) -> list | None:
            """The gradient body's inputs at forward iteration t (walked backwards), or None: the end."""
            if t < 0:
                return None
            values, kept = history[t]
            return [*values, *[s[t] for s in sliced], *grads, *[s[t] for s in stacked], *[kept[k] for k in saved_at]]

        def take(t: int, out: Sequence, add_captures: bool = True) -> list:
            """Keep iteration t's gradients of data rows and (unless the pipeline added them) of the
            captures (those the plan did not add into their totals itself); the loop gradients it made."""
            for grad, row in zip(row_grads, out[n_loop:n_loop + n_made_rows]):
                grad[t] = row
            for k, g in enumerate(out[first_cap:] if add_captures else ()):
                if first_cap + k not in accumulated:
                    np.add(cap_grads[k], g, out=cap_grads[k])
            return list(out[:n_loop])

        iterations = None
        if pipeline is not None and last >= 0:
            walk = {"t": last, "grads": loop_grads}

            def advance(updates: dict) -> list | None:
                walk["t"] -= 1
                walk["grads"] = [updates.get(n_in + k, g) for k, g in enumerate(walk["grads"])]
                return iteration(walk["t"], walk["grads"])

            iterations = pipeline.run(body_caps, iteration(last, loop_grads), advance,
                                      {first_cap + k: total for k, total in enumerate(cap_grads)})
        if iterations is None:  # on this thread alone
            prepared = prepare(*body_caps)
            totals = [cap_grads[k - first_cap] for k in accumulated]
            for t in range(last, -1, -1):
                out = plan(*iteration(t, loop_grads), *prepared, *totals)
                loop_grads = take(t, out)
                loop_stages.keep_totals(out, accumulated, totals)
        else:
            for step, (_, out) in enumerate(iterations):
                loop_grads = take(last - step, out, add_captures=False)
        results: list = loop_grads + [None] * (n_rows + len(float_caps))
        for k, grad in zip(rows_made, row_grads):
            results[n_loop + k] = grad
        for k, grad in zip(caps_made, cap_grads):
            results[n_loop + n_rows + k] = grad
        return tuple(results) if len(results) > 1 else results[0]

    kernel.pipelines = pipeline is not None
    return kernel


registry.register_op("WhileGrad", _bind_while_grad, skips_unread_outputs=True)
registry.not_differentiable("WhileGrad")


# ---- scan / map / fold --------------------------------------------------------------------------

def _bind_index_row(op, ctx):
    return lambda x, i: x[int(i)]


def _bind_index_row_grad(op, ctx):
    return lambda x, i, g: scatter_into_zeros(x.shape, g, int(i))


registry.register_op("IndexRow", _bind_index_row)
registry.register_op("IndexRowGrad", _bind_index_row_grad)
registry.not_differentiable("IndexRowGrad")


@registry.register_gradient("IndexRow")
def _index_row_grad(op, grad):
    x, i = op.inputs
    return [make_op("IndexRowGrad", [x, i, grad], x.dtype, x.shape), None]


def _row(x: Tensor, i: Tensor) -> Tensor:
    """x[i] for a scalar int tensor i (dense gradient, for loop bodies)."""
    return make_op("IndexRow", [x, i], x.dtype, x.shape[1:])


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
         reverse: bool = False, name: str | None = None) -> Any:
    """Accumulate `acc = fn(acc, elems[i])` over the first dimension, stacking every `acc`."""
    elems_flat = [convert_to_tensor(e) for e in _flatten(elems)]
    with name_scope(name, "scan", elems_flat):
        if initializer is None:  # the first element (the last one reversed) starts the accumulator
            first = -1 if reverse else 0
            acc_structure, initial, init_index = elems, [e[first] for e in elems_flat], 1
        else:
            acc_structure, initial, init_index = initializer, [convert_to_tensor(a) for a in _flatten(initializer)], 0

        def step(acc, x):
            new = fn(acc, x)
            return new, new
        _, stacked, _ = _scan_loop(step, elems, elems_flat, acc_structure, initial, init_index, reverse)
        if initializer is None:
            from tftk.ops.array_ops import concat, expand_dims
            stacked = [concat([expand_dims(s0, 0), s], 0) for s0, s in zip(initial, stacked)]
        if reverse:
            stacked = [s[::-1] for s in stacked]
        return _pack(acc_structure, stacked)


def scan_carry(fn: Callable, elems: Any, initializer: Any, name: str | None = None) -> tuple[Any, Any]:
    """`carry, out = fn(carry, elems[t])` over the first dimension: returns (last carry, stacked outs).

    Unlike `scan`, the carry is not stacked per step (JAX's `lax.scan` contract): dynamic_rnn keeps
    only the final state, so it neither stacks nor back-propagates [time, ...] copies of it.
    """
    elems_flat = [convert_to_tensor(e) for e in _flatten(elems)]
    with name_scope(name, "scan", elems_flat):
        initial = [convert_to_tensor(a) for a in _flatten(initializer)]
        carry, stacked, out_structure = _scan_loop(fn, elems, elems_flat, initializer, initial, 0, False)
        return _pack(initializer, carry), _pack(out_structure, stacked)


def _scan_loop(fn: Callable, elems: Any, elems_flat: list[Tensor], carry_structure: Any, initial: list[Tensor],
               init_index: int, reverse: bool) -> tuple[list[Tensor], list[Tensor], Any]:
    """The While op of a scan: a counter and the carry as loop variables, the element rows sliced in,
    `fn`'s outs stacked. Returns (final carry leaves, stacked out leaves, the outs' structure)."""
    from tftk.ops.array_ops import shape
    from tftk.ops.math_ops import add, less
    first_dim = elems_flat[0].shape.as_tuple()[0] if elems_flat[0].shape.ndims else None
    length = shape(elems_flat[0])[0] if first_dim is None else convert_to_tensor(first_dim)
    n_carry = len(initial)
    counter = convert_to_tensor(init_index)
    specs = [(counter.dtype, TensorShape([]))] + [(t.dtype, t.shape) for t in initial]
    loop_structure = [0] * (1 + n_carry)
    out_structure: list = []

    def cond_fn(i, *carry):
        return less(i, length)

    def body_fn(i, *carry_and_rows):
        carry, x = carry_and_rows[:n_carry], carry_and_rows[n_carry:]
        new_carry, out = fn(_pack(carry_structure, list(carry)), _pack(elems, list(x)))
        out_structure.append(out)
        return [add(i, 1)] + [convert_to_tensor(t) for t in _flatten(new_carry) + _flatten(out)]

    # the While slices the elements: row t of `sliced` at iteration t
    sliced = [e[::-1] if reverse else e for e in elems_flat]
    sliced = [e[init_index:] if init_index else e for e in sliced]
    row_specs = [(e.dtype, e.shape[1:]) for e in elems_flat]
    outer = get_default_graph()
    cond_graph = _trace(outer, "cond", cond_fn, loop_structure, specs)
    body_graph = _trace(outer, "body", body_fn, loop_structure + [0] * len(sliced), specs + row_specs)
    n_out = len(body_graph.outputs) - 1 - n_carry
    outs = _while_op(outer, [counter] + initial, specs, cond_graph, body_graph, n_out, None, sliced)
    stacked = outs[1 + n_carry:]
    if first_dim is not None:  # the trip count is known: so is the stacked length
        for t in stacked:
            t.set_shape(TensorShape([first_dim - init_index]).concatenate(t.shape[1:]))
    return outs[1:1 + n_carry], stacked, out_structure[0]


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: int = 10,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: str | None = None) -> Any:
    """Stack `fn(elems[i])` over the first dimension."""
    elems_flat = [convert_to_tensor(e) for e in _flatten(elems)]
    with name_scope(name, "map", elems_flat):
        first = fn(_pack(elems, [_probe_row(e) for e in elems_flat]))
        probe_leaves = [convert_to_tensor(t) for t in _flatten(first)]
        from tftk.ops.array_ops import zeros
        initializer = _pack(first, [zeros(t.shape.as_list(), t.dtype) if t.shape.is_fully_defined()
                                    else t for t in probe_leaves])
        return scan(lambda _, x: fn(x), elems, initializer=initializer)


def _probe_row(e: Tensor) -> Tensor:
    return _row(e, convert_to_tensor(0))


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: str | None = None) -> Any:
    """`fn(fn(fn(init, e0), e1), ...)`: the last accumulator of a scan."""
    return _last(scan(fn, elems, initializer=initializer, name=name or "foldl"))


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: str | None = None) -> Any:
    """foldl from the end of `elems`."""
    result = scan(fn, elems, initializer=initializer, reverse=True, name=name or "foldr")
    return _pack(result, [_row(t, convert_to_tensor(0)) for t in _flatten(result)])


def _last(structure: Any) -> Any:
    from tftk.ops.array_ops import shape
    from tftk.ops.math_ops import subtract
    leaves = _flatten(structure)
    return _pack(structure, [_row(t, subtract(shape(t)[0], 1)) for t in leaves])
