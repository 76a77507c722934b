"""Quantization to and from TF's quantized integer types (MIN_COMBINED mode)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["quantize", "dequantize"]



# ---- quantize / dequantize ---------------------------------------------------------------------

_QUANTIZED = {"qint8": np.int8, "quint8": np.uint8, "qint16": np.int16, "quint16": np.uint16,
              "qint32": np.int32}


def _adjusted_range(lo: float, hi: float) -> tuple[float, float]:
    """TF's QuantizeV2 range: include 0, and at least 1% of the larger magnitude (or 0.01) wide."""
    lo2 = min(0.0, lo)
    eps = max(1.0, max(abs(lo), abs(hi))) / 100.0
    return lo2, max(0.0, max(hi, lo2 + eps))


def _bind_quantize(op, ctx):
    npd = np.dtype(op.get_attr("T").as_numpy_dtype)
    info = np.iinfo(npd)
    span = float(info.max) - float(info.min)
    half = (span + 1) / 2.0 if info.min < 0 else 0.0

    def kernel(x, min_range, max_range):
        lo, hi = float(min_range), float(max_range)
        if lo > hi:
            raise ValueError(f"min_range {lo} must be <= max_range {hi}")
        lo, hi = _adjusted_range(lo, hi)
        scaled = (np.clip(x.astype(np.float64), lo, hi) - lo) * (span / (hi - lo)) - half
        rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)  # half away from zero
        out = np.clip(rounded, info.min, info.max).astype(npd)
        return out, np.float32(lo), np.float32(hi)
    return kernel


registry.register_op("QuantizeV2", _bind_quantize)
registry.not_differentiable("QuantizeV2")


def _check_quantize(T: Any, mode: str, op_type: str) -> dtypes.DType:
    target = dtypes.as_dtype(T)
    if target.name not in _QUANTIZED:
        raise TypeError(f"{op_type}: T must be a quantized type (qint8, quint8, qint16, quint16, qint32), "
                        f"got {target.name}")
    if mode != "MIN_COMBINED":
        raise ValueError(f"{op_type}: only mode='MIN_COMBINED' is supported, got {mode!r}")
    return target


def quantize(input: Any, min_range: Any, max_range: Any, T: Any, mode: str = "MIN_COMBINED",
             name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Float → quantized T (TF1 MIN_COMBINED): returns (output, output_min, output_max)."""
    target = _check_quantize(T, mode, "QuantizeV2")
    x = convert_to_tensor(input, dtype=dtypes.float32)
    lo = convert_to_tensor(min_range, dtype=dtypes.float32)
    hi = convert_to_tensor(max_range, dtype=dtypes.float32)
    for t, what in ((lo, "min_range"), (hi, "max_range")):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"QuantizeV2: {what} must be a scalar, got shape {t.shape}")
    op = make_multi_op("QuantizeV2", [x, lo, hi], [(target, x.shape), (dtypes.float32, []),
                                                   (dtypes.float32, [])], name, {"T": target, "mode": mode})
    return tuple(op.outputs)


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
    _check_quantize(q.dtype, mode, "Dequantize")
    lo = convert_to_tensor(min_range, dtype=dtypes.float32)
    hi = convert_to_tensor(max_range, dtype=dtypes.float32)
    return make_op("Dequantize", [q, lo, hi], dtypes.float32, q.shape, name, {"mode": mode})


