"""`tf.py_func` / `tf.numpy_function`: a Python function on numpy arrays as a graph op.

The function runs when the op runs (once per Session.run that needs it, or once per element
inside a tf.data function). Output shapes are unknown until `set_shape`. Exceptions become TF's
error classes as TF maps them (ValueError/TypeError -> InvalidArgumentError, StopIteration and
IndexError -> OutOfRangeError, others -> UnknownError), naming the op.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.op_builder import make_multi_op

__all__ = ["py_func", "numpy_function"]

_ERRORS = ((StopIteration, errors.OutOfRangeError), (IndexError, errors.OutOfRangeError),
           (ValueError, errors.InvalidArgumentError), (TypeError, errors.InvalidArgumentError),
           (NotImplementedError, errors.UnimplementedError), (MemoryError, errors.ResourceExhaustedError))


def _bind_py_func(op: Any, ctx: Any):
    func: Callable = op.get_attr("func")
    out_types = [t.dtype for t in op.outputs]
    single = op.get_attr("single")

    def convert(value: Any, dtype: dtypes.DType, k: int) -> np.ndarray:
        array = np.asarray(value, dtype=object if dtype is dtypes.string else None)
        if dtype is not dtypes.string and array.dtype != dtype.as_numpy_dtype:
            if array.dtype.kind in "SUO" or (array.dtype.kind == "f" and not dtype.is_floating
                                             and not dtype.is_complex):
                raise errors.InvalidArgumentError(
                    None, op, f"{op.name}: output {k} of the Python function has dtype {array.dtype}, "
                    f"expected {dtype.name} (declared in Tout)")
            array = array.astype(dtype.as_numpy_dtype)
        return array

    def kernel(*inputs):
        try:
            result = func(*inputs)
        except errors.OpError:
            raise
        except Exception as exc:
            cls = next((c for base, c in _ERRORS if isinstance(exc, base)), errors.UnknownError)
            raise cls(None, op, f"{op.name}: the Python function raised {type(exc).__name__}: {exc}") from exc
        values = [result] if single else list(result if isinstance(result, (list, tuple)) else [result])
        if len(values) != len(out_types):
            raise errors.InvalidArgumentError(None, op, f"{op.name}: the Python function returned "
                                              f"{len(values)} values, Tout declares {len(out_types)}")
        arrays = [convert(v, dt, k) for k, (v, dt) in enumerate(zip(values, out_types))]
        if not arrays:
            return None
        return arrays[0] if len(arrays) == 1 else tuple(arrays)

    return kernel


registry.register_op("PyFunc", _bind_py_func, stateful=True)
registry.register_op("PyFuncStateless", _bind_py_func)
registry.not_differentiable("PyFunc", "PyFuncStateless")


def py_func(func: Callable, inp: Sequence[Any], Tout: Any, stateful: bool = True,
            name: str | None = None) -> Any:
    """Run `func(*numpy_inputs)` as an op; returns a Tensor (Tout a dtype) or a list of them.

    Args:
      func: takes numpy arrays (strings as object arrays of bytes), returns array-likes.
      inp: the input tensors.
      Tout: a dtype, or a list/tuple of dtypes (then a list is returned).
      stateful: False lets the graph treat equal calls as the same value (TF's PyFuncStateless).
    """
    if not callable(func):
        raise TypeError(f"py_func: func must be callable, got {type(func).__name__}")
    single = not isinstance(Tout, (list, tuple))
    types = [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)]
    inputs = [convert_to_tensor(x) for x in inp]
    with name_scope(name, "PyFunc", inputs):
        op = make_multi_op("PyFunc" if stateful else "PyFuncStateless", inputs,
                           [(t, TensorShape(None)) for t in types], "PyFunc",
                           {"func": func, "single": single, "Tout": types})
    if single:
        return op.outputs[0]
    return list(op.outputs) if types else op


def numpy_function(func: Callable, inp: Sequence[Any], Tout: Any, name: str | None = None) -> Any:
    """TF 1.14+'s name for py_func (always stateful)."""
    return py_func(func, inp, Tout, stateful=True, name=name)
