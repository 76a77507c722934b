"""Fake quantisation (tf.quantization.fake_quant_*): round float values to the 2^num_bits levels of
a [min, max] range, nudged so that zero is exactly representable, and back to float.

The gradient is the straight-through estimator TF uses: the output gradient passes where the input
lies inside the nudged range; for the _vars forms the gradient falling below (above) the range goes
to min (max), summed (per channel for the per-channel form). The *_gradient functions expose
those backprops directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops.array_function import array_op, register_array_op

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient", "fake_quant_with_min_max_vars",
           "fake_quant_with_min_max_vars_gradient", "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]


def _nudge(low: np.ndarray, high: np.ndarray, num_bits: int, narrow_range: bool):
    """(nudged min, nudged max, scale) in float32, as TF's Nudge computes them."""
    low, high = np.float32(low), np.float32(high)
    quant_min = np.float32(1 if narrow_range else 0)
    quant_max = np.float32((1 << num_bits) - 1)
    scale = (high - low) / (quant_max - quant_min)
    zero_from_min = quant_min - low / scale
    rounded = np.where(zero_from_min >= 0, np.floor(zero_from_min + np.float32(0.5)),
                       np.ceil(zero_from_min - np.float32(0.5)))
    nudged_zero = np.clip(rounded, quant_min, quant_max).astype(np.float32)
    return ((quant_min - nudged_zero) * scale).astype(np.float32), ((quant_max - nudged_zero) * scale).astype(
        np.float32), scale.astype(np.float32)


def _check(low: Any, high: Any, num_bits: int) -> None:
    if not 2 <= num_bits <= 16:
        raise ValueError(f"num_bits is out of range, expected between 2 and 16, was: {num_bits}")
    if np.any(np.asarray(low) > np.asarray(high)):
        raise ValueError(f"min has to be smaller or equal to max, was: {low} > {high}")


def _quantize(x: np.ndarray, low: Any, high: Any, num_bits: int, narrow_range: bool) -> np.ndarray:
    _check(low, high, num_bits)
    nudged_min, nudged_max, scale = _nudge(low, high, num_bits, narrow_range)
    x32 = x.astype(np.float32)
    clamped = np.minimum(np.maximum(x32, nudged_min), nudged_max)
    return (np.floor((clamped - nudged_min) / scale + np.float32(0.5)) * scale + nudged_min).astype(np.float32)


def _masks(x: np.ndarray, low: Any, high: Any, num_bits: int, narrow_range: bool):
    nudged_min, nudged_max, _ = _nudge(low, high, num_bits, narrow_range)
    x32 = x.astype(np.float32)
    return x32 < nudged_min, x32 > nudged_max


def _args_kernel(x, min, max, num_bits, narrow_range):  # noqa: A002
    return _quantize(x, min, max, num_bits, narrow_range)


def _args_grad_kernel(dy, x, min, max, num_bits, narrow_range):  # noqa: A002
    below, above = _masks(x, min, max, num_bits, narrow_range)
    return np.where(below | above, 0, dy)


def _vars_kernel(x, low, high, num_bits, narrow_range):
    return _quantize(x, low, high, num_bits, narrow_range)


def _vars_grad_kernel(dy, x, low, high, num_bits, narrow_range):
    below, above = _masks(x, low, high, num_bits, narrow_range)
    inside = np.where(below | above, 0, dy)
    per_channel = np.ndim(low) == 1
    axes = tuple(range(dy.ndim - 1)) if per_channel else None
    return inside, np.sum(np.where(below, dy, 0), axis=axes), np.sum(np.where(above, dy, 0), axis=axes)


register_array_op("FakeQuantWithMinMaxArgs", _args_kernel, differentiable=True)
register_array_op("FakeQuantWithMinMaxArgsGradient", _args_grad_kernel)
register_array_op("FakeQuantWithMinMaxVars", _vars_kernel, differentiable=True)
register_array_op("FakeQuantWithMinMaxVarsGradient", _vars_grad_kernel)


@registry.register_gradient("FakeQuantWithMinMaxArgs")
def _fake_quant_args_grad(op, grad):
    return [fake_quant_with_min_max_args_gradient(grad, op.inputs[0], **op.attrs)]


@registry.register_gradient("FakeQuantWithMinMaxVars")
def _fake_quant_vars_grad(op, grad):
    x, low, high = op.inputs
    return list(_vars_gradient(grad, x, low, high, op.get_attr("num_bits"), op.get_attr("narrow_range")))


def _float32(x: Any, what: str) -> Tensor:
    t = convert_to_tensor(x, name=what)
    if t.dtype is not dtypes.float32:
        raise TypeError(f"Value passed to parameter '{what}' has DataType {t.dtype.name} not in list of allowed "
                        f"values: float32")
    return t


def fake_quant_with_min_max_args(inputs: Any, min: float = -6.0, max: float = 6.0, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: str | None = None) -> Tensor:
    """`inputs` fake-quantised to num_bits levels over [min, max] (float32)."""
    x = _float32(inputs, "inputs")  # num_bits and the range are checked when the op runs, as TF's kernel does
    return array_op("FakeQuantWithMinMaxArgs", [x], [(x.dtype, x.shape)], name,
                    {"min": float(min), "max": float(max), "num_bits": int(num_bits), "narrow_range": bool(narrow_range)})


def fake_quant_with_min_max_args_gradient(gradients: Any, inputs: Any, min: float = -6.0, max: float = 6.0,  # noqa: A002
                                          num_bits: int = 8, narrow_range: bool = False,
                                          name: str | None = None) -> Tensor:
    """The backprop of fake_quant_with_min_max_args: `gradients` where inputs fall in the nudged range."""
    dy, x = _float32(gradients, "gradients"), _float32(inputs, "inputs")
    return array_op("FakeQuantWithMinMaxArgsGradient", [dy, x], [(dy.dtype, dy.shape)], name,
                    {"min": float(min), "max": float(max), "num_bits": int(num_bits), "narrow_range": bool(narrow_range)})


def _vars_op(inputs: Any, min: Any, max: Any, num_bits: int, narrow_range: bool, name: str | None,  # noqa: A002
             per_channel: bool) -> Tensor:
    x = _float32(inputs, "inputs")
    low, high = _float32(min, "min"), _float32(max, "max")
    want = 1 if per_channel else 0
    for t, what in ((low, "min"), (high, "max")):
        if t.shape.ndims not in (None, want):
            raise ValueError(f"Shape must be rank {want} but is rank {t.shape.ndims} for '{what}'")
    return array_op("FakeQuantWithMinMaxVars", [x, low, high], [(x.dtype, x.shape)], name,
                    {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)})


def _vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any, num_bits: int, narrow_range: bool,  # noqa: A002
                   name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    dy, x = _float32(gradients, "gradients"), _float32(inputs, "inputs")
    low, high = _float32(min, "min"), _float32(max, "max")
    outputs = array_op("FakeQuantWithMinMaxVarsGradient", [dy, x, low, high],
                       [(dy.dtype, dy.shape), (low.dtype, low.shape), (high.dtype, high.shape)], name,
                       {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)})
    return outputs[0], outputs[1], outputs[2]


def fake_quant_with_min_max_vars(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                 narrow_range: bool = False, name: str | None = None) -> Tensor:
    """fake quantisation over a [min, max] given as scalar tensors (variables), differentiable in both."""
    return _vars_op(inputs, min, max, num_bits, narrow_range, name, per_channel=False)


def fake_quant_with_min_max_vars_per_channel(inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                             narrow_range: bool = False, name: str | None = None) -> Tensor:
    """fake quantisation with one [min, max] per channel (the last dimension)."""
    return _vars_op(inputs, min, max, num_bits, narrow_range, name, per_channel=True)


def fake_quant_with_min_max_vars_gradient(gradients: Any, inputs: Any, min: Any, max: Any, num_bits: int = 8,  # noqa: A002
                                          narrow_range: bool = False,
                                          name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(backprop to inputs, to min, to max) of fake_quant_with_min_max_vars."""
    with name_scope(name, "FakeQuantWithMinMaxVarsGradient", [gradients, inputs]):
        return _vars_gradient(gradients, inputs, min, max, num_bits, narrow_range)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients: Any, inputs: Any, min: Any, max: Any,  # noqa: A002
                                                      num_bits: int = 8, narrow_range: bool = False,
                                                      name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(backprop to inputs, to min, to max) of the per-channel form (min and max gradients per channel)."""
    with name_scope(name, "FakeQuantWithMinMaxVarsPerChannelGradient", [gradients, inputs]):
        return _vars_gradient(gradients, inputs, min, max, num_bits, narrow_range)
