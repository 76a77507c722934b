"""numpy arrays as TensorFlow's `DataType`, `TensorShapeProto` and `TensorProto`, both ways.

Writing is compact as TF's is: an array of one repeated value (a splat, e.g. zeros) stores that
value once in its typed field (`float_val: 0` with the shape), any other numeric array is raw
little-endian `tensor_content`, strings go to `string_val`. Reading (`make_ndarray`) accepts
every form TF writes and checks each length against the shape before allocating anything.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tftk.proto.tensorflow import DataType, TensorProto, TensorShapeProto

__all__ = ["datatype_enum", "numpy_dtype", "shape_proto", "shape_dims", "make_tensor_proto",
           "append_typed_values", "make_ndarray", "TensorProtoError"]

_TF_NAMES = {"float16": "DT_HALF", "float32": "DT_FLOAT", "float64": "DT_DOUBLE"}

# DataType number -> (numpy dtype, the TensorProto field TF's typed values use for it, or None).
_BY_ENUM: dict[int, tuple[np.dtype, str | None]] = {
    1: (np.dtype("<f4"), "float_val"), 2: (np.dtype("<f8"), "double_val"),
    3: (np.dtype("<i4"), "int_val"), 4: (np.dtype("u1"), "int_val"), 5: (np.dtype("<i2"), "int_val"),
    6: (np.dtype("i1"), "int_val"), 7: (np.dtype(object), "string_val"),
    8: (np.dtype("<c8"), "scomplex_val"), 9: (np.dtype("<i8"), "int64_val"),
    10: (np.dtype("?"), "bool_val"), 11: (np.dtype("i1"), "int_val"), 12: (np.dtype("u1"), "int_val"),
    13: (np.dtype("<i4"), "int_val"), 15: (np.dtype("<i2"), "int_val"), 16: (np.dtype("<u2"), "int_val"),
    17: (np.dtype("<u2"), "int_val"), 18: (np.dtype("<c16"), "dcomplex_val"),
    19: (np.dtype("<f2"), "half_val"), 22: (np.dtype("<u4"), None), 23: (np.dtype("<u8"), None),
}
_MAX_ELEMENTS = 1 << 40  # a shape claiming more elements than this is corrupt, not a tensor


class TensorProtoError(ValueError):
    """A TensorProto whose dtype, shape and payload do not agree."""


def datatype_enum(dtype) -> int:
    """TF's DataType number for a numpy dtype (strings and objects → DT_STRING); 0 if it has none."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OSU":
        return DataType.Value("DT_STRING")
    name = _TF_NAMES.get(dtype.name, "DT_" + dtype.name.upper())
    return DataType.Value(name) if name in DataType.keys() else {"uint32": 22, "uint64": 23}.get(dtype.name, 0)


def numpy_dtype(enum: int) -> np.dtype:
    """The numpy dtype tftk stores a TF DataType in (object for DT_STRING)."""
    if enum not in _BY_ENUM:
        name = DataType.Name(enum) if enum in DataType.values() else str(enum)
        raise TensorProtoError(f"unsupported tensor dtype {name}")
    return _BY_ENUM[enum][0]


def shape_proto(dims: Sequence[int | None] | None) -> TensorShapeProto:
    """A TensorShapeProto: None dims become -1; `dims=None` means unknown rank."""
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in dims])


def shape_dims(proto: TensorShapeProto) -> list[int | None] | None:
    """The dims of a TensorShapeProto (-1 → None), or None for an unknown rank."""
    if proto.unknown_rank:
        return None
    return [None if d.size == -1 else int(d.size) for d in proto.dim]


def make_tensor_proto(value, dtype_enum: int | None = None) -> TensorProto:
    """A TensorProto holding `value`, compact for a repeated value (see the module docstring).

    `dtype_enum` overrides the DataType (e.g. qint8 stored as int8). Raises ValueError for a
    dtype TensorFlow has no DataType for (e.g. arbitrary Python objects).
    """
    array = np.asarray(value)
    enum = dtype_enum or datatype_enum(array.dtype)
    strings = array.dtype.kind in "OSU"
    if strings and not all(isinstance(s, (str, bytes, np.str_, np.bytes_)) for s in array.ravel()):
        raise ValueError(f"cannot store an array of {array.dtype} objects in a TensorProto")
    if enum == 0:
        raise ValueError(f"TensorFlow has no DataType for numpy {array.dtype}")
    proto = TensorProto(dtype=enum, tensor_shape=shape_proto(array.shape))
    if strings:
        append_typed_values(proto, array)
        return proto
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    field = _BY_ENUM.get(enum, (None, None))[1]
    if array.size > 1 and field is not None and _is_splat(little):
        _append_values(proto, field, little.reshape(-1)[:1])
    elif array.size:
        proto.tensor_content = little.tobytes()
    return proto


def _is_splat(array: np.ndarray) -> bool:
    """True when every element has the same bytes as the first (so NaN splats count too)."""
    rows = array.reshape(-1).view(np.uint8).reshape(array.size, array.dtype.itemsize)
    return bool((rows == rows[0]).all())


def append_typed_values(proto: TensorProto, values: np.ndarray) -> None:
    """Append `values` to the typed field of `proto`'s dtype (`string_val` for strings), not tensor_content."""
    if values.dtype.kind in "OSU":
        proto.string_val.extend(s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in values.ravel())
        return
    field = _BY_ENUM.get(proto.dtype, (None, None))[1]
    if field is None:
        raise ValueError(f"TensorProto has no typed field for {values.dtype}")
    _append_values(proto, field, np.ascontiguousarray(values.ravel(), dtype=values.dtype.newbyteorder("<")))


def _append_values(proto: TensorProto, field: str, values: np.ndarray) -> None:
    if field == "half_val":
        proto.half_val.extend(values.view(np.uint16).tolist())
    elif field in ("scomplex_val", "dcomplex_val"):
        getattr(proto, field).extend(np.column_stack([values.real, values.imag]).ravel().tolist())
    else:
        getattr(proto, field).extend(values.tolist())


def make_ndarray(proto: TensorProto) -> np.ndarray:
    """The numpy array a TensorProto holds (TF's `tf.make_ndarray`), validated against its shape.

    Typed values shorter than the shape repeat their last value, as TF reads them. Raises
    TensorProtoError for a payload whose length disagrees with the shape or an unknown dtype.
    """
    dtype = numpy_dtype(proto.dtype)
    field = _BY_ENUM[proto.dtype][1]
    dims = shape_dims(proto.tensor_shape)
    if dims is None or any(d is None or d < 0 for d in dims):
        raise TensorProtoError(f"a constant tensor needs a fully known shape, got {dims}")
    count = 1
    for d in dims:
        count *= d
        if count > _MAX_ELEMENTS:
            raise TensorProtoError(f"tensor shape {dims} is too large")
    if proto.tensor_content and dtype.kind != "O":
        if len(proto.tensor_content) != count * dtype.itemsize:
            raise TensorProtoError(f"tensor_content holds {len(proto.tensor_content)} bytes, shape "
                                   f"{dims} of {DataType.Name(proto.dtype)} needs {count * dtype.itemsize}")
        return np.frombuffer(proto.tensor_content, dtype=dtype).reshape(dims).astype(dtype.newbyteorder("="))
    values = _typed_values(proto, field, dtype)
    if len(values) > count:
        raise TensorProtoError(f"{len(values)} values for a tensor of shape {dims}")
    if len(values) == count:
        return values.reshape(dims)
    out = np.empty(count, dtype=dtype.newbyteorder("="))
    out[:len(values)] = values
    out[len(values):] = values[-1] if len(values) else (b"" if dtype.kind == "O" else 0)
    return out.reshape(dims)


def _typed_values(proto: TensorProto, field: str | None, dtype: np.dtype) -> np.ndarray:
    if field is None:
        return np.zeros(0, dtype)
    raw = getattr(proto, field)
    if field == "string_val":
        values = np.empty(len(raw), object)
        values[:] = list(raw)
        return values
    if field == "half_val":
        return np.asarray(raw, np.uint16).view(np.float16)
    if field in ("scomplex_val", "dcomplex_val"):
        if len(raw) % 2:
            raise TensorProtoError(f"{field} holds {len(raw)} numbers, not (real, imaginary) pairs")
        pairs = np.asarray(raw, np.float64).reshape(-1, 2)
        return (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype)
    return np.asarray(raw).astype(dtype.newbyteorder("="))
