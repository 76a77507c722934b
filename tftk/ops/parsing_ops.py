"""Parsing `tf.train.Example` / `SequenceExample` records: parse_example, parse_single_example,
parse_single_sequence_example with FixedLenFeature, VarLenFeature (-> SparseTensor) and
FixedLenSequenceFeature, as TF1 declares them.

One op per call parses every record with the protobuf classes of tftk.proto.example; its outputs
are, for each VarLenFeature key (sorted), indices/values/dense_shape, then each dense key (sorted).
Errors name the feature key and the record (its position in the batch, or `example_names`).
"""

from __future__ import annotations

import collections
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.op_builder import make_multi_op

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "parse_example",
           "parse_single_example", "parse_single_sequence_example"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed shape; missing records take `default_value` (or are an error without one)."""

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length per record, parsed into a SparseTensor."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A sequence of fixed-shape items (a FeatureList, or in parse_example a stacked list)."""

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False, default_value: Any = None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


_KINDS = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_KIND_TYPES = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


class _Spec:
    """One requested feature, normalised: key, dtype, kind and (for dense) shape and default."""

    def __init__(self, key: str, feature: Any):
        self.key = key
        self.dtype = dtypes.as_dtype(feature.dtype)
        if self.dtype not in _KINDS:
            raise ValueError(f"Feature {key}: unsupported dtype {self.dtype.name}; Example features are "
                             "tf.float32, tf.int64 or tf.string")
        self.sparse = isinstance(feature, VarLenFeature)
        self.sequence = isinstance(feature, FixedLenSequenceFeature)
        self.shape = TensorShape([]) if self.sparse else as_shape(feature.shape)
        if not self.sparse and not self.shape.is_fully_defined():
            raise ValueError(f"Feature {key}: the shape of a FixedLen(Sequence)Feature must be fully "
                             f"defined, got {self.shape}")
        self.allow_missing = getattr(feature, "allow_missing", False)
        # per-record work avoids recomputing these (parsing is the hot loop of input pipelines)
        self.kind = _KINDS[self.dtype]
        self.np_dtype = object if self.dtype is dtypes.string else self.dtype.as_numpy_dtype
        self.dims = self.shape.as_tuple() if self.shape.is_fully_defined() else None
        self.size = int(np.prod(self.dims)) if self.dims is not None else None
        self.key_bytes = key.encode()
        self.list_field = {"float_list": 2, "int64_list": 3}.get(self.kind, 0)  # Feature's oneof field
        # the compiled decoder takes dense float/int64 features (set again when `sequence` changes)
        self.compiled = not self.sparse and not self.sequence and self.list_field != 0
        default = None if self.sparse else feature.default_value
        self.default = None
        if default is not None:
            np_type = object if self.dtype is dtypes.string else self.dtype.as_numpy_dtype
            value = np.asarray(default, dtype=np_type)
            if self.sequence:
                self.default = value.reshape(())
            else:
                self.default = np.broadcast_to(value, self.shape.as_tuple()).copy() if value.ndim == 0 \
                    else value.reshape(self.shape.as_tuple())

    def values(self, feature: Any, record: str) -> np.ndarray:
        """The flat values of one Feature proto, checked against the requested dtype."""
        kind = feature.WhichOneof("kind")
        want = self.kind
        if kind is not None and kind != want:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {record}, Key: {self.key}.  Data types don't match. Data type: "
                f"{_KIND_TYPES[kind]} but expected type: {_KIND_TYPES[want]}")
        if kind is None:
            return self.empty()
        raw = getattr(feature, want).value
        if self.np_dtype is object:
            array = np.empty(len(raw), dtype=object)
            array[:] = list(raw)
            return array
        return np.asarray(raw, dtype=self.np_dtype)

    def empty(self, shape: tuple = (0,)) -> np.ndarray:
        return np.zeros(shape, dtype=self.np_dtype)

    def dense(self, feature: Any, record: str) -> np.ndarray:
        if feature is None:
            if self.default is None:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: {record}, Feature: {self.key} (data type: {self.dtype.name}) is "
                    "required but could not be found.")
            return self.default
        values = self.values(feature, record)
        if values.size != self.size:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {record}, Key: {self.key}, Index: 0.  Number of {_KIND_TYPES[self.kind]} "
                f"values != expected.  Values size: {values.size} but output shape: {list(self.dims)}")
        return values.reshape(self.dims)

    def items(self, values: np.ndarray, record: str) -> np.ndarray:
        """Values as a [n, *shape] stack of sequence items."""
        size = int(np.prod(self.shape.as_tuple()))
        if size and values.size % size:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {record}, Key: {self.key}.  Number of values {values.size} is not a "
                f"multiple of the item size {size} (shape {self.shape})")
        return values.reshape((-1,) + self.shape.as_tuple())

    def padding(self) -> Any:
        if self.default is not None:
            return self.default
        return b"" if self.dtype is dtypes.string else 0


def _specs(features: dict | None) -> tuple[list[_Spec], list[_Spec]]:
    """(sparse specs, dense specs), each sorted by key as TF orders the op's outputs."""
    specs = [_Spec(key, features[key]) for key in sorted(features or {})]
    return [s for s in specs if s.sparse], [s for s in specs if not s.sparse]


def _sparse_parts(rows: list[np.ndarray], spec: _Spec, batched: bool) -> tuple:
    """indices, values, dense_shape of per-record value lists (one row per record)."""
    counts = [len(r) for r in rows]
    values = np.concatenate(rows) if rows else np.zeros(0)
    values = values.astype(object if spec.dtype is dtypes.string else spec.dtype.as_numpy_dtype)
    cols = np.concatenate([np.arange(c) for c in counts]) if rows else np.zeros(0, np.int64)
    width = max(counts, default=0)
    if not batched:
        return cols.astype(np.int64).reshape(-1, 1), values, np.array([width], np.int64)
    row_ids = np.repeat(np.arange(len(rows)), counts)
    indices = np.stack([row_ids, cols], axis=1).astype(np.int64) if len(values) else np.zeros((0, 2), np.int64)
    return indices, values, np.array([len(rows), width], np.int64)


def _decode(message_class: Any, record: Any, name: str) -> Any:
    from google.protobuf.message import DecodeError
    try:
        return message_class.FromString(bytes(record))
    except DecodeError:
        raise errors.InvalidArgumentError(None, None, f"Could not parse example input, value: "
                                          f"'{bytes(record)[:40]!r}' ({name})") from None


def _record_names(op: Any, n: int, names: Any, batched: bool) -> list[str]:
    """How errors name each record: `example_names` when given, else its position in the batch."""
    if names is not None and np.size(names):
        return [v.decode() if isinstance(v, bytes) else str(v) for v in np.ravel(names)]
    return [f"record {i} of {op.name}" for i in range(n)] if batched else [f"the record of {op.name}"]


def _bind_parse_example(op: Any, ctx: Any):
    from tftk.proto.example import Example
    sparse, dense = op.get_attr("sparse"), op.get_attr("dense")
    batched = op.get_attr("batched")
    compiled = not sparse and all(spec.compiled for spec in dense)
    single = [f"the record of {op.name}"]

    def labels_of(records: list, names: tuple) -> list[str]:
        return single if not batched and not names else \
            _record_names(op, len(records), names[0] if names else None, batched)

    def parse(records: list, labels: list[str]) -> list:
        """The outputs, parsing every record with the protobuf classes."""
        maps = [_decode(Example, r, label).features.feature for r, label in zip(records, labels)]
        out: list = []
        for spec in sparse:
            rows = [spec.values(m[spec.key], label) if spec.key in m else spec.empty()
                    for m, label in zip(maps, labels)]
            out.extend(_sparse_parts(rows, spec, batched))
        for spec in dense:
            if spec.sequence:
                stacks = [spec.items(spec.values(m[spec.key], label), label) if spec.key in m
                          else _missing_sequence(spec, label) for m, label in zip(maps, labels)]
                out.append(_pad_stack(stacks, spec) if batched else stacks[0])
            else:
                parts = [spec.dense(m[spec.key] if spec.key in m else None, label)
                         for m, label in zip(maps, labels)]
                out.append(np.stack(parts) if batched else parts[0])
        return out

    def kernel(serialized, *names):
        records = np.ravel(np.asarray(serialized, dtype=object)).tolist() if batched else \
            [np.asarray(serialized, dtype=object).item()]
        out = None
        if compiled:
            out = _parse_compiled(records, dense, lambda: labels_of(records, names), parse)
        if out is None:
            out = parse(records, labels_of(records, names))
        if not batched:
            out = [o[0] for o in out] if compiled else out
        return tuple(out) if len(out) > 1 else out[0]

    return kernel


def _parse_compiled(records: list, dense: list[_Spec], labels: Callable[[], list[str]],
                    parse: Callable[[list, list[str]], list]) -> list | None:
    """Dense float/int64 features of a batch by the compiled wire-format decoder
    (kernels/example_parse.py); records it cannot decide alone go through `parse` (protobuf),
    which also raises TF's errors. None when the records are not all bytes."""
    from tftk.kernels.example_parse import FLOAT_LIST, MISSING, OTHER, parse_dense
    try:
        floats, ints, columns, status = parse_dense(records, [s.key_bytes for s in dense],
                                                    [s.list_field for s in dense], [s.size for s in dense])
    except TypeError:  # str or other non-bytes records: protobuf's path names the problem
        return None
    n = len(records)
    out, retry = [], set()
    for f, spec in enumerate(dense):
        source = floats if spec.list_field == FLOAT_LIST else ints
        block = source[:, columns[f]:columns[f] + spec.size]
        value = (block if source.shape[1] == spec.size else np.ascontiguousarray(block)).reshape((n,) + spec.dims)
        missing = status[:, f] == MISSING
        if missing.any():
            if spec.default is None:
                retry.update(np.flatnonzero(missing).tolist())
            else:
                value[missing] = spec.default
        retry.update(np.flatnonzero(status[:, f] == OTHER).tolist())
        out.append(value)
    if retry:
        names = labels()
        for row in sorted(retry):
            for value, part in zip(out, parse([records[row]], [names[row]])):
                value[row] = part[0] if part.shape[:1] == (1,) and part.ndim == value.ndim else part
    return out


def _missing_sequence(spec: _Spec, record: str) -> np.ndarray:
    if not spec.allow_missing:
        raise errors.InvalidArgumentError(None, None, f"Name: {record}, Feature list: {spec.key} is required "
                                          "but could not be found (use allow_missing=True).")
    return spec.empty((0,) + spec.shape.as_tuple())


def _pad_stack(stacks: list[np.ndarray], spec: _Spec) -> np.ndarray:
    longest = max((len(s) for s in stacks), default=0)
    dtype = object if spec.dtype is dtypes.string else spec.dtype.as_numpy_dtype
    out = np.full((len(stacks), longest) + spec.shape.as_tuple(), spec.padding(), dtype=dtype)
    for i, s in enumerate(stacks):
        out[i, :len(s)] = s
    return out


registry.register_op("ParseExample", _bind_parse_example, fresh=True)
registry.not_differentiable("ParseExample")


def _output_specs(sparse: list[_Spec], dense: list[_Spec], lead: list) -> list:
    specs: list = []
    rank = len(lead) + 1
    for spec in sparse:
        specs += [(dtypes.int64, TensorShape([None, rank])), (spec.dtype, TensorShape([None])),
                  (dtypes.int64, TensorShape([rank]))]
    for spec in dense:
        extra = [None] if spec.sequence else []
        specs.append((spec.dtype, TensorShape(lead + extra).concatenate(spec.shape)))
    return specs


def _results(outputs: list, sparse: list[_Spec], dense: list[_Spec]) -> dict:
    outs = list(outputs)
    result: dict = {}
    for spec in sparse:
        indices, values, shape = outs[:3]
        del outs[:3]
        result[spec.key] = SparseTensor(indices, values, shape)
    for spec, tensor in zip(dense, outs):
        result[spec.key] = tensor
    return result


def _parse(serialized: Any, features: dict, batched: bool, example_names: Any, name: str | None,
           default_name: str) -> dict:
    if not features:
        raise ValueError("Missing: features was empty.")
    sparse, dense = _specs(features)
    if batched:
        for spec in dense:
            if spec.sequence and not spec.allow_missing:
                raise ValueError(f"Unsupported: FixedLenSequenceFeature requires allow_missing to be True "
                                 f"in parse_example ({spec.key}).")
    with name_scope(name, default_name):
        records = convert_to_tensor(serialized, dtype=dtypes.string)
        want = 1 if batched else 0
        if records.shape.ndims is not None and records.shape.ndims != want:
            raise ValueError(f"{default_name}: serialized must be {'a vector' if batched else 'a scalar'}, "
                             f"got shape {records.shape}")
        op = _parse_op(records, example_names, sparse, dense, batched, default_name)
    return _results(op.outputs, sparse, dense)


def _parse_op(records: Tensor, example_names: Any, sparse: list[_Spec], dense: list[_Spec], batched: bool,
              op_name: str) -> Any:
    lead = ([records.shape.as_list()[0]] if records.shape.ndims == 1 else [None]) if batched else []
    inputs = [records]
    if example_names is not None:
        inputs.append(convert_to_tensor(example_names, dtype=dtypes.string))
    return make_multi_op("ParseExample", inputs, _output_specs(sparse, dense, lead), op_name,
                         {"sparse": sparse, "dense": dense, "batched": batched,
                          "sparse_keys": [s.key for s in sparse], "dense_keys": [s.key for s in dense]})


def parse_example_op(serialized: Any, features: dict, example_names: Any = None, name: str | None = None) -> Any:
    """The batched ParseExample Operation itself, named `name` exactly (no scope): how
    import_graph_def rebuilds TF's node. Its outputs: per sparse feature (sorted by key) indices,
    values and dense_shape, then the dense features sorted by key."""
    sparse, dense = _specs(features)
    return _parse_op(convert_to_tensor(serialized, dtype=dtypes.string), example_names, sparse, dense, True,
                     name or "ParseExample")


def parse_example(serialized: Any, features: dict, name: str | None = None, example_names: Any = None) -> dict:
    """Parse a batch (vector) of serialized Examples into a dict of Tensors / SparseTensors.

    FixedLenFeature(shape) gives [batch] + shape; VarLenFeature a SparseTensor of dense_shape
    [batch, longest]; FixedLenSequenceFeature (allow_missing=True) [batch, longest] + shape, padded
    with its default_value (or zero).
    """
    return _parse(serialized, features, True, example_names, name, "ParseExample")


def parse_single_example(serialized: Any, features: dict, name: str | None = None,
                         example_names: Any = None) -> dict:
    """Parse one serialized Example (a scalar string): dense features have exactly their shape."""
    return _parse(serialized, features, False, example_names, name, "ParseSingleExample")


# ---- SequenceExample ---------------------------------------------------------------------------

def _bind_parse_sequence(op: Any, ctx: Any):
    from tftk.proto.example import SequenceExample
    c_sparse, c_dense = op.get_attr("context_sparse"), op.get_attr("context_dense")
    s_sparse, s_dense = op.get_attr("sequence_sparse"), op.get_attr("sequence_dense")

    def kernel(serialized, *names):
        label = _record_names(op, 1, names[0] if names else None, False)[0]
        example = _decode(SequenceExample, np.asarray(serialized, dtype=object).item(), label)
        context, lists = example.context.feature, example.feature_lists.feature_list
        out: list = []
        for spec in c_sparse:
            row = spec.values(context[spec.key], label) if spec.key in context else spec.empty()
            out.extend(_sparse_parts([row], spec, False))
        for spec in c_dense:
            out.append(spec.dense(context[spec.key] if spec.key in context else None, label))
        for spec in s_sparse:
            steps = list(lists[spec.key].feature) if spec.key in lists else []
            out.extend(_sparse_parts([spec.values(f, label) for f in steps], spec, True))
        for spec in s_dense:
            if spec.key not in lists:
                out.append(_missing_sequence(spec, label))
                continue
            items = [spec.dense(f, label) for f in lists[spec.key].feature]
            out.append(np.stack(items) if items else spec.empty((0,) + spec.shape.as_tuple()))
        return tuple(out) if len(out) > 1 else out[0]

    return kernel


registry.register_op("ParseSingleSequenceExample", _bind_parse_sequence, fresh=True)
registry.not_differentiable("ParseSingleSequenceExample")


def parse_single_sequence_example(serialized: Any, context_features: dict | None = None,
                                  sequence_features: dict | None = None, example_name: Any = None,
                                  name: str | None = None) -> tuple[dict, dict]:
    """Parse one SequenceExample into (context dict, sequence dict).

    Context features as in parse_single_example; sequence FixedLenSequenceFeature gives
    [steps] + shape, VarLenFeature a SparseTensor of dense_shape [steps, longest].
    """
    if not context_features and not sequence_features:
        raise ValueError("Missing features: context_features and sequence_features are both empty.")
    c_sparse, c_dense = _specs(context_features)
    s_sparse, s_dense = _specs(sequence_features)
    for spec in s_dense:
        spec.sequence = True
    with name_scope(name, "ParseSingleSequenceExample"):
        inputs = [convert_to_tensor(serialized, dtype=dtypes.string)]
        if example_name is not None:
            inputs.append(convert_to_tensor(example_name, dtype=dtypes.string))
        specs = _output_specs(c_sparse, c_dense, []) + _output_specs(s_sparse, [], [None]) + \
            [(s.dtype, TensorShape([None]).concatenate(s.shape)) for s in s_dense]
        op = make_multi_op("ParseSingleSequenceExample", inputs, specs, "ParseSingleSequenceExample",
                           {"context_sparse": c_sparse, "context_dense": c_dense,
                            "sequence_sparse": s_sparse, "sequence_dense": s_dense})
    n_context = 3 * len(c_sparse) + len(c_dense)
    context = _results(op.outputs[:n_context], c_sparse, c_dense)
    sequence = _results(op.outputs[n_context:], s_sparse, s_dense)
    return context, sequence

