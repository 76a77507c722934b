"""`tf.lookup.StaticHashTable` and `KeyValueTensorInitializer`: an immutable key -> value table.

The table is per-session state behind a handle op (as queues are). Its initializer is an op in
the TABLE_INITIALIZERS collection, so `tf.tables_initializer()` fills it; a lookup before that fails
with FailedPreconditionError, as in TF. Keys absent from the table give `default_value`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import FailedPreconditionError, InvalidArgumentError
from tftk.framework.ops import GraphKeys, Operation, Tensor, add_to_collections, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.data_flow_ops import state_getter
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["KeyValueTensorInitializer", "StaticHashTable"]


class _TableState:
    """A dict from key to value, filled once by the initializer."""

    def __init__(self) -> None:
        self.table: dict | None = None


def _key(k: Any) -> Any:
    return bytes(k) if isinstance(k, (bytes, np.bytes_)) else (k.encode() if isinstance(k, str) else k.item())


def _bind_handle(op: Operation, ctx: Any):
    name = op.name.encode()
    return lambda: np.array(name, dtype=object)


def _bind_import(op: Operation, ctx: Any):
    state = state_getter(op, ctx, _TableState)

    def kernel(keys: np.ndarray, values: np.ndarray) -> None:
        if keys.shape != values.shape:
            raise InvalidArgumentError(None, op, f"Expected shape {keys.shape} for value, got {values.shape}")
        table = state()
        if table.table is None:
            table.table = {_key(k): v for k, v in zip(keys.reshape(-1), values.reshape(-1))}
    return kernel


def _initialized(op: Operation, table: _TableState) -> dict:
    if table.table is None:
        raise FailedPreconditionError(None, op, "Table not initialized.")
    return table.table


def _bind_find(op: Operation, ctx: Any):
    state = state_getter(op, ctx, _TableState)
    out_dtype = op.outputs[0].dtype.as_numpy_dtype

    def kernel(keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        table = _initialized(op, state())
        default = default.reshape(()).item()
        flat = [table.get(_key(k), default) for k in keys.reshape(-1)]
        out = np.empty(len(flat), dtype=object if out_dtype is object else out_dtype)
        out[:] = flat
        return out.reshape(keys.shape)
    return kernel


def _bind_size(op: Operation, ctx: Any):
    state = state_getter(op, ctx, _TableState)
    return lambda: np.int64(len(_initialized(op, state())))


registry.register_op("HashTableV2", _bind_handle, stateful=True, holds_state=True)
for _op_type, _factory in (("InitializeTableV2", _bind_import), ("LookupTableFindV2", _bind_find),
                           ("LookupTableSizeV2", _bind_size)):
    registry.register_op(_op_type, _factory, ref_inputs=(0,), stateful=True)
registry.not_differentiable("HashTableV2", "InitializeTableV2", "LookupTableFindV2", "LookupTableSizeV2")


class KeyValueTensorInitializer:
    """The keys and values (1-D tensors of one length) a table is filled with."""

    def __init__(self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None,
                 name: str | None = None):
        with name_scope(name, "key_value_init", [keys, values]):
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name

    key_dtype = property(lambda self: self._keys.dtype)
    value_dtype = property(lambda self: self._values.dtype)

    def initialize(self, table: "StaticHashTable") -> Operation:
        """The op filling `table` (added to TABLE_INITIALIZERS)."""
        if table.key_dtype is not self.key_dtype or table.value_dtype is not self.value_dtype:
            raise TypeError(f"Invalid key/value dtypes for the table: table has {table.key_dtype.name}/"
                            f"{table.value_dtype.name}, initializer {self.key_dtype.name}/{self.value_dtype.name}")
        with name_scope(self._name, "table_init", [table.resource_handle]):
            init = make_multi_op("InitializeTableV2", [table.resource_handle, self._keys, self._values], [], None,
                                 {"Tkey": self.key_dtype, "Tval": self.value_dtype})
        add_to_collections([GraphKeys.TABLE_INITIALIZERS], init)
        return init


class StaticHashTable:
    """An immutable table from keys to values, filled by `initializer`; absent keys give default_value."""

    def __init__(self, initializer: KeyValueTensorInitializer, default_value: Any, name: str | None = None):
        self._key_dtype, self._value_dtype = initializer.key_dtype, initializer.value_dtype
        self._default = convert_to_tensor(default_value, dtype=self._value_dtype)
        if self._default.shape.ndims not in (0, None):
            raise ValueError(f"default_value must be a scalar, got shape {self._default.shape}")
        with name_scope(name, "hash_table"):
            self._handle = make_op("HashTableV2", [], dtypes.string, TensorShape([]), "hash_table",
                                   {"key_dtype": self._key_dtype, "value_dtype": self._value_dtype})
            self._init_op = initializer.initialize(self)
        self._name = name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)
    default_value = property(lambda self: self._default)
    resource_handle = property(lambda self: self._handle)
    initializer = property(lambda self: self._init_op)
    name = property(lambda self: self._name)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        """The value of each key (default_value for keys not in the table), in keys' shape."""
        keys = convert_to_tensor(keys)
        if keys.dtype is not self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got {keys.dtype.name}.")
        with name_scope(name, f"{self._handle.op.name}_Lookup", [self._handle, keys]):
            return make_op("LookupTableFindV2", [self._handle, keys, self._default], self._value_dtype, keys.shape,
                           "hash_table_Lookup", {"Tin": self._key_dtype, "Tout": self._value_dtype})

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (an int64 scalar)."""
        return make_op("LookupTableSizeV2", [self._handle], dtypes.int64, TensorShape([]),
                       name or f"{self._handle.op.name}_Size", {})
