"""The global step: one integer scalar variable per graph that counts training steps (TF1's training_util)."""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Graph, Tensor, get_default_graph
from tftk.ops.variables import Variable
from tftk.ops.init_ops import zeros_initializer
from tftk.ops.variable_scope import get_variable

__all__ = ["get_global_step", "create_global_step", "get_or_create_global_step", "global_step",
           "assert_global_step"]


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The current value of `global_step_tensor` in `sess`, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor: Any) -> None:
    """Raise TypeError unless `global_step_tensor` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}')
    if global_step_tensor.shape.ndims != 0 and global_step_tensor.shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {global_step_tensor.shape}')


def get_global_step(graph: Graph | None = None) -> Any:
    """The GLOBAL_STEP collection's single member, else the tensor named 'global_step:0', else None."""
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise ValueError(f"Multiple tensors in the {GraphKeys.GLOBAL_STEP!r} collection: "
                         f"{[t.name for t in found]}; keep only one global step per graph")
    if found:
        step = found[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
    assert_global_step(step)
    return step


def create_global_step(graph: Graph | None = None) -> Variable:
    """Create the int64 scalar variable `global_step` (zero, not trainable, in GLOBAL_STEP); fails if one exists."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=dtypes.int64,
                            initializer=zeros_initializer(), trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph: Graph | None = None) -> Any:
    """The graph's global step, created (int64, zero) when it has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)
