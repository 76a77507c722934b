"""TF1 top-level helpers that act on the graph rather than on values: timestamp, guarantee_const,
init_scope, switch_case, grad_pass_through, convert_to_tensor_or_sparse_tensor, no_regularizer,
and the variable partitioners (fixed_size, min_max_variable, variable_axis_size)."""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any, Callable, Iterator

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph
from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.framework.tensor_shape import as_shape
from tftk.ops import math_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.control_flow_ops import case
from tftk.ops.custom_gradient import custom_gradient
from tftk.ops.op_builder import make_op

__all__ = ["timestamp", "guarantee_const", "init_scope", "switch_case", "grad_pass_through",
           "convert_to_tensor_or_sparse_tensor", "no_regularizer", "fixed_size_partitioner",
           "min_max_variable_partitioner", "variable_axis_size_partitioner"]

registry.register_op("Timestamp", lambda op, ctx: lambda: np.float64(time.time()), stateful=True)
registry.not_differentiable("Timestamp")
register_array_op("GuaranteeConst", lambda x: x.copy())


def timestamp(name: str | None = None) -> Tensor:
    """Seconds since the epoch (float64) when the op runs."""
    return make_op("Timestamp", [], dtypes.float64, [], name)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """`input`, promised constant over the session's life (no gradient flows through)."""
    x = convert_to_tensor(input, name="input")
    return array_op("GuaranteeConst", [x], [(x.dtype, x.shape)], name)


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Build in the outermost graph (out of while_loop bodies) with no control dependencies,
    keeping the current name scope, as TF's variable-initialisation code needs."""
    graph = get_default_graph()
    scope = graph.get_name_scope()
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    with graph.as_default(), graph.control_dependencies(None), graph.name_scope(scope + "/" if scope else None):
        yield


def switch_case(branch_index: Any, branch_fns: Any, default: Callable | None = None,
                name: str = "switch_case") -> Any:
    """branch_fns[branch_index]() (a list, or (index, fn) pairs / a dict); out-of-range indices run
    `default`, or the last branch when no default is given."""
    items = sorted(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if items and not isinstance(items[0], (tuple, list)):
        items = list(enumerate(items))
    if not items:
        raise ValueError("Must provide at least one item in `branch_fns`")
    for key, fn in items:
        if not isinstance(key, int) or not callable(fn):
            raise TypeError(f"branch_fns must map integers to callables, got {key!r}: {fn!r}")
    keys = sorted(key for key, _ in items)
    if keys != list(range(len(keys))):
        raise ValueError(f"branch indices (keys) must form contiguous range of [0 to {len(keys)}) but found "
                         f"{{{','.join(map(str, keys))}}}")
    index = convert_to_tensor(branch_index, name="branch_index")
    if index.dtype is not dtypes.int32:
        raise TypeError(f"branch_index must be an int32 tensor, got {index.dtype.name}")
    if default is None:
        items, default = items[:-1], items[-1][1]
    return case([(math_ops.equal(index, key), fn) for key, fn in items], default=default, exclusive=False,
                name=name)


def grad_pass_through(f: Callable) -> Callable:
    """f with the identity as its gradient (for functions TF cannot differentiate, e.g. assignments)."""
    @custom_gradient
    def passthrough(*args: Tensor):
        return f(*args), lambda *dy: list(dy) if len(dy) > 1 else dy[0]
    return passthrough


def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """A SparseTensor stays one (a SparseTensorValue becomes one); anything else goes to convert_to_tensor."""
    if isinstance(value, SparseTensorValue):
        value = SparseTensor(*value)
    if isinstance(value, SparseTensor):
        if dtype is not None and value.dtype is not dtypes.as_dtype(dtype):
            raise RuntimeError(f"Sparse dtype mismatch. Requested: {dtypes.as_dtype(dtype).name}, "
                               f"Actual: {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def no_regularizer(_: Any) -> None:
    """The regulariser that adds no loss (turns a scope's default regulariser off)."""
    return None


# ---- partitioners --------------------------------------------------------------------------------

def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Callable:
    """A partitioner splitting `axis` into num_shards pieces."""
    def partitioner(shape: Any, **unused_args: Any) -> list[int]:
        partitions = [1] * as_shape(shape).ndims
        partitions[axis] = min(num_shards, as_shape(shape).as_list()[axis])
        return partitions
    return partitioner


def _bytes_per_element(dtype: Any, bytes_per_string_element: int) -> int:
    d = dtypes.as_dtype(dtype)
    return bytes_per_string_element if d is dtypes.string else d.size


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0, bytes_per_string_element: int = 16,
                                   max_shards: int | None = None) -> Callable:
    """A partitioner keeping each shard (split along `axis`) under max_shard_bytes."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive. "
                         f"Currently, max_shard_bytes is {max_shard_bytes} and bytes_per_string_element "
                         f"is {bytes_per_string_element}")
    if max_shards is not None and max_shards < 1:
        raise ValueError(f"max_shards must be positive, got {max_shards}")

    def partitioner(shape: Any, dtype: Any) -> list[int]:
        dims = as_shape(shape).as_list()
        partitions = [1] * len(dims)
        if dims[axis] is None:
            return partitions
        element_size = _bytes_per_element(dtype, bytes_per_string_element)
        slice_bytes = int(np.prod([d for k, d in enumerate(dims) if k != axis])) * element_size
        slices_per_shard = max(1, max_shard_bytes // slice_bytes)
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards:
            shards = min(shards, max_shards)
        partitions[axis] = shards
        return partitions
    return partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0, min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16) -> Callable:
    """A partitioner giving each shard at least min_slice_size bytes, with at most max_partitions shards."""
    def partitioner(shape: Any, dtype: Any) -> list[int]:
        dims = as_shape(shape).as_list()
        partitions = [1] * len(dims)
        if not dims or dims[axis] is None:
            return partitions
        total = int(np.prod(dims)) * _bytes_per_element(dtype, bytes_per_string_element)
        partitions[axis] = max(1, min(dims[axis], max_partitions, int(math.ceil(total / min_slice_size))))
        return partitions
    return partitioner


