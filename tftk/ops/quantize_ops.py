"""Quantization to and from TF's quantized integer types (quantize: MIN_COMBINED, MIN_FIRST, SCALED)."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["quantize", "dequantize", "QuantizeV2"]


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
