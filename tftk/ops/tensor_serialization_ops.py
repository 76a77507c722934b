"""`tf.io.serialize_tensor` / `tf.io.parse_tensor`: a tensor as one serialized TensorProto string;
`serialize_sparse` / `serialize_many_sparse` / `deserialize_many_sparse`: a SparseTensor as three.

The bytes are TensorFlow's (`SerializeTensor` writes dtype, shape and the raw little-endian
`tensor_content`; strings go in `string_val`), so tensors serialized by TF parse here and back.
Protobuf is imported inside the kernels: building the ops costs nothing at `import tftk`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.kernels.varint import encode_varint
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["serialize_tensor", "parse_tensor", "serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse"]


def _serialize(array: np.ndarray, dtype: dtypes.DType, strings_as_content: bool = False) -> bytes:
    """TF's serialization of one tensor: TensorProto with tensor_content, or string_val for strings
    (SerializeTensor) unless `strings_as_content` (SerializeSparse: TF's varint-prefixed encoding)."""
    from tftk.proto.tensorflow import TensorProto
    proto = TensorProto(dtype=dtype.as_datatype_enum)
    proto.tensor_shape.SetInParent()
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    if dtype == dtypes.string:
        items = [v.encode() if isinstance(v, str) else bytes(v) for v in array.reshape(-1)]
        if not strings_as_content:
            proto.string_val.extend(items)
        elif items:
            proto.tensor_content = b"".join(encode_varint(len(v)) for v in items) + b"".join(items)
    elif array.size:
        little_endian = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(array, dtype=little_endian).tobytes()
    return proto.SerializeToString()


def _decode_string_content(content: bytes, dims: list | None) -> np.ndarray:
    """Strings from TF's string tensor_content: every length as a varint, then all the bytes."""
    if dims is None or any(d is None for d in dims):
        raise ValueError("a string tensor_content needs a known shape")
    count = int(np.prod(dims, dtype=np.int64))
    lengths, pos = [], 0
    for _ in range(count):
        length, shift = 0, 0
        while True:
            byte = content[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        lengths.append(length)
    if pos + sum(lengths) != len(content):
        raise ValueError("string tensor_content lengths do not match its size")
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i], pos = content[pos:pos + length], pos + length
    return out.reshape(dims)


def _bind_serialize(op: Operation, ctx: Any):
    dtype = op.inputs[0].dtype

    def kernel(x: np.ndarray) -> np.ndarray:
        out = np.empty((), dtype=object)
        out[()] = _serialize(np.asarray(x), dtype)
        return out
    return kernel


def _bind_parse(op: Operation, ctx: Any):
    out_type = op.get_attr("out_type")

    def kernel(serialized: np.ndarray) -> np.ndarray:
        if serialized.shape != ():
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Expected `serialized` to be a scalar, got "
                                              f"shape: {list(serialized.shape)}")
        return _parse(serialized[()], out_type, op)
    return kernel


def _parse(raw: Any, out_type: dtypes.DType, op: Operation) -> np.ndarray:
    """The array one serialized TensorProto holds; InvalidArgumentError unless it is one of `out_type`."""
    from google.protobuf import message
    from tftk.proto.tensorflow import TensorProto
    from tftk.summary.tensor_proto import TensorProtoError, make_ndarray, shape_dims
    raw = raw.encode() if isinstance(raw, str) else bytes(raw)
    try:
        proto = TensorProto.FromString(raw)
        if proto.dtype == dtypes.string.as_datatype_enum and proto.tensor_content:
            value = _decode_string_content(proto.tensor_content, shape_dims(proto.tensor_shape))
        else:
            value = make_ndarray(proto)
    except (message.DecodeError, TensorProtoError, ValueError, IndexError):
        import base64
        raise errors.InvalidArgumentError(None, op, f"{op.name}: Could not parse `serialized` as TensorProto, "
                                          f"base64: {base64.b64encode(raw).decode()}") from None
    if proto.dtype != out_type.as_datatype_enum:
        found = dtypes.as_dtype(proto.dtype).name if proto.dtype else "invalid"
        raise errors.InvalidArgumentError(None, op, f"{op.name}: Type mismatch between parsed tensor ({found}) "
                                          f"and dtype ({out_type.name})")
    return np.asarray(value, dtype=out_type.as_numpy_dtype)


registry.register_op("SerializeTensor", _bind_serialize, fresh=True)
registry.register_op("ParseTensor", _bind_parse, fresh=True)
registry.not_differentiable("SerializeTensor")
registry.not_differentiable("ParseTensor")


def _string_vector(parts: list[bytes]) -> np.ndarray:
    out = np.empty(len(parts), dtype=object)
    out[:] = parts
    return out


def _bind_serialize_sparse(op: Operation, ctx: Any):
    values_dtype = op.inputs[1].dtype

    def kernel(indices: np.ndarray, values: np.ndarray, dense_shape: np.ndarray) -> np.ndarray:
        return _string_vector([_serialize(indices, dtypes.int64), _serialize(values, values_dtype, True),
                               _serialize(dense_shape, dtypes.int64)])
    return kernel


def _bind_serialize_many_sparse(op: Operation, ctx: Any):
    values_dtype = op.inputs[1].dtype

    def kernel(indices: np.ndarray, values: np.ndarray, dense_shape: np.ndarray) -> np.ndarray:
        if dense_shape.size < 2:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Rank of input SparseTensor should be > 1, "
                                              f"but saw rank: {dense_shape.size}")
        rows = np.empty((int(dense_shape[0]), 3), dtype=object)
        for batch in range(rows.shape[0]):
            mine = indices[:, 0] == batch
            rows[batch] = _string_vector([_serialize(indices[mine, 1:], dtypes.int64),
                                          _serialize(values[mine], values_dtype, True),
                                          _serialize(dense_shape[1:], dtypes.int64)])
        return rows
    return kernel


def _bind_deserialize_many_sparse(op: Operation, ctx: Any):
    values_dtype = op.get_attr("dtype")

    def kernel(serialized: np.ndarray) -> tuple:
        if serialized.ndim != 2 or serialized.shape[1] != 3:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Serialized sparse should be a matrix with 3 "
                                              f"columns, got shape {list(serialized.shape)}")
        if serialized.shape[0] == 0:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Serialized sparse should have non-zero rows")
        parts = [[_parse(row[0], dtypes.int64, op), _parse(row[1], values_dtype, op), _parse(row[2], dtypes.int64, op)]
                 for row in serialized]
        ranks = {shape.size for _, _, shape in parts}
        if len(ranks) != 1:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Inconsistent ranks {sorted(ranks)} among "
                                              f"the serialized SparseTensors")
        rank = ranks.pop()
        indices = np.concatenate([np.concatenate([np.full((len(ix), 1), batch, np.int64), ix.reshape(-1, rank)], 1)
                                  for batch, (ix, _, _) in enumerate(parts)])
        values = np.concatenate([v.reshape(-1) for _, v, _ in parts]).astype(values_dtype.as_numpy_dtype)
        shape = np.concatenate([[len(parts)], np.max([s for _, _, s in parts], axis=0)]).astype(np.int64)
        return indices, values, shape
    return kernel


registry.register_op("SerializeSparse", _bind_serialize_sparse, fresh=True)
registry.register_op("SerializeManySparse", _bind_serialize_many_sparse, fresh=True)
registry.register_op("DeserializeManySparse", _bind_deserialize_many_sparse, fresh=True)
for _op_type in ("SerializeSparse", "SerializeManySparse", "DeserializeManySparse"):
    registry.not_differentiable(_op_type)


def _sparse_input(sp_input: Any, what: str) -> SparseTensor:
    if isinstance(sp_input, SparseTensorValue):
        return SparseTensor(*sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{what}: sp_input must be a SparseTensor or SparseTensorValue, got {type(sp_input).__name__}")
    return sp_input


def _string_out_type(out_type: Any, what: str) -> None:
    if dtypes.as_dtype(out_type) != dtypes.string:
        raise TypeError(f"{what}: only out_type=tf.string is supported (tftk has no variant tensors), "
                        f"got {dtypes.as_dtype(out_type).name}")


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """A scalar string: `tensor` as a serialized TensorProto (TF's bytes)."""
    value = convert_to_tensor(tensor)
    return make_op("SerializeTensor", [value], dtypes.string, [], name or "SerializeTensor", {"T": value.dtype})


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor a serialized TensorProto holds; InvalidArgumentError when its dtype is not `out_type`."""
    value = convert_to_tensor(serialized, dtype=dtypes.string)
    out_type = dtypes.as_dtype(out_type)
    return make_op("ParseTensor", [value], out_type, None, name or "ParseTensor", {"out_type": out_type})


def serialize_sparse(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Tensor:
    """A [3] string vector: `sp_input`'s indices, values and dense_shape as serialized TensorProtos."""
    sp = _sparse_input(sp_input, "serialize_sparse")
    _string_out_type(out_type, "serialize_sparse")
    return make_op("SerializeSparse", [sp.indices, sp.values, sp.dense_shape], dtypes.string, [3],
                   name or "SerializeSparse", {"T": sp.values.dtype, "out_type": dtypes.string})


def serialize_many_sparse(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Tensor:
    """An [N, 3] string matrix: row i serializes the entries of `sp_input` whose first index is i
    (rank-1 indices and dense_shape[1:]); `sp_input` must have rank > 1."""
    sp = _sparse_input(sp_input, "serialize_many_sparse")
    _string_out_type(out_type, "serialize_many_sparse")
    return make_op("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape], dtypes.string, [None, 3],
                   name or "SerializeManySparse", {"T": sp.values.dtype, "out_type": dtypes.string})


def deserialize_many_sparse(serialized_sparse: Any, dtype: Any, rank: int | None = None,
                            name: str | None = None) -> SparseTensor:
    """One SparseTensor from an [N, 3] matrix of serialized SparseTensors of equal rank: entry i
    becomes batch row i, and each dense dimension is the largest among the N."""
    serialized = convert_to_tensor(serialized_sparse, dtype=dtypes.string)
    dims = serialized.shape.as_list() if serialized.shape.ndims is not None else None
    if dims is not None and (len(dims) != 2 or dims[1] not in (None, 3)):
        raise ValueError(f"deserialize_many_sparse: serialized_sparse must be an [N, 3] matrix (3 columns: "
                         f"indices, values, dense_shape), got shape {dims}")
    dtype = dtypes.as_dtype(dtype)
    width = None if rank is None else int(rank) + 1
    op = make_multi_op("DeserializeManySparse", [serialized],
                       [(dtypes.int64, [None, width]), (dtype, [None]), (dtypes.int64, [width])],
                       name or "DeserializeManySparse", {"dtype": dtype})
    return SparseTensor(*op.outputs)
