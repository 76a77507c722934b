"""TF1 dtypes (`tf.float32`, ...) as thin wrappers over numpy dtypes, with TF's DataType numbers."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DType", "as_dtype", "float16", "float32", "float64", "half", "double", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "string", "complex64", "complex128", "qint8",
    "quint8", "qint16", "quint16", "qint32",
]


class DType:
    """A tensor element type: a name, a numpy dtype and TF's DataType enum number."""

    __slots__ = ("name", "as_numpy_dtype", "as_datatype_enum", "_np")

    def __init__(self, name: str, np_type: Any, enum: int):
        self.name = name
        self.as_numpy_dtype = np_type
        self.as_datatype_enum = enum
        self._np = np.dtype(np_type)

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu" and not self.is_quantized

    @property
    def is_quantized(self) -> bool:
        return self.name.startswith("q")

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "iufc"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other: Any) -> bool:
        return self is as_dtype(other)

    def __eq__(self, other: Any) -> bool:
        if other is None:
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self.as_datatype_enum

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = half = DType("float16", np.float16, 19)
float32 = DType("float32", np.float32, 1)
float64 = double = DType("float64", np.float64, 2)
int8 = DType("int8", np.int8, 6)
int16 = DType("int16", np.int16, 5)
int32 = DType("int32", np.int32, 3)
int64 = DType("int64", np.int64, 9)
uint8 = DType("uint8", np.uint8, 4)
uint16 = DType("uint16", np.uint16, 17)
uint32 = DType("uint32", np.uint32, 22)
uint64 = DType("uint64", np.uint64, 23)
bool = DType("bool", np.bool_, 10)  # noqa: A001 - TF's public name
string = DType("string", np.object_, 7)
# TF's opaque container type (a TensorList): the loop accumulators of TF's functional While.
variant = DType("variant", np.object_, 21)
complex64 = DType("complex64", np.complex64, 8)
complex128 = DType("complex128", np.complex128, 18)

# Quantized types (tf.quantize's outputs) share numpy storage with the plain integers but are
# distinct DTypes; numpy dtypes therefore always map back to the plain ones.
qint8 = DType("qint8", np.int8, 11)
quint8 = DType("quint8", np.uint8, 12)
qint32 = DType("qint32", np.int32, 13)
qint16 = DType("qint16", np.int16, 15)
quint16 = DType("quint16", np.uint16, 16)

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, string,
        complex64, complex128)
_QUANTIZED = (qint8, quint8, qint16, quint16, qint32)
_BY_NAME = {d.name: d for d in _ALL + _QUANTIZED + (variant,)} | {"half": float16, "float": float32, "double": float64}
_BY_NUMPY = {d._np: d for d in _ALL if d is not string}
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL + _QUANTIZED + (variant,)}


def as_dtype(value: Any) -> DType:
    """Convert a DType, a name ('float32', or TF's 'float'/'double'/'half'), a numpy dtype or
    scalar type, or a Python type (float, int, bool, complex, str, bytes, object) to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError(f"Cannot convert {value!r} to a tftk dtype; known names: {sorted(_BY_NAME)}")
    if isinstance(value, int) and not isinstance(value, builtins_bool):
        if value in _BY_ENUM:  # TF's DataType enum number (tf.float32.as_datatype_enum == 1)
            return _BY_ENUM[value]
        raise TypeError(f"Cannot convert {value!r} to a tftk dtype: no DataType has that number")
    if value is float:
        return float32
    if value is int:
        return int32
    if value is builtins_bool:
        return bool
    if value in (bytes, str_type):
        return string
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to a tftk dtype") from None
    if npd.kind in "SUO":
        return string
    if npd in _BY_NUMPY:
        return _BY_NUMPY[npd]
    raise TypeError(f"Unsupported dtype {npd}")


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
str_type = _builtins.str
