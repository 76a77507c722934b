"""`tf.lookup.StaticHashTable`, `KeyValueTensorInitializer` and `TextFileInitializer`: an immutable
key -> value table.

The table is per-session state behind a handle op (as queues are). Its initializer is an op in
the TABLE_INITIALIZERS collection, so `tf.tables_initializer()` fills it; a lookup before that fails
with FailedPreconditionError, as in TF. Keys absent from the table give `default_value`. A text file
fills it as TF's InitializeTableFromTextFileV2 reads one: a line per entry (a trailing "\r" dropped,
an empty line an error), key and value each the whole line, its number, or a delimited column.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from tftk.framework.ops import GraphKeys, Operation, Tensor, add_to_collections, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import index_ops, math_ops, string_ops
from tftk.ops.data_flow_ops import state_getter
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["KeyValueTensorInitializer", "StaticHashTable", "StaticVocabularyTable", "TextFileIndex",
           "TextFileInitializer"]


class _TableState:
    """A dict from key to value, filled once by the initializer."""

    def __init__(self) -> None:
        self.table: dict | None = None


def _key(k: Any) -> Any:
    return bytes(k) if isinstance(k, (bytes, np.bytes_)) else (k.encode() if isinstance(k, str) else k.item())


def _bind_handle(op: Operation, ctx: Any):
    name = op.name.encode()
    return lambda: np.array(name, dtype=object)


def _fill(op: Operation, table: _TableState, keys: Any, values: Any) -> None:
    """Fill an empty table (a filled one is left as it is); one key with two values is TF's error."""
    if table.table is not None:
        return
    entries: dict = {}
    for k, v in zip(keys, values):
        key = _key(k)
        if entries.setdefault(key, v) != v:
            raise FailedPreconditionError(None, op, f"HashTable has different value for same key. Key {_shown(k)} "
                                                    f"has {_shown(entries[key])} and trying to add value {_shown(v)}")
    table.table = entries


def _shown(x: Any) -> str:
    return x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x)


def _bind_import(op: Operation, ctx: Any):
    state = state_getter(op, ctx, _TableState)

    def kernel(keys: np.ndarray, values: np.ndarray) -> None:
        if keys.shape != values.shape:
            raise InvalidArgumentError(None, op, f"Expected shape {keys.shape} for value, got {values.shape}")
        _fill(op, state(), keys.reshape(-1), values.reshape(-1))
    return kernel


class TextFileIndex:
    """The key_index / value_index that mean the whole line or the line number, not a column."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _read_text_file(op: Operation, filename: str, key_index: int, value_index: int, vocab_size: int,
                    delimiter: str, offset: int, key_dtype: Any, value_dtype: Any) -> tuple[list, list]:
    """The keys and values TF's TextFileLineIterator reads from `filename`."""
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise NotFoundError(None, op, f"{filename}; {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise InvalidArgumentError(None, op, f"Invalid vocab_size in {filename}: expected {vocab_size} but got "
                                                 f"{len(lines)}")
        lines = lines[:vocab_size]
    keys, values, position, columns = [], [], 0, max(key_index, value_index) + 1
    for number, raw in enumerate(lines):
        position += len(raw) + 1
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line:
            raise InvalidArgumentError(None, op, f"Invalid content in {filename}: empty line found at position "
                                                 f"{position}.")
        tokens = line.split(delimiter.encode()) if columns > 0 else []
        if len(tokens) < columns:
            raise InvalidArgumentError(None, op, f"Invalid number of columns in {filename} line {number} "
                                                 f"({_shown(line)}) : expected at least {columns} got {len(tokens)}")
        keys.append(_field(op, line, tokens, key_index, number, offset, key_dtype))
        values.append(_field(op, line, tokens, value_index, number, offset, value_dtype))
    return keys, values


def _field(op: Operation, line: bytes, tokens: list, index: int, number: int, offset: int, dtype: Any) -> Any:
    if index == TextFileIndex.LINE_NUMBER:
        return np.int64(number + offset)
    token = line if index == TextFileIndex.WHOLE_LINE else tokens[index]
    if dtype is dtypes.string:
        return token
    try:
        return dtype.as_numpy_dtype(int(token) if dtype.is_integer else float(token))
    except (ValueError, OverflowError):
        raise InvalidArgumentError(None, op, f"Field {_shown(token)} in line {number} is not a valid "
                                             f"{dtype.name}.") from None


def _bind_text_file(op: Operation, ctx: Any):
    state = state_getter(op, ctx, _TableState)
    a = op.get_attr

    def kernel(filename: np.ndarray) -> None:
        name = filename.reshape(()).item()
        name = name.decode("utf-8") if isinstance(name, bytes) else str(name)
        keys, values = _read_text_file(op, name, a("key_index"), a("value_index"), a("vocab_size"),
                                       a("delimiter"), a("offset"), a("Tkey"), a("Tval"))
        _fill(op, state(), keys, values)
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
for _op_type, _factory in (("InitializeTableV2", _bind_import), ("InitializeTableFromTextFileV2", _bind_text_file),
                           ("LookupTableFindV2", _bind_find), ("LookupTableSizeV2", _bind_size)):
    registry.register_op(_op_type, _factory, ref_inputs=(0,), stateful=True)
registry.not_differentiable("HashTableV2", "InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableFindV2",
                            "LookupTableSizeV2")


def initialize_table_from_text_file(handle: Tensor, filename: Tensor, key_index: int, value_index: int,
                                    vocab_size: int, delimiter: str, offset: int, key_dtype: Any,
                                    value_dtype: Any, name: str | None = None) -> Operation:
    """The InitializeTableFromTextFileV2 op filling the table behind `handle` from `filename`."""
    for what, index, dtype in (("Key", key_index, key_dtype), ("Value", value_index, value_dtype)):
        if index < TextFileIndex.WHOLE_LINE:
            raise ValueError(f"Invalid {what.lower()} index {index}.")
        if index == TextFileIndex.LINE_NUMBER and dtype is not dtypes.int64:
            raise ValueError(f"Signature mismatch. {what}s must be dtype int64, got {dtype.name}.")
        if index == TextFileIndex.WHOLE_LINE and not (dtype.is_integer or dtype is dtypes.string):
            raise ValueError(f"Signature mismatch. {what}s must be integer or string, got {dtype.name}.")
    return make_multi_op("InitializeTableFromTextFileV2", [handle, filename], [], name,
                         {"key_index": int(key_index), "value_index": int(value_index), "vocab_size": int(vocab_size),
                          "delimiter": delimiter, "offset": int(offset), "Tkey": key_dtype, "Tval": value_dtype})


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


class TextFileInitializer:
    """Fills a table from a text file: key and value each a column of the line split at `delimiter`,
    the whole line (TextFileIndex.WHOLE_LINE) or its number (TextFileIndex.LINE_NUMBER, plus
    `value_index_offset`); `vocab_size` lines when given (the file must have that many)."""

    def __init__(self, filename: Any, key_dtype: Any, key_index: int, value_dtype: Any, value_index: int,
                 vocab_size: int | None = None, delimiter: str = "\t", name: str | None = None,
                 value_index_offset: int = 0):
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename, self._name = filename, name
        self._key_dtype, self._value_dtype = dtypes.as_dtype(key_dtype), dtypes.as_dtype(value_dtype)
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._offset = vocab_size, delimiter, value_index_offset

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: self._value_dtype)

    def initialize(self, table: "StaticHashTable") -> Operation:
        """The op filling `table` (in TABLE_INITIALIZERS; a constant file name also in ASSET_FILEPATHS,
        so a SavedModel copies the file into its assets)."""
        with name_scope(self._name, "text_file_init", [table.resource_handle]):
            filename = convert_to_tensor(self._filename, dtype=dtypes.string, name="asset_filepath")
            init = initialize_table_from_text_file(table.resource_handle, filename, self._key_index,
                                                   self._value_index, -1 if self._vocab_size is None
                                                   else self._vocab_size, self._delimiter, self._offset,
                                                   table.key_dtype, table.value_dtype)
        add_to_collections([GraphKeys.TABLE_INITIALIZERS], init)
        if filename.op.type == "Const":
            add_to_collections([GraphKeys.ASSET_FILEPATHS], filename)
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


class StaticVocabularyTable:
    """Ids of a vocabulary (a table of key -> int64 id from `initializer`), and for keys outside it one of
    `num_oov_buckets` extra ids: vocabulary size + Fingerprint64 hash of the key (as a string) modulo
    the buckets, as TF's StaticVocabularyTable (string_to_hash_bucket_fast)."""

    def __init__(self, initializer: Any, num_oov_buckets: int, lookup_key_dtype: Any = None, name: str | None = None):
        if num_oov_buckets <= 0:
            raise ValueError(f"oov_buckets must be > 0; use StaticHashTable. Got {num_oov_buckets}")
        if initializer.value_dtype is not dtypes.int64:
            raise TypeError(f"Invalid value dtype, expected int64 but got {initializer.value_dtype.name}.")
        self._num_oov_buckets, self._name = int(num_oov_buckets), name or "hash_table"
        with name_scope(name, "hash_table"):
            self._table = StaticHashTable(initializer, -1)
        self._key_dtype = dtypes.as_dtype(lookup_key_dtype) if lookup_key_dtype is not None else initializer.key_dtype

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: dtypes.int64)
    resource_handle = property(lambda self: self._table.resource_handle)
    initializer = property(lambda self: self._table.initializer)
    name = property(lambda self: self._name)

    def size(self, name: str | None = None) -> Tensor:
        """The vocabulary's size plus the number of buckets."""
        with name_scope(name, f"{self._name}_Size"):
            return math_ops.add(self._table.size(), self._num_oov_buckets)

    def lookup(self, keys: Any, name: str | None = None) -> Tensor:
        """Each key's id: its vocabulary id, else its bucket past the vocabulary."""
        keys = convert_to_tensor(keys)
        if keys.dtype is not self._key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self._key_dtype.name}, got {keys.dtype.name}.")
        with name_scope(name, f"{self._name}_Lookup"):
            words = keys if keys.dtype is dtypes.string else string_ops.as_string(keys)
            buckets = string_ops.string_to_hash_bucket_fast(words, self._num_oov_buckets, name="hash_bucket")
            ids = self._table.lookup(keys)
            buckets = math_ops.add(buckets, self._table.size())
            return index_ops.where_v2(math_ops.not_equal(ids, self._table.default_value), ids, buckets)
