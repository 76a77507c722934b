"""`tf.io.serialize_tensor` / `tf.io.parse_tensor`: a tensor as one serialized TensorProto string.

The bytes are TensorFlow's (`SerializeTensor` writes dtype, shape and the raw little-endian
`tensor_content`; strings go in `string_val`), so tensors serialized by TF parse here and back.
Protobuf is imported inside the kernels: building the ops costs nothing at `import tftk`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.ops.op_builder import make_op

__all__ = ["serialize_tensor", "parse_tensor"]


def _serialize(array: np.ndarray, dtype: dtypes.DType) -> bytes:
    """TF's serialization of one tensor: TensorProto with tensor_content (or string_val)."""
    from tftk.proto.tensorflow import TensorProto
    proto = TensorProto(dtype=dtype.as_datatype_enum)
    proto.tensor_shape.SetInParent()
    for size in array.shape:
        proto.tensor_shape.dim.add(size=size)
    if dtype == dtypes.string:
        proto.string_val.extend(v.encode() if isinstance(v, str) else bytes(v) for v in array.reshape(-1))
    elif array.size:
        little_endian = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
        proto.tensor_content = np.ascontiguousarray(array, dtype=little_endian).tobytes()
    return proto.SerializeToString()


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
        from google.protobuf import message
        from tftk.proto.tensorflow import TensorProto
        from tftk.summary.tensor_proto import TensorProtoError, make_ndarray
        if serialized.shape != ():
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Expected `serialized` to be a scalar, got "
                                              f"shape: {list(serialized.shape)}")
        raw = serialized[()]
        raw = raw.encode() if isinstance(raw, str) else bytes(raw)
        try:
            proto = TensorProto.FromString(raw)
            value = make_ndarray(proto)
        except (message.DecodeError, TensorProtoError, ValueError):
            import base64
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Could not parse `serialized` as TensorProto, "
                                              f"base64: {base64.b64encode(raw).decode()}") from None
        if proto.dtype != out_type.as_datatype_enum:
            found = dtypes.as_dtype(proto.dtype).name if proto.dtype else "invalid"
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Type mismatch between parsed tensor ({found}) "
                                              f"and dtype ({out_type.name})")
        return np.asarray(value, dtype=out_type.as_numpy_dtype)
    return kernel


registry.register_op("SerializeTensor", _bind_serialize, fresh=True)
registry.register_op("ParseTensor", _bind_parse, fresh=True)
registry.not_differentiable("SerializeTensor")
registry.not_differentiable("ParseTensor")


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """A scalar string: `tensor` as a serialized TensorProto (TF's bytes)."""
    value = convert_to_tensor(tensor)
    return make_op("SerializeTensor", [value], dtypes.string, [], name or "SerializeTensor", {"T": value.dtype})


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor a serialized TensorProto holds; InvalidArgumentError when its dtype is not `out_type`."""
    value = convert_to_tensor(serialized, dtype=dtypes.string)
    out_type = dtypes.as_dtype(out_type)
    return make_op("ParseTensor", [value], out_type, None, name or "ParseTensor", {"out_type": out_type})
