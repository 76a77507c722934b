"""tf.signal.fftnd / ifftnd / rfftnd / irfftnd: FFTs over any set of axes, with TF 2.x's norm argument.

TF 2.21's CPU build registers no kernel for these ops (running one raises NotFoundError), so real
TensorFlow cannot serve as the oracle here; the semantics are numpy.fft's n-D transforms, which TF's
documentation describes: `axes` defaults to every axis, `fft_length` to the input's length on each
of `axes` (for irfftnd the last one is 2 * (bins - 1)), a transformed axis is cropped or zero-padded
to its length, and `norm` ("backward", "forward", "ortho") scales as TF's wrappers do, by the
product of the lengths. Lengths and axes must be known when the graph is built. TensorFlow defines
no gradient for these ops; tftk declares them not differentiable (tf.gradients gives None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op

__all__ = ["fftnd", "ifftnd", "irfftnd", "rfftnd"]

_NORMS = ("backward", "forward", "ortho")


def _bind(op, ctx):
    lengths, axes = tuple(op.get_attr("fft_length")), tuple(op.get_attr("axes"))
    out = op.outputs[0].dtype.as_numpy_dtype
    transform = {"FFTND": np.fft.fftn, "IFFTND": np.fft.ifftn, "RFFTND": np.fft.rfftn,
                 "IRFFTND": np.fft.irfftn}[op.type]
    return lambda x: transform(x, s=lengths, axes=axes).astype(out, copy=False)


for _op_type in ("FFTND", "IFFTND", "RFFTND", "IRFFTND"):
    registry.register_op(_op_type, _bind)
registry.not_differentiable("FFTND", "IFFTND", "RFFTND", "IRFFTND")  # TF registers no gradient for them


def _static_ints(value: Any, what: str, op_type: str) -> list[int]:
    static = constant_value(convert_to_tensor(value, dtype=dtypes.int32)) if isinstance(value, Tensor) else value
    if static is None:
        raise ValueError(f"{op_type}: {what} must be known when the graph is built (a list of ints)")
    return [int(v) for v in np.atleast_1d(np.asarray(static))]


def _plan(x: Tensor, fft_length: Any, axes: Any, norm: str | None, op_type: str,
          inverse_real: bool) -> tuple[list[int], list[int], float]:
    """(lengths per transformed axis, axes made non-negative, input scale for `norm`)."""
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is None:
        raise ValueError(f"{op_type}: the input rank must be known, got {x.shape}")
    rank = len(dims)
    axes = list(range(rank)) if axes is None else _static_ints(axes, "axes", op_type)
    if not axes or rank < len(axes) or any(not -rank <= a < rank for a in axes):
        raise ValueError(f"{op_type}: axes {axes} do not fit an input of rank {rank}")
    if fft_length is None:
        lengths = [dims[a] for a in axes]
        if None in lengths:
            raise ValueError(f"{op_type}: give fft_length when the transformed dimensions are unknown ({x.shape})")
        if inverse_real:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    else:
        lengths = _static_ints(fft_length, "fft_length", op_type)
    if len(lengths) != len(axes) or any(n < 0 for n in lengths):
        raise ValueError(f"{op_type}: fft_length {lengths} must give one length >= 0 for each of axes {axes}")
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"{op_type}: norm must be one of {_NORMS}, got {norm!r}")
    n = float(np.prod(lengths)) or 1.0
    factor = {"backward": 1.0, "forward": n, "ortho": float(np.sqrt(n))}[norm]
    # TF scales a forward transform's input down by the factor and an inverse transform's input up.
    scale = factor if op_type in ("IFFTND", "IRFFTND") else 1.0 / factor
    return lengths, [a % rank for a in axes], scale


def _transform(op_type: str, x: Tensor, fft_length: Any, axes: Any, norm: str | None, out: dtypes.DType,
               name: str | None) -> Tensor:
    lengths, axes, scale = _plan(x, fft_length, axes, norm, op_type, op_type == "IRFFTND")
    if scale != 1.0:
        x = math_ops.multiply(x, convert_to_tensor(np.asarray(scale, x.dtype.as_numpy_dtype)))
    shape = x.shape.as_list()
    for axis, n in zip(axes, lengths):
        shape[axis] = n
    if op_type == "RFFTND":
        shape[axes[-1]] = lengths[-1] // 2 + 1
    return make_op(op_type, [x], out, TensorShape(shape), name, {"fft_length": lengths, "axes": axes})


def _complex(input_tensor: Any, op_type: str) -> Tensor:
    x = convert_to_tensor(input_tensor)
    if not x.dtype.is_complex:
        raise ValueError(f"{op_type}: input must be complex64 or complex128, got {x.dtype.name}")
    return x


def fftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
          name: str | None = None) -> Tensor:
    """N-D discrete Fourier transform of a complex tensor over `axes` (default: all)."""
    x = _complex(input_tensor, "FFTND")
    return _transform("FFTND", x, fft_length, axes, norm, x.dtype, name)


def ifftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
           name: str | None = None) -> Tensor:
    """N-D inverse discrete Fourier transform of a complex tensor over `axes` (default: all)."""
    x = _complex(input_tensor, "IFFTND")
    return _transform("IFFTND", x, fft_length, axes, norm, x.dtype, name)


def rfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
           name: str | None = None) -> Tensor:
    """N-D DFT of a real tensor: the last of `axes` keeps fft_length // 2 + 1 bins."""
    x = convert_to_tensor(input_tensor)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"RFFTND: input must be float32 or float64, got {x.dtype.name}")
    out = dtypes.complex64 if x.dtype is dtypes.float32 else dtypes.complex128
    return _transform("RFFTND", x, fft_length, axes, norm, out, name)


def irfftnd(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: str | None = None,
            name: str | None = None) -> Tensor:
    """The real tensor whose rfftnd is `input_tensor` (last axis default length 2 * (bins - 1))."""
    x = convert_to_tensor(input_tensor)
    if not x.dtype.is_complex:
        raise ValueError(f"IRFFTND: input must be complex64 or complex128, got {x.dtype.name}")
    return _transform("IRFFTND", x, fft_length, axes, norm, x.dtype.real_dtype, name)
