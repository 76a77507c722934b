"""`constant`: a Const node holding a numpy array (framework level, as in TF: converting a Python
value to a tensor needs it, and the framework must not import the ops layer to do so)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, get_default_graph, numpy_value
from tftk.framework.tensor_shape import as_shape

__all__ = ["constant"]


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const",
             verify_shape: bool = False, _strict: bool = False) -> Tensor:
    """A tensor with a fixed value; `shape` broadcasts a scalar or reshapes a matching size."""
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
