"""`constant`: a Const node holding a numpy array (framework level, as in TF: converting a Python
value to a tensor needs it, and the framework must not import the ops layer to do so)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, get_default_graph
from tftk.framework.tensor_shape import as_shape

__all__ = ["constant", "numpy_value"]


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const",
             verify_shape: bool = False, _strict: bool = False) -> Tensor:
    """A tensor with a fixed value; `shape` broadcasts a scalar or reshapes a matching size."""
    if value is None:
        raise ValueError("None values not supported.")  # TF's message (not a string constant)
    want = dtypes.as_dtype(dtype) if dtype is not None else None
    array = numpy_value(value, want)
    if want is None:
        want = dtypes.as_dtype(array.dtype)
    if want is dtypes.string:
        array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(array) \
            if array.size else array
    if shape is not None:
        target = tuple(as_shape(shape).as_list())
        if verify_shape and array.shape != target:
            raise TypeError(f"Expected Tensor's shape: {target}, got {array.shape}.")
        if array.size == 1:
            array = np.full(target, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(target)):
            array = array.reshape(target)
        else:
            raise ValueError(f"Too many elements provided. Needed at most {int(np.prod(target))}, "
                             f"but received {array.size}")
    array.setflags(write=False)  # constants are shared by every run: kernels must not write them
    op = get_default_graph().create_op("Const", [], [(want, array.shape)], name, {"value": array, "dtype": want})
    return op.outputs[0]


def numpy_value(value: Any, dtype: dtypes.DType | None) -> np.ndarray:
    """A numpy array for a Python/numpy constant, with TF1's default dtypes (float32, int32)."""
    if dtype is not None:
        npd = dtype.as_numpy_dtype
        if dtype is dtypes.string:
            arr = np.array(value, dtype=object)
            for item in arr.reshape(-1):
                if not isinstance(item, (str, bytes)):
                    raise TypeError(f"Expected string, got {item!r} of type '{type(item).__name__}' instead.")
            return arr
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and dtype.is_integer and not np.all(np.mod(arr, 1) == 0):
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}' instead.")
        if arr.dtype.kind in "SUO" and dtype is not dtypes.string:
            raise TypeError(f"Expected {dtype.name}, got {value!r} of type '{type(value).__name__}' instead.")
        return np.asarray(value, dtype=npd)
    arr = np.asarray(value)
    if arr.dtype.kind in "SU" or arr.dtype.kind == "O":
        return np.array(value, dtype=object)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return arr
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return arr
        return arr.astype(np.int32)
    return arr
