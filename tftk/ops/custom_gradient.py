"""`tf.custom_gradient`, `tf.identity_n` and `tf.hessians`: gradients a user defines or nests.

A function decorated with `custom_gradient` returns `(y, grad_fn)`; its outputs pass through one
`IdentityN` op whose inputs are y, the function's arguments and the variables it created, and
whose gradient rule calls `grad_fn` instead of differentiating the ops that made y.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import GraphKeys, Tensor, convert_to_tensor, get_default_graph, name_scope
from tftk.ops import array_ops
from tftk.ops.gradients_impl import gradients
from tftk.ops.op_builder import make_multi_op

__all__ = ["custom_gradient", "identity_n", "hessians"]


def _identity_n_kernel(*values):
    return values if len(values) > 1 else values[0]


registry.register_op("IdentityN", lambda op, ctx: _identity_n_kernel)


@registry.register_gradient("IdentityN")
def _identity_n_grad(op, *grads):
    grad_fn = op.get_attr("grad_fn")
    if grad_fn is None:
        return list(grads)
    n_out, n_args = op.get_attr("n_outputs"), op.get_attr("n_args")
    variables = op.get_attr("variables")
    dys = grads[:n_out]
    if variables:
        input_grads, variable_grads = grad_fn(*dys, variables=variables)
        variable_grads = list(variable_grads)
        if len(variable_grads) != len(variables):
            raise ValueError(f"custom_gradient: grad_fn returned {len(variable_grads)} variable gradients "
                             f"for {len(variables)} variables")
    else:
        input_grads, variable_grads = grad_fn(*dys), []
    input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
    if len(input_grads) != n_args:
        raise ValueError(f"custom_gradient: grad_fn returned {len(input_grads)} gradients for {n_args} "
                         f"inputs of the decorated function")
    return [None] * n_out + input_grads + variable_grads


def identity_n(input: Sequence[Any], name: str | None = None) -> list[Tensor]:
    """The given tensors, passed through one op."""
    tensors = [convert_to_tensor(t) for t in input]
    op = make_multi_op("IdentityN", tensors, [(t.dtype, t.shape) for t in tensors], name,
                       {"grad_fn": None})
    return list(op.outputs)


def _accepts_variables(fn: Callable) -> bool:
    params = inspect.signature(fn).parameters.values()
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def custom_gradient(f: Callable) -> Callable:
    """Decorate `f(*x) -> (y, grad_fn)`; tf.gradients then uses grad_fn(dy) -> dx for f."""

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        graph = get_default_graph()
        before = {id(v) for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
        inputs = [convert_to_tensor(a) for a in args]
        result, grad_fn = f(*inputs, **kwargs)
        created = [v for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES) if id(v) not in before]
        if created and not _accepts_variables(grad_fn):
            raise TypeError("If using @custom_gradient with a function that creates variables, then "
                            "grad_fn must accept a keyword argument 'variables'.")
        single = not isinstance(result, (list, tuple))
        flat = [convert_to_tensor(r) for r in ([result] if single else result)]
        all_inputs = flat + inputs + [v._ref() for v in created]
        op = make_multi_op("IdentityN", all_inputs, [(t.dtype, t.shape) for t in all_inputs], None,
                           {"grad_fn": grad_fn, "n_outputs": len(flat), "n_args": len(inputs),
                            "variables": created})
        outs = list(op.outputs[:len(flat)])
        return outs[0] if single else type(result)(outs)

    return decorated


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method: Any = None) -> list[Tensor]:
    """d²(sum of ys)/dx² for each x in xs, shaped x.shape + x.shape (xs need fully known shapes)."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    with name_scope(name, "hessians"):
        first = gradients(ys, xs)
        out = []
        for g, x in zip(first, xs):
            x = convert_to_tensor(x)
            if not x.shape.is_fully_defined():
                raise ValueError(f"hessians: {x.name} needs a fully known static shape, got {x.shape}")
            if g is None:
                raise ValueError(f"hessians: {x.name} does not affect ys, so its gradient is None")
            flat = array_ops.reshape(g, [-1])
            rows = []
            for j in range(int(np.prod(x.shape.as_list()))):
                row = gradients(flat[j], x)[0]
                rows.append(array_ops.zeros_like(x) if row is None else row)
            out.append(array_ops.reshape(array_ops.stack(rows), x.shape.as_list() * 2))
        return out
