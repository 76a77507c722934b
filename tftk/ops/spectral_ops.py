"""Complex numbers and the discrete Fourier transform: real, imag, complex, fft, ifft."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import array_ops, math_ops
from tftk.ops.op_builder import binary_inputs, broadcast_shape, make_op

__all__ = ["fft", "ifft", "real", "imag", "complex"]



# ---- FFT and complex parts ---------------------------------------------------------------------

def _complex_input(x: Any, op_type: str) -> Tensor:
    t = convert_to_tensor(x)
    if not t.dtype.is_complex:
        raise TypeError(f"{op_type}: input must be complex64 or complex128, got {t.dtype.name}")
    if t.shape.ndims == 0:
        raise ValueError(f"{op_type}: input must have rank >= 1")
    return t


registry.register_op("FFT", lambda op, ctx: lambda x: np.fft.fft(x).astype(x.dtype, copy=False))
registry.register_op("IFFT", lambda op, ctx: lambda x: np.fft.ifft(x).astype(x.dtype, copy=False))


def fft(input: Any, name: str | None = None) -> Tensor:
    """Discrete Fourier transform over the innermost dimension (complex in, complex out)."""
    x = _complex_input(input, "FFT")
    return make_op("FFT", [x], x.dtype, x.shape, name)


def ifft(input: Any, name: str | None = None) -> Tensor:
    """Inverse discrete Fourier transform over the innermost dimension."""
    x = _complex_input(input, "IFFT")
    return make_op("IFFT", [x], x.dtype, x.shape, name)


def _innermost_size(grad: Tensor) -> Tensor:
    n = array_ops.shape(grad)[-1]
    return complex(math_ops.cast(n, grad.dtype.real_dtype), np.zeros((), grad.dtype.real_dtype.as_numpy_dtype))


@registry.register_gradient("FFT")
def _fft_grad(op, grad):
    return [math_ops.multiply(ifft(grad), _innermost_size(grad))]


@registry.register_gradient("IFFT")
def _ifft_grad(op, grad):
    return [math_ops.realdiv(fft(grad), _innermost_size(grad))]


registry.register_op("Real", lambda op, ctx: np.real)
registry.register_op("Imag", lambda op, ctx: np.imag)
registry.register_op("Complex", lambda op, ctx: lambda re, im: re + 1j * im
                     if re.dtype == np.float64 else (re + 1j * im).astype(np.complex64))


def real(input: Any, name: str | None = None) -> Tensor:
    """The real part of a complex tensor (a real tensor passes through)."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        return x
    return make_op("Real", [x], x.dtype.real_dtype, x.shape, name)


def imag(input: Any, name: str | None = None) -> Tensor:
    """The imaginary part of a complex tensor."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        raise TypeError(f"Imag: input must be complex, got {x.dtype.name}")
    return make_op("Imag", [x], x.dtype.real_dtype, x.shape, name)


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """real + i * imag from two float32 (→ complex64) or float64 (→ complex128) tensors."""
    re, im = binary_inputs(real, imag, "Complex")
    if re.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"Complex: inputs must be float32 or float64, got {re.dtype.name}")
    out = dtypes.complex64 if re.dtype is dtypes.float32 else dtypes.complex128
    return make_op("Complex", [re, im], out, broadcast_shape(re.shape, im.shape, name or "Complex"), name)


@registry.register_gradient("Real")
def _real_grad(op, grad):
    return [complex(grad, math_ops.multiply(grad, 0.0))]


@registry.register_gradient("Imag")
def _imag_grad(op, grad):
    return [complex(math_ops.multiply(grad, 0.0), grad)]


@registry.register_gradient("Complex")
def _complex_grad(op, grad):
    re, im = op.inputs
    return [math_ops.unbroadcast(real(grad), re), math_ops.unbroadcast(imag(grad), im)]

