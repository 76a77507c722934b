"""`tf.make_tensor_proto`: Python values as a TensorProto by TF's conversion rules (what TF Serving's
clients call to build a PredictRequest's inputs).

TF's rules: a numpy array keeps its dtype (cast to `dtype` when given); Python numbers and lists take
`dtype`, else float32 for floats and int32 for ints that fit; `shape` may ask for more elements than
given (the last value repeats when read, as `tf.make_ndarray` reads it) but never fewer;
`verify_shape` requires the exact shape and `allow_broadcast` a scalar or one value.
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes
from tftk.proto.tensorflow import TensorProto
from tftk.summary import tensor_proto

__all__ = ["make_tensor_proto"]


def _as_array(values: Any, dtype: dtypes.DType | None) -> np.ndarray:
    if isinstance(values, (np.ndarray, np.generic)):
        return values.astype(dtype.as_numpy_dtype) if dtype is not None else np.asarray(values)
    if values is None:
        raise ValueError("None values not supported.")
    if dtype is not None:
        _check_elements(values, dtype)
    array = np.array(values, dtype=dtype.as_numpy_dtype if dtype is not None else None)
    if array.dtype == object and dtype is None and not all(isinstance(v, (str, bytes)) for v in array.ravel()):
        raise ValueError(f"Argument must be a dense tensor: {values!r}")
    if dtype is None and array.dtype == np.float64:
        return array.astype(np.float32)  # Python's floats are float32 tensors in TF
    if dtype is None and array.dtype == np.int64:
        narrow = array.astype(np.int32)
        return narrow if np.array_equal(narrow, array) else array
    return array


def _check_elements(values: Any, dtype: dtypes.DType) -> None:
    """TF's check that each Python element can be `dtype`: numbers for floats, whole numbers for
    integers, bools for bool, str/bytes for strings (a TypeError naming the first that cannot)."""
    if isinstance(values, (list, tuple)):
        for item in values:
            _check_elements(item, dtype)
        return
    if isinstance(values, np.generic):
        values = values.item()
    if dtype is dtypes.string:
        ok = isinstance(values, (str, bytes))
    elif dtype is dtypes.bool:
        ok = isinstance(values, bool)
    elif dtype.is_integer:
        ok = isinstance(values, numbers.Integral)
    else:
        ok = isinstance(values, numbers.Number) and not isinstance(values, str)
    if not ok:
        raise TypeError(f"Expected {dtype.name}, but got {values} of type '{type(values).__name__}'.")


def make_tensor_proto(values: Any, dtype: Any = None, shape: Sequence[int] | None = None, verify_shape: bool = False,
                      allow_broadcast: bool = False) -> TensorProto:
    """A TensorProto of `values` (returned as is when it already is one); see the module docstring."""
    if allow_broadcast and verify_shape:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    if isinstance(values, TensorProto):
        return values
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    array = _as_array(values, dtype)
    if array.dtype.kind in "SU":
        array = array.astype(object)
    actual = dtypes.as_dtype(array.dtype)
    if dtype is not None and actual.base_dtype is not dtype.base_dtype:
        raise TypeError(f"Incompatible types: {dtype.name} vs. {array.dtype}. Value is {values!r}")
    if shape is None:
        return tensor_proto.make_tensor_proto(array)
    dims = [int(d) for d in shape]
    size = int(np.prod(dims, dtype=np.int64))
    if allow_broadcast:
        if array.shape not in ((1,), ()) and array.size != size:
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, got {array.shape}.")
    else:
        if verify_shape and array.shape != tuple(dims):
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, got {array.shape}.")
        if array.size > size:
            raise ValueError(f"Too many elements provided. Needed at most {size}, but received {array.size}")
    if array.size == size:
        return tensor_proto.make_tensor_proto(array.reshape(dims))
    proto = TensorProto(dtype=tensor_proto.datatype_enum(array.dtype), tensor_shape=tensor_proto.shape_proto(dims))
    tensor_proto.append_typed_values(proto, array.reshape(-1))  # fewer than the shape: read back padded
    return proto
