"""String ops on byte-string tensors: hashing to buckets, joins, substrings, base64, formatting.

Hash buckets are TF's: FarmHash Fingerprint64 (fast), keyed SipHash-2-4 (strong), TF's Hash64 (the
deprecated StringToHashBucket); the first two run as Numba kernels over the whole tensor
(tftk.kernels.hash_kernels). None of these ops is differentiable.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels import hashing
from tftk.ops.op_builder import broadcast_shape, make_op

__all__ = ["string_to_hash_bucket_fast", "string_to_hash_bucket_strong", "string_to_hash_bucket",
           "reduce_join", "substr", "encode_base64", "decode_base64", "string_join", "as_string"]

_OPS = ("StringToHashBucketFast", "StringToHashBucket", "StringToHashBucketStrong", "ReduceJoin", "Substr", "EncodeBase64",
        "DecodeBase64", "StringJoin", "AsString")


def _string_input(x: Any, op_type: str) -> Tensor:
    t = convert_to_tensor(x, dtype=dtypes.string) if not isinstance(x, Tensor) else x
    if t.dtype is not dtypes.string:
        raise TypeError(f"{op_type}: input must be a string tensor, got {t.dtype.name}")
    return t


def _as_bytes(s: Any) -> bytes:
    return s.encode() if isinstance(s, str) else bytes(s)


def _map_strings(fn: Any, otype: Any = object) -> Any:
    """Apply `fn` to every element of an object array, keeping its shape."""
    def kernel(x):
        out = np.empty(x.shape, dtype=otype)
        flat_in, flat_out = x.reshape(-1), out.reshape(-1)
        for i in np.arange(flat_in.size):
            flat_out[i] = fn(flat_in[i])
        return out
    return kernel


# ---- hashing ---------------------------------------------------------------------------------------

def _bucket(num_buckets: int, hash64: Any) -> Any:
    return _map_strings(lambda s: hash64(_as_bytes(s)) % num_buckets, np.int64)


def _bind_fast(op, ctx):
    from tftk.kernels import hash_kernels  # lazy: Numba loads when a graph first runs the op
    num_buckets = np.uint64(op.get_attr("num_buckets"))
    return lambda x: (hash_kernels.fingerprint64_array(x) % num_buckets).astype(np.int64)


def _bind_strong(op, ctx):
    from tftk.kernels import hash_kernels
    num_buckets, key = np.uint64(op.get_attr("num_buckets")), tuple(op.get_attr("key"))
    return lambda x: (hash_kernels.siphash24_array(key, x) % num_buckets).astype(np.int64)


registry.register_op("StringToHashBucketFast", _bind_fast)
registry.register_op("StringToHashBucket", lambda op, ctx: _bucket(op.get_attr("num_buckets"), hashing.tf_hash64))
registry.register_op("StringToHashBucketStrong", _bind_strong)


def _hash_op(op_type: str, input: Any, num_buckets: int, name: str | None, attrs: dict) -> Tensor:
    t = _string_input(input, op_type)
    if int(num_buckets) < 1:
        raise ValueError(f"{op_type}: num_buckets must be >= 1, got {num_buckets}")
    return make_op(op_type, [t], dtypes.int64, t.shape, name, {"num_buckets": int(num_buckets), **attrs})


def string_to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """Each string's FarmHash Fingerprint64 modulo `num_buckets` (TF's buckets)."""
    return _hash_op("StringToHashBucketFast", input, num_buckets, name, {})


def string_to_hash_bucket_strong(input: Any, num_buckets: int, key: Sequence[int],
                                 name: str | None = None) -> Tensor:
    """Each string's SipHash-2-4 under the two 64-bit ints of `key`, modulo `num_buckets` (as TF)."""
    key = [int(k) for k in key]
    if len(key) != 2 or any(k < -2 ** 63 or k >= 2 ** 63 for k in key):
        raise ValueError(f"StringToHashBucketStrong: key must be two 64-bit ints (TF's int attr), got {key}")
    # TF reads the two int64 attr values as the uint64 halves of the SipHash key
    return _hash_op("StringToHashBucketStrong", input, num_buckets, name,
                    {"key": tuple(k & 0xFFFFFFFFFFFFFFFF for k in key)})


def string_to_hash_bucket(string_tensor: Any, num_buckets: int, name: str | None = None) -> Tensor:
    """TF1's deprecated hash buckets: TF's Hash64 (not FarmHash) modulo `num_buckets`."""
    return _hash_op("StringToHashBucket", string_tensor, num_buckets, name, {})


# ---- reduce_join / string_join ------------------------------------------------------------------

def _bind_reduce_join(op, ctx):
    axes, keep, sep = op.get_attr("axis"), op.get_attr("keep_dims"), op.get_attr("separator")

    def kernel(x):
        ax = tuple(np.arange(x.ndim)) if axes is None else axes
        rest = [i for i in np.arange(x.ndim) if i not in ax]
        moved = np.transpose(x, rest + list(ax))
        lead = moved.shape[:len(rest)]
        rows = moved.reshape(lead + (-1,))
        out = np.empty(lead, dtype=object)
        for idx in np.ndindex(*lead):
            out[idx] = sep.join(_as_bytes(s) for s in rows[idx])
        if keep:
            out = out.reshape([1 if i in ax else d for i, d in enumerate(x.shape)])
        return out
    return kernel


registry.register_op("ReduceJoin", _bind_reduce_join)


def reduce_join(inputs: Any, axis: Any = None, keep_dims: bool = False, separator: str = "",
                name: str | None = None, reduction_indices: Any = None, keepdims: bool | None = None) -> Tensor:
    """Join the strings over `axis` (all axes when None) with `separator`, in row-major order."""
    t = _string_input(inputs, "ReduceJoin")
    axis = reduction_indices if axis is None else axis
    keep = bool(keep_dims if keepdims is None else keepdims)
    dims = t.shape.as_tuple()
    if axis is None:
        axes = None
        if dims is None:
            raise ValueError("ReduceJoin: reducing over all axes needs an input of known rank")
    else:
        raw = [int(a) for a in np.atleast_1d(axis)]
        if dims is None:
            raise ValueError("ReduceJoin: an explicit axis needs an input of known rank")
        for a in raw:
            if not -len(dims) <= a < len(dims):
                raise ValueError(f"ReduceJoin: axis {a} is out of range for an input of rank {len(dims)}")
        axes = tuple(sorted({a % len(dims) for a in raw}))
    reduced = tuple(np.arange(len(dims))) if axes is None else axes
    shape = [1 if i in reduced else d for i, d in enumerate(dims)] if keep else \
        [d for i, d in enumerate(dims) if i not in reduced]
    return make_op("ReduceJoin", [t], dtypes.string, shape, name,
                   {"axis": None if axes is None else axes, "keep_dims": keep,
                    "separator": _as_bytes(separator)})


def _bind_string_join(op, ctx):
    sep = op.get_attr("separator")

    def kernel(*parts):
        parts = np.broadcast_arrays(*parts)
        out = np.empty(parts[0].shape, dtype=object)
        for idx in np.ndindex(*out.shape):
            out[idx] = sep.join(_as_bytes(p[idx]) for p in parts)
        return out
    return kernel


registry.register_op("StringJoin", _bind_string_join)


def string_join(inputs: Sequence[Any], separator: str = "", name: str | None = None) -> Tensor:
    """Element-wise concatenation of string tensors of one shape (scalars broadcast)."""
    tensors = [_string_input(t, "StringJoin") for t in inputs]
    if not tensors:
        raise ValueError("StringJoin: inputs must be a non-empty list")
    shapes = [t.shape for t in tensors if t.shape.ndims != 0]
    shape = shapes[0] if shapes else TensorShape([])
    for s in shapes[1:]:
        if not s.is_compatible_with(shape):
            raise ValueError(f"StringJoin: inputs must be scalars or share one shape, got {s} and {shape}")
        shape = shape.merge_with(s)
    return make_op("StringJoin", tensors, dtypes.string, shape, name, {"separator": _as_bytes(separator)})


# ---- substr ----------------------------------------------------------------------------------------

def _substr(x, pos, length):
    x_b, pos_b, len_b = np.broadcast_arrays(x, pos, length)
    out = np.empty(x_b.shape, dtype=object)
    for idx in np.ndindex(*out.shape):
        s, p, n = _as_bytes(x_b[idx]), int(pos_b[idx]), int(len_b[idx])
        if p < 0 or p > len(s):
            raise ValueError(f"pos {p} out of range for string b'{s.decode(errors='replace')}' at index {list(idx)}")
        if n < 0:
            raise ValueError(f"len {n} must be non-negative at index {list(idx)}")
        out[idx] = s[p:p + n]
    return out


registry.register_op("Substr", lambda op, ctx: _substr)


def substr(input: Any, pos: Any, len: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Byte substrings input[pos:pos+len] (pos/len scalars or of input's shape)."""
    t = _string_input(input, "Substr")
    p, n = convert_to_tensor(pos), convert_to_tensor(len)
    if not p.dtype.is_integer or p.dtype is not n.dtype:
        raise TypeError(f"Substr: pos and len must be integers of one dtype, got {p.dtype.name}, {n.dtype.name}")
    if p.shape.ndims != 0 and not p.shape.is_compatible_with(t.shape) or \
            n.shape.ndims != 0 and not n.shape.is_compatible_with(p.shape if p.shape.ndims else t.shape):
        raise ValueError(f"Substr: pos {p.shape} and len {n.shape} must be scalars or match input {t.shape}")
    return make_op("Substr", [t, p, n], dtypes.string, broadcast_shape(t.shape, p.shape, "Substr"), name)


# ---- base64 ----------------------------------------------------------------------------------------

def _encode(pad: bool) -> Any:
    def one(s):
        out = base64.urlsafe_b64encode(_as_bytes(s))
        return out if pad else out.rstrip(b"=")
    return _map_strings(one)


_WEB_SAFE = re.compile(rb"[A-Za-z0-9_-]*={0,2}")


def _decode_one(s):
    data = _as_bytes(s)
    try:
        if not _WEB_SAFE.fullmatch(data):
            raise ValueError(data)
        return base64.urlsafe_b64decode(data.rstrip(b"=") + b"=" * (-len(data.rstrip(b"=")) % 4))
    except (binascii.Error, ValueError):
        raise ValueError(f"Invalid character found in base64 (web-safe alphabet expected): {data[:40]!r}") from None


registry.register_op("EncodeBase64", lambda op, ctx: _encode(op.get_attr("pad")))
registry.register_op("DecodeBase64", lambda op, ctx: _map_strings(_decode_one))


def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:
    """Web-safe base64 ('-' and '_'), without '=' padding unless pad=True (TF's encoding)."""
    t = _string_input(input, "EncodeBase64")
    return make_op("EncodeBase64", [t], dtypes.string, t.shape, name, {"pad": bool(pad)})


def decode_base64(input: Any, name: str | None = None) -> Tensor:
    """Decode web-safe base64, with or without padding."""
    t = _string_input(input, "DecodeBase64")
    return make_op("DecodeBase64", [t], dtypes.string, t.shape, name)


# ---- as_string --------------------------------------------------------------------------------------

def _bind_as_string(op, ctx):
    fmt = op.get_attr("format")
    if fmt is None:
        return _map_strings(lambda v: b"true" if v else b"false")
    return _map_strings(lambda v: (fmt % v).encode())


registry.register_op("AsString", _bind_as_string)


def as_string(input: Any, precision: int = -1, scientific: bool = False, shortest: bool = False,
              width: int = -1, fill: str = "", name: str | None = None) -> Tensor:
    """Numbers (or bools) formatted as strings with printf rules: floats as %f by default."""
    t = convert_to_tensor(input)
    if not (t.dtype.is_integer or t.dtype.is_floating or t.dtype.is_bool):
        raise TypeError(f"AsString: input must be an integer, float or bool tensor, got {t.dtype.name}")
    if len(fill) > 1 or fill not in ("", " ", "0", "-", "+"):
        raise ValueError(f"AsString: fill must be one of ' ', '0', '-', '+' or empty, got {fill!r}")
    if scientific and shortest:
        raise ValueError("AsString: cannot select both scientific and shortest notation")
    if (precision > -1 or scientific or shortest) and not t.dtype.is_floating:
        raise ValueError("AsString: precision, scientific and shortest apply only to floats")
    if t.dtype.is_bool:
        fmt = None
    else:
        fmt = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
        fmt += ("g" if shortest else "e" if scientific else "f") if t.dtype.is_floating else "d"
    return make_op("AsString", [t], dtypes.string, t.shape, name, {"format": fmt})


registry.not_differentiable(*_OPS)
