"""Grayscale morphology: dilation2d (max over a window of input + filter) and erosion2d (its dual),
with TF's gradients (each output's gradient goes to the input cell and filter tap that won)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.space_ops import _patch_index, _window
from tftk.ops.tile_pad_ops import reverse_v2

__all__ = ["dilation2d", "erosion2d"]


def _candidates(x: np.ndarray, w: np.ndarray, strides, rates, padding):
    """(input + filter over every window [b, oh, ow, kh*kw, c], flat input positions [oh, ow, kh*kw])."""
    b, h, wd, c = x.shape
    kh, kw = w.shape[:2]
    table = _patch_index(h, wd, (1, kh, kw, 1), strides, rates, padding)
    index = table.reshape(table.shape[0], table.shape[1], -1)
    flat = np.concatenate([x.reshape(b, h * wd, c), np.full((b, 1, c), -np.inf, x.dtype)], 1)
    return flat[:, index] + w.reshape(1, 1, 1, kh * kw, c), index


def _dilation(x, w, strides, rates, padding):
    values, _ = _candidates(x, w, strides, rates, padding)
    return values.max(axis=3)


def _dilation_grads(x, w, grad, strides, rates, padding):
    values, index = _candidates(x, w, strides, rates, padding)
    best = values.argmax(axis=3)  # [b, oh, ow, c]
    b, h, wd, c = x.shape
    dx = np.zeros((b, h * wd + 1, c), grad.dtype)
    dw = np.zeros((w.shape[0] * w.shape[1], c), grad.dtype)
    source = np.take_along_axis(np.broadcast_to(index[None, ..., None], values.shape), best[..., None, :], 3)[..., 0, :]
    bb = np.arange(b).reshape(-1, 1, 1, 1)
    cc = np.arange(c)
    np.add.at(dx, (bb, source, cc), grad)
    np.add.at(dw, (best, cc), grad)
    return dx[:, :-1].reshape(x.shape), dw.reshape(w.shape)


register_array_op("Dilation2D", _dilation, differentiable=True)
register_array_op("Dilation2DGrads", _dilation_grads)


@registry.register_gradient("Dilation2D")
def _dilation2d_grad(op, grad):
    x, w = op.inputs
    dx, dw = array_op("Dilation2DGrads", [x, w, grad], [(x.dtype, x.shape), (w.dtype, w.shape)], attrs=dict(op.attrs))
    return [dx, dw]


def dilation2d(input: Any, filter: Any = None, strides: Any = None, rates: Any = None, padding: str | None = None,  # noqa: A002
               name: str | None = None, filters: Any = None, dilations: Any = None) -> Tensor:
    """out[b, y, x, c] = max over (i, j) of input[b, y*s + i*r, x*s + j*r, c] + filter[i, j, c]."""
    x = convert_to_tensor(input, name="input")
    w = convert_to_tensor(filters if filters is not None else filter, dtype=x.dtype, name="filter")
    rates = dilations if dilations is not None else rates
    st, rt = [int(v) for v in strides], [int(v) for v in rates]
    if len(st) != 4 or len(rt) != 4 or st[0] != 1 or st[3] != 1 or rt[0] != 1 or rt[3] != 1:
        raise ValueError(f"dilation2d: strides and rates must be [1, h, w, 1], got {st} and {rt}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"dilation2d: padding must be 'SAME' or 'VALID', got {padding!r}")
    dims = x.shape.as_list() if x.shape.ndims == 4 else [None] * 4
    k = w.shape.as_list() if w.shape.ndims == 3 else [None] * 3
    out = [dims[0]]
    for i in (1, 2):
        known = dims[i] is not None and k[i - 1] is not None
        out.append(_window(dims[i], k[i - 1], st[i], rt[i], padding)[0] if known else None)
    return array_op("Dilation2D", [x, w], [(x.dtype, out + [dims[3]])], name or "Dilation2D",
                    {"strides": st, "rates": rt, "padding": padding})


def erosion2d(value: Any, kernel: Any, strides: Any, rates: Any, padding: str, name: str | None = None) -> Tensor:
    """The dual of dilation2d: min over the window of value - the reflected kernel."""
    with name_scope(name, "erosion2d", [value, kernel]):
        return -dilation2d(-convert_to_tensor(value), reverse_v2(convert_to_tensor(kernel), [0, 1]), strides, rates,
                           padding)
