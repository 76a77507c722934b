"""Ops that turn raw feature values into category ids, as TF1's feature columns need them.

- `bucketize`: the index of the bucket of `boundaries` each value falls in (TF's `Bucketize`).
- `vocabulary_lookup`: the id of each key in a vocabulary, out-of-vocabulary keys hashed into
  `num_oov_buckets` extra ids or given `default_value` (what `tf.contrib.lookup`'s
  `index_table_from_tensor(...).lookup` computes; here the vocabulary is an attribute of the op,
  not a table resource, so no table initialiser has to run).
- `sparse_cross_hashed` / `sparse_cross`: the cross product of sparse and dense categorical features,
  row by row (TF's `SparseCross`), as ids hashed with TF's FingerprintCat64 chaining (so crossed
  buckets land where TF puts them) or as the features joined into strings.

None of these is differentiable: their outputs are ids.
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import GraphKeys, Operation, Tensor, convert_to_tensor, get_collection, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops.control_flow_ops import group
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["bucketize", "vocabulary_lookup", "tables_initializer", "sparse_cross", "sparse_cross_hashed",
           "DEFAULT_CROSS_HASH_KEY"]

DEFAULT_CROSS_HASH_KEY = 0xDECAFCAFFE  # TF's _DEFAULT_HASH_KEY of sparse_cross_hashed


# ---- Bucketize -------------------------------------------------------------------------------------

def _bind_bucketize(op, ctx):
    # TF keeps the boundaries as a float32 list attr: round them so values next to one land as in TF
    boundaries = np.asarray(op.get_attr("boundaries"), dtype=np.float32).astype(np.float64)

    def kernel(x):
        return np.searchsorted(boundaries, x, side="right").astype(np.int32)
    return kernel


registry.register_op("Bucketize", _bind_bucketize)


def bucketize(input: Any, boundaries: Sequence[float], name: str | None = None) -> Tensor:
    """For each value, how many boundaries are <= it: bucket i is [boundaries[i-1], boundaries[i])."""
    t = convert_to_tensor(input)
    if not (t.dtype.is_integer or t.dtype.is_floating):
        raise TypeError(f"Bucketize: input must be a numeric tensor, got {t.dtype.name}")
    bounds = [float(b) for b in boundaries]
    if any(b >= c for b, c in zip(bounds, bounds[1:])):
        raise ValueError(f"Bucketize: boundaries must be sorted in increasing order, got {bounds}")
    return make_op("Bucketize", [t], dtypes.int32, t.shape, name, {"boundaries": tuple(bounds)})


# ---- vocabulary lookup --------------------------------------------------------------------------------

def _key_bytes(key: Any) -> bytes:
    """The bytes TF hashes for an out-of-vocabulary key: the string itself, an int's decimal digits."""
    if isinstance(key, (bytes, np.bytes_)):
        return bytes(key)
    if isinstance(key, str):
        return key.encode()
    return str(int(key)).encode()


def _bind_vocabulary_lookup(op, ctx):
    from tftk.kernels import hash_kernels  # lazy: Numba loads when a graph first runs this op
    vocabulary = op.get_attr("vocabulary")
    table = {key: i for i, key in enumerate(vocabulary)}
    num_oov, default = op.get_attr("num_oov_buckets"), op.get_attr("default_value")
    size = len(vocabulary)
    is_string = op.inputs[0].dtype is dtypes.string

    def kernel(keys):
        flat = keys.reshape(-1)
        if is_string:
            flat = [_key_bytes(k) for k in flat]
        else:
            flat = flat.tolist()
        ids = np.fromiter((table.get(k, -1) for k in flat), dtype=np.int64, count=len(flat))
        missing = np.flatnonzero(ids < 0)
        if missing.size:
            if num_oov:
                unknown = np.array([_key_bytes(flat[i]) for i in missing], dtype=object)
                ids[missing] = size + hash_kernels.fingerprint64_array(unknown) % np.uint64(num_oov)
            else:
                ids[missing] = default
        return ids.reshape(keys.shape)
    return kernel


registry.register_op("VocabularyLookup", _bind_vocabulary_lookup)


def vocabulary_lookup(keys: Any, vocabulary: Sequence[Any], num_oov_buckets: int = 0, default_value: int = -1,
                      name: str | None = None) -> Any:
    """The position of each key in `vocabulary` (a Tensor or a SparseTensor's values, int64 ids).

    A key not in the vocabulary gets `len(vocabulary) + Fingerprint64(key) % num_oov_buckets` (an
    int key is hashed as its decimal string, as TF does) when `num_oov_buckets` > 0, otherwise
    `default_value`.
    """
    if isinstance(keys, SparseTensor):
        with name_scope(name, "vocabulary_lookup", [keys.values]):
            ids = vocabulary_lookup(keys.values, vocabulary, num_oov_buckets, default_value)
            return SparseTensor(keys.indices, ids, keys.dense_shape)
    t = convert_to_tensor(keys)
    if t.dtype is dtypes.string:
        vocab = tuple(_key_bytes(v) for v in vocabulary)
    elif t.dtype.is_integer:
        vocab = tuple(int(v) for v in vocabulary)
    else:
        raise TypeError(f"vocabulary_lookup: keys must be string or integer, got {t.dtype.name}")
    if len(set(vocab)) != len(vocab):
        raise ValueError(f"vocabulary_lookup: the vocabulary has duplicate keys: {list(vocabulary)}")
    if num_oov_buckets < 0:
        raise ValueError(f"vocabulary_lookup: num_oov_buckets must be >= 0, got {num_oov_buckets}")
    return make_op("VocabularyLookup", [t], dtypes.int64, t.shape, name,
                   {"vocabulary": vocab, "num_oov_buckets": int(num_oov_buckets),
                    "default_value": int(default_value)})


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """One op running every initialiser in the TABLE_INITIALIZERS collection (TF1's tf.tables_initializer).

    `vocabulary_lookup` holds its vocabulary in the op and needs no initialiser, so for feature
    columns this is a no-op; programs written for TF1 call it before their first lookup.
    """
    return group(*get_collection(GraphKeys.TABLE_INITIALIZERS), name=name)


# ---- SparseCross (hashed) --------------------------------------------------------------------------

def _row_splits(indices: np.ndarray, batch: int) -> np.ndarray:
    """Where each row's entries start in a sparse input (indices sorted by row, as TF assumes)."""
    rows = indices[:, 0] if indices.size else np.zeros(0, np.int64)
    return np.searchsorted(rows, np.arange(batch + 1), side="left")


def _hashed_features(values: np.ndarray) -> np.ndarray:
    """A column's features as TF's hashed crosser reads them: Fingerprint64 of strings, ints as they are."""
    from tftk.kernels import hash_kernels
    if values.dtype == object or values.dtype.kind in "SU":
        return hash_kernels.fingerprint64_array(values.reshape(-1))
    return values.reshape(-1).astype(np.int64).view(np.uint64)


def _string_features(values: np.ndarray) -> list:
    """A column's features as TF's string crosser reads them: strings as they are, ints in decimal."""
    return [_key_bytes(v) for v in values.reshape(-1)]


def _cross_strings(columns: list[tuple[list, np.ndarray]], batch: int, separator: bytes) -> tuple:
    """Each row's crosses joined by `separator`, in TF's order (the last column varies fastest)."""
    indices, values = [], []
    for b in range(batch):
        rows = [features[splits[b]:splits[b + 1]] for features, splits in columns]
        for k, combo in enumerate(itertools.product(*rows)):
            indices.append((b, k))
            values.append(separator.join(combo))
    width = max((k + 1 for b, k in indices), default=0)
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, dtype=object), width)


def _bind_sparse_cross(op, ctx):
    n_sparse, hashed = op.get_attr("n_sparse"), op.get_attr("hashed")
    num_buckets, hash_key, separator = op.get_attr("num_buckets"), op.get_attr("hash_key"), op.get_attr("separator")

    def kernel(*arrays):
        sparse = [arrays[3 * i:3 * i + 3] for i in range(n_sparse)]
        dense = arrays[3 * n_sparse:]
        batches = {int(shape[0]) for _, _, shape in sparse} | {int(d.shape[0]) for d in dense}
        if len(batches) != 1:
            raise InvalidArgumentError(None, op, f"SparseCross: inputs have different batch sizes {sorted(batches)}")
        batch = batches.pop()
        features = _hashed_features if hashed else _string_features
        columns = [(features(v), _row_splits(ix, batch)) for ix, v, _ in sparse]
        columns += [(features(d), np.arange(batch + 1) * (d.size // max(batch, 1))) for d in dense]
        if hashed:
            from tftk.kernels import hash_kernels
            out_indices, out_values, width = hash_kernels.cross_rows(columns, batch, hash_key, num_buckets)
        else:
            out_indices, out_values, width = _cross_strings(columns, batch, separator)
        return out_indices, out_values, np.array([batch, width], np.int64)
    return kernel


registry.register_op("SparseCross", _bind_sparse_cross)


def _sparse_cross(inputs: Sequence[Any], hashed: bool, num_buckets: int, hash_key: int | None, separator: str,
                  name: str | None, what: str) -> SparseTensor:
    if len(inputs) < 1:
        raise ValueError(f"{what}: inputs must be a non-empty list")
    sparse = [i for i in inputs if isinstance(i, SparseTensor)]
    dense = [convert_to_tensor(i) for i in inputs if not isinstance(i, SparseTensor)]
    for t in [s.values for s in sparse] + dense:
        if not (t.dtype is dtypes.string or t.dtype.is_integer):
            raise TypeError(f"{what}: inputs must be string or integer, got {t.dtype.name}")
    for d in dense:
        if d.shape.ndims is not None and d.shape.ndims != 2:
            raise ValueError(f"{what}: dense inputs must be 2-D, got shape {d.shape}")
    if int(num_buckets) < 0:
        raise ValueError(f"{what}: num_buckets must be >= 0, got {num_buckets}")
    parts = [p for s in sparse for p in (s.indices, s.values, s.dense_shape)] + dense
    with name_scope(name, "SparseCross", parts):
        op = make_multi_op("SparseCross", parts,
                           [(dtypes.int64, [None, 2]), (dtypes.int64 if hashed else dtypes.string, [None]),
                            (dtypes.int64, [2])],
                           attrs={"n_sparse": len(sparse), "hashed": hashed, "num_buckets": int(num_buckets),
                                  "hash_key": int(DEFAULT_CROSS_HASH_KEY if hash_key is None else hash_key),
                                  "separator": _key_bytes(separator)})
        return SparseTensor(*op.outputs)


def sparse_cross_hashed(inputs: Sequence[Any], num_buckets: int = 0, hash_key: int | None = None,
                        name: str | None = None) -> SparseTensor:
    """The crosses of the features of each row of `inputs` (SparseTensors and 2-D Tensors) as hashed ids.

    Each cross is FingerprintCat64-chained from `hash_key` over its features (Fingerprint64 of a
    string, an int as it is), modulo `num_buckets` (or 2**63-1 when 0), as TF's sparse_cross_hashed;
    SparseTensors come first in the chain, then dense inputs, each in the order given, and the last
    input varies fastest within a row.
    """
    return _sparse_cross(inputs, True, num_buckets, hash_key, "_X_", name, "sparse_cross_hashed")


def sparse_cross(inputs: Sequence[Any], name: str | None = None, separator: str | None = None) -> SparseTensor:
    """The crosses of the features of each row of `inputs` as strings: features joined by `separator` ("_X_").

    Ints are written in decimal; SparseTensors come first, then dense inputs, as sparse_cross_hashed.
    """
    return _sparse_cross(inputs, False, 0, None, "_X_" if separator is None else separator, name, "sparse_cross")


registry.not_differentiable("Bucketize", "VocabularyLookup", "SparseCross")
