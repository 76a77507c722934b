"""Arg-extrema, scans, trace, FFT, complex parts, tensordot, quantization and norms."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import binary_inputs, make_multi_op, make_op

__all__ = [
    "argmax", "argmin", "cumsum", "cumprod", "matrix_diag_part", "trace", "fft", "ifft", "real",
    "imag", "complex", "tensordot", "quantize", "dequantize", "bincount", "norm",
]


def _static_axis(axis: Any, rank: int | None, op_name: str) -> int:
    value = constant_value(axis) if isinstance(axis, Tensor) else np.asarray(axis)
    if value is None or value.ndim:
        raise ValueError(f"{op_name}: axis must be a scalar known when the graph is built")
    a = int(value)
    if rank is not None:
        if not -rank <= a < rank:
            raise ValueError(f"{op_name}: axis {a} is out of range for an input of rank {rank}")
        a %= rank
    elif a < 0:
        raise ValueError(f"{op_name}: a negative axis needs an input of known rank")
    return a


# ---- argmax / argmin ---------------------------------------------------------------------------

def _arg_extremum(op_type: str, fn: Any) -> Any:
    def factory(op, ctx):
        axis, npd = op.get_attr("axis"), op.outputs[0].dtype.as_numpy_dtype

        def kernel(x):
            if x.shape[axis] == 0:
                raise ValueError(f"Reduction axis {axis} is empty in shape {x.shape}")
            return fn(x, axis=axis).astype(npd, copy=False)
        return kernel
    registry.register_op(op_type, factory)
    registry.not_differentiable(op_type)

    def constructor(input: Any, axis: Any = None, name: str | None = None, dimension: Any = None,
                    output_type: Any = dtypes.int64) -> Tensor:
        x = convert_to_tensor(input)
        axis = dimension if axis is None else axis
        axis = 0 if axis is None else axis  # TF1's default
        dims = x.shape.as_tuple()
        if dims is not None and not dims:
            raise ValueError(f"{op_type} '{name or op_type}': input must have rank >= 1, got a scalar")
        a = _static_axis(axis, None if dims is None else len(dims), op_type)
        out = dtypes.as_dtype(output_type)
        if out not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"{op_type}: output_type must be int32 or int64, got {out.name}")
        shape = TensorShape(None) if dims is None else TensorShape(dims[:a] + dims[a + 1:])
        return make_op(op_type, [x], out, shape, name, {"axis": a})

    constructor.__name__ = op_type
    constructor.__doc__ = f"Index of the {op_type[3:].lower()}imum along `axis` (first one on ties)."
    return constructor


argmax = _arg_extremum("ArgMax", np.argmax)
argmin = _arg_extremum("ArgMin", np.argmin)


# ---- cumsum / cumprod --------------------------------------------------------------------------

def _scan(fn: Any, identity: int) -> Any:
    def factory(op, ctx):
        axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")

        def kernel(x):
            y = np.flip(x, axis) if reverse else x
            out = fn(y, axis=axis, dtype=x.dtype)
            if exclusive:
                out = np.moveaxis(out, axis, 0)
                shifted = np.full_like(out, identity)
                shifted[1:] = out[:-1]
                out = np.moveaxis(shifted, 0, axis)
            return np.flip(out, axis) if reverse else out
        return kernel
    return factory


registry.register_op("Cumsum", _scan(np.cumsum, 0))
registry.register_op("Cumprod", _scan(np.cumprod, 1))


def _scan_op(op_type: str, x: Any, axis: Any, exclusive: bool, reverse: bool, name: str | None) -> Tensor:
    t = convert_to_tensor(x)
    a = _static_axis(axis, t.shape.ndims, op_type)
    if t.shape.ndims == 0:
        raise ValueError(f"{op_type} '{name or op_type}': input must have rank >= 1")
    return make_op(op_type, [t], t.dtype, t.shape, name,
                   {"axis": a, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: str | None = None) -> Tensor:
    """Running sum along `axis`; exclusive starts at 0, reverse runs from the end."""
    return _scan_op("Cumsum", x, axis, exclusive, reverse, name)


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
            name: str | None = None) -> Tensor:
    """Running product along `axis`; exclusive starts at 1, reverse runs from the end."""
    return _scan_op("Cumprod", x, axis, exclusive, reverse, name)


@registry.register_gradient("Cumsum")
def _cumsum_grad(op, grad):
    return [cumsum(grad, op.get_attr("axis"), op.get_attr("exclusive"), not op.get_attr("reverse"))]


@registry.register_gradient("Cumprod")
def _cumprod_grad(op, grad):
    """TF's rule (needs non-zero inputs): cumsum(prod * grad, reversed) / x."""
    x = op.inputs[0]
    axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive, reverse)
    out = cumsum(math_ops.multiply(prod, grad), axis, exclusive, not reverse)
    return [math_ops.realdiv(out, x)]


# ---- matrix_diag_part / trace ------------------------------------------------------------------

def _diag_part(x):
    return np.diagonal(x, axis1=-2, axis2=-1).copy()


def _diag_part_grad(x, grad):
    out = np.zeros(x.shape, dtype=grad.dtype)
    n = grad.shape[-1]
    out[..., np.arange(n), np.arange(n)] = grad
    return out


registry.register_op("MatrixDiagPart", lambda op, ctx: _diag_part)
registry.register_op("MatrixDiagPartGrad", lambda op, ctx: _diag_part_grad)
registry.not_differentiable("MatrixDiagPartGrad")


@registry.register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    return [make_op("MatrixDiagPartGrad", [x, grad], grad.dtype, x.shape)]


def matrix_diag_part(input: Any, name: str | None = None) -> Tensor:
    """The main diagonals of the innermost matrices: shape [..., min(M, N)]."""
    x = convert_to_tensor(input)
    dims = x.shape.as_tuple()
    if dims is not None and len(dims) < 2:
        raise ValueError(f"MatrixDiagPart '{name or 'MatrixDiagPart'}': input must be at least rank 2, "
                         f"got shape {x.shape}")
    if dims is None:
        shape = TensorShape(None)
    else:
        m, n = dims[-2:]
        shape = TensorShape(dims[:-2] + (None if m is None or n is None else min(m, n),))
    return make_op("MatrixDiagPart", [x], x.dtype, shape, name)


def trace(x: Any, name: str | None = None) -> Tensor:
    """Sum of the main diagonal of each innermost matrix."""
    with name_scope(name, "Trace", [x]):
        return math_ops.reduce_sum(matrix_diag_part(x), axis=-1)


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
    from tftk.ops.op_builder import broadcast_shape
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


# ---- tensordot ----------------------------------------------------------------------------------

def _tensordot_axes(axes: Any, ra: int, rb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > min(ra, rb):
            raise ValueError(f"tensordot: axes={axes} must be in [0, {min(ra, rb)}]")
        return list(np.arange(ra - axes, ra)), list(np.arange(axes))
    pair = list(axes)
    if len(pair) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes = [int(v) % ra for v in np.atleast_1d(pair[0])]
    b_axes = [int(v) % rb for v in np.atleast_1d(pair[1])]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: different number of contraction axes {a_axes} and {b_axes}")
    return a_axes, b_axes


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the paired `axes` of a and b (transpose + reshape + matmul; static shapes)."""
    with name_scope(name, "Tensordot", [a, b]):
        a, b = binary_inputs(a, b, "Tensordot")
        if not a.shape.is_fully_defined() or not b.shape.is_fully_defined():
            raise ValueError(f"tensordot needs fully known static shapes, got {a.shape} and {b.shape}")
        da, db = a.shape.as_list(), b.shape.as_list()
        a_axes, b_axes = _tensordot_axes(axes, len(da), len(db))
        for i, j in zip(a_axes, b_axes):
            if da[i] != db[j]:
                raise ValueError(f"tensordot: dimension {i} of a ({da[i]}) does not match dimension {j} "
                                 f"of b ({db[j]}) for shapes {a.shape} and {b.shape}")
        a_free = [i for i in np.arange(len(da)) if i not in a_axes]
        b_free = [i for i in np.arange(len(db)) if i not in b_axes]
        k = int(np.prod([da[i] for i in a_axes]))
        a2 = array_ops.reshape(array_ops.transpose(a, a_free + a_axes),
                               [int(np.prod([da[i] for i in a_free])), k])
        b2 = array_ops.reshape(array_ops.transpose(b, b_axes + b_free),
                               [k, int(np.prod([db[i] for i in b_free]))])
        return array_ops.reshape(math_ops.matmul(a2, b2), [da[i] for i in a_free] + [db[i] for i in b_free])


# ---- quantize / dequantize ---------------------------------------------------------------------

_QUANTIZED = {"qint8": np.int8, "quint8": np.uint8, "qint16": np.int16, "quint16": np.uint16,
              "qint32": np.int32}


def _adjusted_range(lo: float, hi: float, minimum: float = 0.01) -> tuple[float, float]:
    """TF's QuantizeV2 range: include 0, and at least `minimum` of the larger magnitude (or 1) wide."""
    lo2 = min(0.0, lo)
    eps = max(1.0, max(abs(lo), abs(hi))) * minimum
    return lo2, max(0.0, max(hi, lo2 + eps))


def _round(x: np.ndarray, half_to_even: bool) -> np.ndarray:
    return np.rint(x) if half_to_even else np.sign(x) * np.floor(np.abs(x) + 0.5)


def _quantize_array(x: np.ndarray, lo: float, hi: float, npd: np.dtype, mode: str, half_to_even: bool,
                    narrow_range: bool) -> tuple[np.ndarray, float, float]:
    """QuantizeV2 on an adjusted range: (quantized values, output_min, output_max) for each mode.

    MIN_COMBINED and SCALED compute in float32 and MIN_FIRST in float64, as TF's kernels do (it
    decides which way a .5 rounds).
    """
    info = np.iinfo(npd)
    f32 = np.float32
    if mode == "MIN_COMBINED":
        span = float(info.max) - float(info.min)
        half = f32((span + 1) / 2.0 if info.min < 0 else 0.0)
        q = _round((np.clip(x, f32(lo), f32(hi)) - f32(lo)) * f32(span / (hi - lo)) - half, False)
    elif mode == "MIN_FIRST":
        steps = float(1 << (8 * npd.itemsize))
        scale = steps / ((hi - lo) * steps / (steps - 1.0))
        q = _round(x.astype(np.float64) * scale, False) - _round(np.float64(lo * scale), False) + info.min
    else:  # SCALED: symmetric around 0, scaled so that the wider side of the range fits
        qmin, qmax = info.min + (1 if narrow_range else 0), info.max
        if qmin < 0:
            scale = min(qmin / lo if qmin * lo > 0 else np.inf, qmax / hi if qmax * hi > 0 else np.inf)
        else:
            scale = qmax / hi
        lo, hi = qmin / scale, qmax / scale
        q = _round(np.clip(x, f32(lo), f32(hi)) * f32(scale), half_to_even)
    return np.clip(q, info.min, info.max).astype(npd), lo, hi


def _bind_quantize(op, ctx):
    npd = np.dtype(op.get_attr("T").as_numpy_dtype)
    mode, minimum = op.get_attr("mode"), op.get_attr("ensure_minimum_range")
    half_to_even, narrow = op.get_attr("round_mode") == "HALF_TO_EVEN", op.get_attr("narrow_range")

    def kernel(x, min_range, max_range):
        lo, hi = float(min_range), float(max_range)
        if lo > hi:
            raise ValueError(f"min_range {lo} must be <= max_range {hi}")
        out, lo, hi = _quantize_array(x, *_adjusted_range(lo, hi, minimum), npd, mode, half_to_even, narrow)
        return out, np.float32(lo), np.float32(hi)
    return kernel


registry.register_op("QuantizeV2", _bind_quantize)
registry.not_differentiable("QuantizeV2")

_MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")
QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])


def _check_quantize(T: Any, mode: str, op_type: str, modes: tuple[str, ...] = _MODES) -> dtypes.DType:
    target = dtypes.as_dtype(T)
    if target.name not in _QUANTIZED:
        raise TypeError(f"{op_type}: T must be a quantized type (qint8, quint8, qint16, quint16, qint32), "
                        f"got {target.name}")
    if mode not in modes:
        raise ValueError(f"{op_type}: mode must be one of {', '.join(modes)}, got {mode!r}")
    return target


def quantize(input: Any, min_range: Any, max_range: Any, T: Any, mode: str = "MIN_COMBINED",
             round_mode: str = "HALF_AWAY_FROM_ZERO", name: str | None = None, narrow_range: bool = False,
             ensure_minimum_range: float = 0.01) -> QuantizeV2:
    """Float -> quantized T in TF's modes; returns TF's named tuple (output, output_min, output_max).

    MIN_COMBINED and MIN_FIRST map [min_range, max_range] (widened to include 0) onto T's range;
    SCALED scales symmetrically around 0 (`narrow_range` drops T's lowest value) and alone accepts
    round_mode='HALF_TO_EVEN'.
    """
    target = _check_quantize(T, mode, "QuantizeV2")
    if round_mode not in ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN"):
        raise ValueError(f"QuantizeV2: round_mode must be HALF_AWAY_FROM_ZERO or HALF_TO_EVEN, got {round_mode!r}")
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise ValueError(f"QuantizeV2: round_mode 'HALF_TO_EVEN' is only supported for mode 'SCALED', got {mode!r}")
    x = convert_to_tensor(input, dtype=dtypes.float32)
    lo = convert_to_tensor(min_range, dtype=dtypes.float32)
    hi = convert_to_tensor(max_range, dtype=dtypes.float32)
    for t, what in ((lo, "min_range"), (hi, "max_range")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"QuantizeV2: {what} must be a scalar, got shape {t.shape}")
    op = make_multi_op("QuantizeV2", [x, lo, hi], [(target, x.shape), (dtypes.float32, []),
                                                   (dtypes.float32, [])], name,
                       {"T": target, "mode": mode, "round_mode": round_mode, "narrow_range": bool(narrow_range),
                        "ensure_minimum_range": float(ensure_minimum_range)})
    return QuantizeV2(*op.outputs)


def _bind_dequantize(op, ctx):
    info = np.iinfo(np.dtype(op.inputs[0].dtype.as_numpy_dtype))
    span = float(info.max) - float(info.min)
    half = (span + 1) / 2.0 if info.min < 0 else 0.0

    def kernel(q, min_range, max_range):
        lo, hi = float(min_range), float(max_range)
        return (lo + (q.astype(np.float64) + half) * ((hi - lo) / span)).astype(np.float32)
    return kernel


registry.register_op("Dequantize", _bind_dequantize)
registry.not_differentiable("Dequantize")


def dequantize(input: Any, min_range: Any, max_range: Any, mode: str = "MIN_COMBINED",
               name: str | None = None) -> Tensor:
    """Quantized → float32 (MIN_COMBINED): min_range + (q + half) * (max_range - min_range) / range(T)."""
    q = convert_to_tensor(input)
    _check_quantize(q.dtype, mode, "Dequantize", modes=("MIN_COMBINED",))
    lo = convert_to_tensor(min_range, dtype=dtypes.float32)
    hi = convert_to_tensor(max_range, dtype=dtypes.float32)
    return make_op("Dequantize", [q, lo, hi], dtypes.float32, q.shape, name, {"mode": mode})


# ---- bincount / norm ------------------------------------------------------------------------------

def _bind_bincount(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(arr, size, weights):
        flat = arr.reshape(-1)
        if flat.size and flat.min() < 0:
            raise ValueError(f"bincount: input must be non-negative, got {int(flat.min())}")
        w = None if weights.size == 0 else weights.reshape(-1)
        return np.bincount(flat, weights=w, minlength=int(size))[:int(size)].astype(npd)
    return kernel


registry.register_op("Bincount", _bind_bincount)
registry.not_differentiable("Bincount")


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = dtypes.int32) -> Tensor:
    """Counts (or summed weights) of each value in a non-negative int32 array."""
    with name_scope(None, "bincount", [arr]):
        a = convert_to_tensor(arr, dtype=dtypes.int32)
        size = math_ops.add(math_ops.reduce_max(a), 1) if a.shape.num_elements() != 0 else \
            convert_to_tensor(0)
        if minlength is not None:
            size = math_ops.maximum(size, convert_to_tensor(minlength, dtype=dtypes.int32))
        if maxlength is not None:
            size = math_ops.minimum(size, convert_to_tensor(maxlength, dtype=dtypes.int32))
        out = dtypes.as_dtype(dtype)
        if weights is None:
            w = convert_to_tensor(np.zeros((0,), out.as_numpy_dtype))
        else:
            w = convert_to_tensor(weights)
            out = w.dtype
        return make_op("Bincount", [a, size, w], out, [None])


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: bool | None = None,
         name: str | None = None, keep_dims: bool | None = None) -> Tensor:
    """Vector norm over `axis` (all entries when None): ord 'euclidean'/2, 1 or np.inf."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor)
        if ord in ("euclidean", "fro", 2, 2.0):
            return math_ops.sqrt(math_ops.reduce_sum(math_ops.square(x),
                                                     axis=axis, keepdims=keep))
        if ord in (1, 1.0):
            return math_ops.reduce_sum(math_ops.abs(x), axis=axis, keepdims=keep)
        if ord == np.inf:
            return math_ops.reduce_max(math_ops.abs(x), axis=axis, keepdims=keep)
        if isinstance(ord, (int, float)) and ord > 0:
            p = float(ord)
            return math_ops.pow(math_ops.reduce_sum(math_ops.pow(math_ops.abs(x), p), axis=axis, keepdims=keep),
                                1.0 / p)
        raise ValueError(f"norm: ord must be 'euclidean', 'fro', a positive number or np.inf, got {ord!r}")
