"""User functions of `tf.data` transformations (map, filter, flat_map, ...) as traced sub-graphs.

A function is traced once, when the transformation is built, into its own FuncGraph whose
placeholders stand for the components of one input element; outer tensors it uses are captured
and become inputs of the iterator's initializer, so they are evaluated when the iterator starts.
At run time `bind_function` compiles the sub-graph through the engine's sub-plan entry point
(`KernelContext.function`) into a callable on numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tftk.framework import errors
from tftk.framework.func_graph import FuncGraph
from tftk.framework.ops import Tensor, get_default_graph
from tftk.ops.constant_op import placeholder
from tftk.data import structure as nest

__all__ = ["TracedFunction", "trace", "bind_function"]


@dataclass(eq=False)
class TracedFunction:
    """One traced user function: its graph, what it returns, and the outer tensors it captures."""

    graph: FuncGraph
    output_structure: Any  # the Python value the function returned, leaves being Tensors or Datasets
    outputs: list[Tensor]  # the tensors a run fetches (flattened outputs, or a dataset's inputs)
    what: str  # "Dataset.map()" etc., for error messages
    output_sparse: tuple = ()  # per leaf of the returned nest: a SparseTensor?

    @property
    def captured(self) -> list[Tensor]:
        """Outer tensors the function uses, in the order `bind_function` expects their values."""
        return list(self.graph.captures)


def trace(fn: Callable, element_structure: Any, specs: list, what: str, sparse: tuple,
          outputs_of: Callable[[Any], list[Tensor]] | None = None) -> TracedFunction:
    """Call `fn` once on placeholders shaped like the element; tuples are passed as separate args.

    `outputs_of(result)` picks the tensors to fetch from what `fn` returned (default: its flattened
    leaves converted to tensors).
    """
    graph = FuncGraph(get_default_graph(), what.split("(")[0].replace(".", "_"))
    with graph.as_default():
        graph.inputs = [placeholder(dt, shape, name=f"arg{i}") for i, (dt, shape) in enumerate(specs)]
        element = nest.pack_element(element_structure, sparse, graph.inputs)
        args = element if isinstance(element, tuple) and not hasattr(element, "_fields") else (element,)
        result = fn(*args)
        output_sparse: tuple = ()
        if outputs_of is None:
            result = nest.to_tensors(result, f"The function given to {what}")
            outputs, flags = nest.element_components(result)
            output_sparse = tuple(flags)
        else:
            outputs = outputs_of(result)
        graph.outputs = outputs
    return TracedFunction(graph, result, outputs, what, output_sparse)


def bind_function(function: TracedFunction, env: Any) -> Callable[..., tuple]:
    """The traced function as `call(index, *element_arrays) -> tuple of output arrays`.

    `env` (dataset_ops.Env) gives the session's kernel context and the values of the captured
    tensors; `index`, the element's position in the transformation's input, names the element
    in errors. The sub-graph is compiled by the engine's sub-plan entry point (`ctx.function`),
    once per session.
    """
    graph, ctx = function.graph, env.ctx
    plan = ctx.resource(graph, "dataset function", lambda: ctx.function(
        graph, graph.inputs + list(graph.captures.values()), function.outputs))
    captured = tuple(env.value(t) for t in function.captured)
    what = function.what

    def call(index: int, *element: Any) -> tuple:
        try:
            return plan(*element, *captured)
        except errors.OpError as exc:
            raise type(exc)(None, exc.op, f"The function of {what} failed on element {index} of its "
                            f"input: {exc.message}") from exc
        except Exception as exc:  # a kernel's numpy error, or the function's own Python code
            raise errors.InvalidArgumentError(None, None, f"The function of {what} failed on element "
                                              f"{index} of its input: {type(exc).__name__}: {exc}") from exc

    return call
