"""Complex numbers and the discrete Fourier transform: real, imag, complex, fft/ifft (1-3 D), rfft, irfft."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, reduction_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import binary_inputs, broadcast_shape, make_op

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "real", "imag", "complex"]



# ---- FFT and complex parts ---------------------------------------------------------------------

def _complex_input(x: Any, op_type: str) -> Tensor:
    t = convert_to_tensor(x)
    if not t.dtype.is_complex:
        raise TypeError(f"{op_type}: input must be complex64 or complex128, got {t.dtype.name}")
    if t.shape.ndims == 0:
        raise ValueError(f"{op_type}: input must have rank >= 1")
    return t


_FFT_RANK = {"FFT": 1, "IFFT": 1, "FFT2D": 2, "IFFT2D": 2, "FFT3D": 3, "IFFT3D": 3}


def _bind_fft(op, ctx):
    k = _FFT_RANK[op.type]
    transform = np.fft.ifftn if op.type.startswith("I") else np.fft.fftn
    return lambda x: transform(x, axes=tuple(range(-k, 0))).astype(x.dtype, copy=False)


for _op_type in _FFT_RANK:
    registry.register_op(_op_type, _bind_fft)


def _fft_op(op_type: str, input: Any, name: str | None) -> Tensor:
    x = _complex_input(input, op_type)
    k = _FFT_RANK[op_type]
    if x.shape.ndims is not None and x.shape.ndims < k:
        raise ValueError(f"{op_type}: input must have rank >= {k}, got shape {x.shape}")
    return make_op(op_type, [x], x.dtype, x.shape, name)


def fft(input: Any, name: str | None = None) -> Tensor:
    """Discrete Fourier transform over the innermost dimension (complex in, complex out)."""
    return _fft_op("FFT", input, name)


def ifft(input: Any, name: str | None = None) -> Tensor:
    """Inverse discrete Fourier transform over the innermost dimension."""
    return _fft_op("IFFT", input, name)


def fft2d(input: Any, name: str | None = None) -> Tensor:
    """2-D discrete Fourier transform over the two innermost dimensions."""
    return _fft_op("FFT2D", input, name)


def ifft2d(input: Any, name: str | None = None) -> Tensor:
    """Inverse 2-D discrete Fourier transform over the two innermost dimensions."""
    return _fft_op("IFFT2D", input, name)


def fft3d(input: Any, name: str | None = None) -> Tensor:
    """3-D discrete Fourier transform over the three innermost dimensions."""
    return _fft_op("FFT3D", input, name)


def ifft3d(input: Any, name: str | None = None) -> Tensor:
    """Inverse 3-D discrete Fourier transform over the three innermost dimensions."""
    return _fft_op("IFFT3D", input, name)


def _transformed_size(grad: Tensor, k: int) -> Tensor:
    """The number of points of a k-D transform, as a complex scalar."""
    n = reduction_ops.reduce_prod(array_ops.shape(grad)[-k:])
    return complex(math_ops.cast(n, grad.dtype.real_dtype), np.zeros((), grad.dtype.real_dtype.as_numpy_dtype))


def _fft_grad(op, grad):
    """The adjoint of a DFT is N times the inverse DFT (and the other way round)."""
    k = _FFT_RANK[op.type]
    inverse = op.type.startswith("I")
    partner = (op.type[1:] if inverse else "I" + op.type)
    transformed = make_op(partner, [grad], grad.dtype, grad.shape)
    scale = _transformed_size(grad, k)
    return [math_ops.realdiv(transformed, scale) if inverse else math_ops.multiply(transformed, scale)]


for _op_type in _FFT_RANK:
    registry.register_gradient(_op_type)(_fft_grad)


# ---- real-input transforms --------------------------------------------------------------------------

def _fit(x: np.ndarray, n: int) -> np.ndarray:
    """x cropped or zero-padded to n entries along its last axis."""
    if x.shape[-1] >= n:
        return x[..., :n]
    return np.concatenate([x, np.zeros(x.shape[:-1] + (n - x.shape[-1],), x.dtype)], axis=-1)


def _bind_rfft(op, ctx):
    out = op.outputs[0].dtype.as_numpy_dtype
    return lambda x, n: np.fft.rfft(_fit(x, int(n[0])), axis=-1).astype(out)


def _bind_irfft(op, ctx):
    out = op.outputs[0].dtype.as_numpy_dtype
    return lambda y, n: np.fft.irfft(_fit(y, int(n[0]) // 2 + 1), int(n[0]), axis=-1).astype(out)


def _rfft_grad_kernel(x, n, grad):
    """Re(A^H g) for y = A x and g = dL/dRe(y) + i dL/dIm(y): N * ifft of g zero-padded to N, cropped
    or padded back to x's length."""
    n = int(n[0])
    full = np.fft.ifft(_fit(grad, n), axis=-1) * n
    return _fit(np.real(full), x.shape[-1]).astype(x.dtype)


def _irfft_grad_kernel(y, n, grad):
    """rfft(g) * c / N, c = 2 for the bins that stand for two (conjugate) bins of the full spectrum."""
    n = int(n[0])
    bins = n // 2 + 1
    weights = np.full(bins, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return _fit(np.fft.rfft(grad, axis=-1) * weights / n, y.shape[-1]).astype(y.dtype)


registry.register_op("RFFT", _bind_rfft)
registry.register_op("IRFFT", _bind_irfft)
registry.register_op("RFFTGrad", lambda op, ctx: _rfft_grad_kernel)
registry.register_op("IRFFTGrad", lambda op, ctx: _irfft_grad_kernel)
registry.not_differentiable("RFFTGrad", "IRFFTGrad")


@registry.register_gradient("RFFT")
def _rfft_grad(op, grad):
    x, n = op.inputs
    return [make_op("RFFTGrad", [x, n, grad], x.dtype, x.shape), None]


@registry.register_gradient("IRFFT")
def _irfft_grad(op, grad):
    y, n = op.inputs
    return [make_op("IRFFTGrad", [y, n, grad], y.dtype, y.shape), None]


def _fft_length(x: Tensor, fft_length: Any, default_from_last: Any) -> tuple[Tensor, int | None]:
    if fft_length is None:
        last = x.shape.as_list()[-1] if x.shape.ndims else None
        if last is None:
            raise ValueError("rfft/irfft: fft_length is needed when the innermost dimension is unknown")
        fft_length = [default_from_last(last)]
    n = convert_to_tensor(fft_length, dtype=dtypes.int32)
    static = constant_value(n)
    return n, None if static is None else int(np.atleast_1d(static)[0])


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """DFT of a real signal over its innermost dimension: fft_length // 2 + 1 complex bins."""
    x = convert_to_tensor(input_tensor)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"RFFT: input must be float32 or float64, got {x.dtype.name}")
    n, static = _fft_length(x, fft_length, lambda last: last)
    out = dtypes.complex64 if x.dtype is dtypes.float32 else dtypes.complex128
    shape = x.shape if x.shape.ndims is None else TensorShape(
        x.shape.as_list()[:-1] + [None if static is None else static // 2 + 1])
    return make_op("RFFT", [x, n], out, shape, name)


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The real signal of fft_length points whose rfft is `input_tensor` (default 2 * (bins - 1))."""
    y = _complex_input(input_tensor, "IRFFT")
    n, static = _fft_length(y, fft_length, lambda last: 2 * (last - 1))
    shape = y.shape if y.shape.ndims is None else TensorShape(y.shape.as_list()[:-1] + [static])
    return make_op("IRFFT", [y, n], y.dtype.real_dtype, shape, name)


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
    """The imaginary part of a complex tensor (zeros for a real one, as TF)."""
    x = convert_to_tensor(input)
    if not x.dtype.is_complex:
        return array_ops.zeros_like(x, name=name)
    return make_op("Imag", [x], x.dtype.real_dtype, x.shape, name)


registry.register_op("ComplexAbs", lambda op, ctx: np.abs)


def complex_abs(x: Tensor, name: str | None = None) -> Tensor:
    """|x| of a complex tensor, as a real tensor (what `tf.abs` builds for complex input)."""
    return make_op("ComplexAbs", [x], x.dtype.real_dtype, x.shape, name or "ComplexAbs")


@registry.register_gradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    """grad * x / |x| (0 where x = 0), TF's rule."""
    x, y = op.inputs[0], op.outputs[0]
    from tftk.ops.safe_math_ops import divide_no_nan  # it sits above the complex parts; imported on use
    return [divide_no_nan(math_ops.multiply(complex(grad, array_ops.zeros_like(grad)), x),
                          complex(y, array_ops.zeros_like(y)))]


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

