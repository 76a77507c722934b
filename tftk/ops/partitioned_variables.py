"""Partitioned variables (TF1's `partitioned_variables.py`): one logical variable kept as parts.

`tf.get_variable(name, shape, partitioner=...)` asks the partitioner how many parts each axis
gets (only one axis may be split), then makes variables `name/part_0`, `name/part_1`, ... along
that axis, the first `dim % n` parts one row longer, as TF does. Each part carries a
`SaveSliceInfo` (the full name, full shape, its offset and shape), so a Saver writes all parts
under the one checkpoint key `name` with TF's slice specs, and its initializer gets a
`_PartitionInfo` (a callable initializer can fill each part from the full tensor's rows).
A `PartitionedVariable` iterates over its parts; as a tensor it is their concatenation.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, name_scope, register_tensor_conversion_function
from tftk.framework.tensor_shape import TensorShape, as_shape

__all__ = ["PartitionedVariable", "SaveSliceInfo", "fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner", "partitioned_parts", "create_partitioned_variables"]


class SaveSliceInfo:
    """Where one part sits in its full variable (TF's Variable.SaveSliceInfo)."""

    def __init__(self, full_name: str, full_shape: list[int], var_offset: list[int], var_shape: list[int]):
        self.full_name, self.full_shape = full_name, list(full_shape)
        self.var_offset, self.var_shape = list(var_offset), list(var_shape)

    @property
    def spec(self) -> str:
        """TF's shape-and-slice string: the full shape, then `start,length` per dim ("30 4 0,10:0,4")."""
        extents = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
        return " ".join(str(d) for d in self.full_shape) + " " + extents


class _PartitionInfo:
    """What an initializer learns about the part it fills (TF's `_PartitionInfo`)."""

    def __init__(self, full_shape: list[int], var_offset: list[int]):
        self.full_shape, self.var_offset = list(full_shape), list(var_offset)

    def single_offset(self, shape: list[int]) -> int:
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape: list[int]) -> int | None:
        axes = [i for i, (full, part) in enumerate(zip(self.full_shape, shape)) if full != part]
        return axes[0] if axes else None


def _element_size(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype is dtypes.string else dtype.size


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Callable:
    """A partitioner splitting `axis` into `num_shards` parts (fewer when the axis is shorter)."""
    def partitioner(shape: TensorShape, dtype: Any = None, **unused: Any) -> list[int]:
        parts = [1] * len(shape)
        parts[axis] = min(num_shards, shape.as_list()[axis])
        return parts
    return partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0, min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16) -> Callable:
    """A partitioner giving each part at least `min_slice_size` bytes, at most `max_partitions` parts."""
    def partitioner(shape: TensorShape, dtype: Any, **unused: Any) -> list[int]:
        total = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        parts = [1] * len(shape)
        parts[axis] = max(1, min(shape.as_list()[axis], max_partitions, int(math.ceil(total / min_slice_size))))
        return parts
    return partitioner


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0, bytes_per_string_element: int = 16,
                                   max_shards: int | None = None) -> Callable:
    """A partitioner keeping each part under `max_shard_bytes` (at least one slice of `axis` each)."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def partitioner(shape: TensorShape, dtype: Any, **unused: Any) -> list[int]:
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        dims = shape.as_list()
        per_slice = shape.num_elements() / dims[axis] * _element_size(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / per_slice))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        parts = [1] * len(dims)
        parts[axis] = min(max_shards, shards) if max_shards else shards
        return parts
    return partitioner


def partitioned_parts(name: str, shape: Any, dtype: Any, partitioner: Callable) -> list[tuple[str, list, list, Any]]:
    """[(part name, offset, shape, _PartitionInfo)] of variable `name` as `partitioner` splits it."""
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable ({name}) must be fully defined, but instead "
                         f"was {shape}.")
    full = shape.as_list()
    parts = list(partitioner(shape=shape, dtype=dtypes.as_dtype(dtype)))
    if len(parts) != len(full) or any(int(p) < 1 for p in parts):
        raise ValueError(f"Partitioner of {name} returned {parts}: it must give a positive count for each of "
                         f"the {len(full)} dimensions")
    axes = [i for i, p in enumerate(parts) if p > 1]
    if len(axes) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: {name} got partitions {parts}")
    axis = axes[0] if axes else 0
    count = int(parts[axis])
    if count > full[axis]:
        raise ValueError(f"Partitioner of {name} asks for {count} parts of dimension {axis}, of size {full[axis]}")
    base, extra = divmod(full[axis], count)
    out, offset = [], 0
    for i in range(count):
        part_shape = list(full)
        part_shape[axis] = base + (1 if i < extra else 0)
        part_offset = [0] * len(full)
        part_offset[axis] = offset
        out.append((f"{name}/part_{i}", part_offset, part_shape, _PartitionInfo(full, part_offset)))
        offset += part_shape[axis]
    return out


def create_partitioned_variables(shape: Any, slicing: list[int], initializer: Any, dtype: Any = dtypes.float32,
                                 trainable: bool = True, collections: Any = None, name: str | None = None,
                                 reuse: Any = None) -> list:
    """TF1's older form: the parts (a list of variables) of a variable sliced as `slicing` says,
    named `<name or "PartitionedVariable">/part_<i>`."""
    from tftk.ops.variable_scope import _true_getter, get_variable_scope, variable_scope
    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        scope = get_variable_scope()
        variable = _true_getter(scope.name, shape, dtype, initializer, trainable=trainable, collections=collections,
                                reuse=scope.reuse, partitioner=lambda **unused: list(slicing))
    return list(variable)


class PartitionedVariable:
    """A variable kept as parts along one axis; iterate for the parts, convert for the whole."""

    def __init__(self, name: str, shape: list[int], dtype: Any, variable_list: list, partitions: list[int]):
        if not variable_list:
            raise ValueError(f"PartitionedVariable {name} needs at least one part")
        self._name, self._shape = name, TensorShape(shape)
        self._dtype, self._variable_list = dtypes.as_dtype(dtype), list(variable_list)
        self._partitions = list(partitions)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self) -> TensorShape:
        return self._shape

    def __iter__(self) -> Iterator:
        return iter(self._variable_list)

    def __len__(self) -> int:
        return len(self._variable_list)

    def _get_variable_list(self) -> list:
        return list(self._variable_list)

    def _get_partitions(self) -> list[int]:
        return list(self._partitions)

    def _partition_axes(self) -> list[int]:
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    def _concat(self) -> Tensor:
        """The full value: the parts concatenated along the split axis, named as the variable."""
        from tftk.ops import array_ops
        graph = self._variable_list[0].graph
        with graph.as_default():
            if len(self._variable_list) == 1:
                with name_scope(None):
                    return array_ops.identity(self._variable_list[0], name=self._name)
            with name_scope(self._name + "/ConcatPartitions/"):
                joined = array_ops.concat(self._variable_list, self._partition_axes()[0])
            with name_scope(None):
                return array_ops.identity(joined, name=self._name)

    def as_tensor(self) -> Tensor:
        return self._concat()

    def __repr__(self) -> str:
        return f"<tftk.PartitionedVariable '{self._name}' shape={self._shape} parts={len(self)}>"


register_tensor_conversion_function(PartitionedVariable, lambda value, dtype=None, name=None, as_ref=False:
                                    value._concat())
