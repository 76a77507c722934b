"""3-D pooling (max_pool3d, avg_pool3d), the rank-dispatching max_pool_v2/avg_pool_v2, and
max_pool_with_argmax.

Windows are gathered through a table of flat input positions (-1 for padding), so one gather
forms every window and one scatter-add sends gradients back: the max goes to the first maximum of
its window, the average spreads over the window's real (unpadded) cells, as TF's kernels do.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.nn_conv_ops import pool
from tftk.ops.space_ops import _window

__all__ = ["max_pool3d", "avg_pool3d", "max_pool_v2", "avg_pool_v2", "max_pool_with_argmax"]


def _window_table(spatial: Sequence[int], ksize: Sequence[int], strides: Sequence[int], padding: str) -> np.ndarray:
    """[*out_spatial, window] flat positions into the spatial dims (-1 where the window is padding)."""
    axes, outs = [], []
    for size, k, s in zip(spatial, ksize, strides):
        out, before = _window(size, k, s, 1, padding)
        pos = np.arange(out)[:, None] * s + np.arange(k)[None, :] - before
        axes.append(np.where((pos >= 0) & (pos < size), pos, -1))
        outs.append(out)
    table = np.zeros([1] * (2 * len(spatial)), np.int64)
    valid = np.ones_like(table, dtype=bool)
    for d, (pos, size) in enumerate(zip(axes, spatial)):
        shape = [1] * (2 * len(spatial))
        shape[d], shape[len(spatial) + d] = pos.shape
        p = pos.reshape(shape)
        table = table * size + np.maximum(p, 0)
        valid = valid & (p >= 0)
    table = np.where(valid, table, -1)
    return table.reshape(outs + [-1])


def _windows(x: np.ndarray, ksize, strides, padding, fill: float) -> tuple[np.ndarray, np.ndarray]:
    """(windows [batch, *out, window, channels], the position table)."""
    spatial = x.shape[1:-1]
    table = _window_table(spatial, ksize, strides, padding)
    flat = x.reshape(x.shape[0], -1, x.shape[-1])
    padded = np.concatenate([flat, np.full((x.shape[0], 1, x.shape[-1]), fill, x.dtype)], 1)
    return padded[:, table], table


def _max_pool(x: np.ndarray, ksize, strides, padding) -> np.ndarray:
    windows, _ = _windows(x, ksize, strides, padding, -np.inf)
    return windows.max(axis=-2)


def _max_pool_grad(x: np.ndarray, grad: np.ndarray, ksize, strides, padding) -> np.ndarray:
    windows, table = _windows(x, ksize, strides, padding, -np.inf)
    first = windows.argmax(axis=-2)  # [batch, *out, channels]
    source = np.take_along_axis(np.broadcast_to(table[None, ..., None], windows.shape), first[..., None, :],
                                axis=-2)[..., 0, :]
    out = np.zeros((x.shape[0], int(np.prod(x.shape[1:-1])) + 1, x.shape[-1]), grad.dtype)
    b = np.arange(x.shape[0]).reshape([-1] + [1] * (grad.ndim - 1))
    c = np.arange(x.shape[-1])
    np.add.at(out, (b, source, c), grad)
    return out[:, :-1].reshape(x.shape)


def _avg_pool(x: np.ndarray, ksize, strides, padding) -> np.ndarray:
    windows, table = _windows(x, ksize, strides, padding, 0)
    counts = (table >= 0).sum(axis=-1)[None, ..., None]
    return windows.sum(axis=-2) / counts


def _avg_pool_grad(x: np.ndarray, grad: np.ndarray, ksize, strides, padding) -> np.ndarray:
    table = _window_table(x.shape[1:-1], ksize, strides, padding)
    counts = (table >= 0).sum(axis=-1)[None, ..., None]
    share = grad / counts  # [batch, *out, channels]
    out = np.zeros((x.shape[0], int(np.prod(x.shape[1:-1])) + 1, x.shape[-1]), grad.dtype)
    for k in range(table.shape[-1]):
        np.add.at(out, (slice(None), table[..., k]), share)
    return out[:, :-1].reshape(x.shape)


register_array_op("MaxPool3D", _max_pool, differentiable=True)
register_array_op("AvgPool3D", _avg_pool, differentiable=True)
register_array_op("MaxPool3DGrad", _max_pool_grad)
register_array_op("AvgPool3DGrad", _avg_pool_grad)


@registry.register_gradient("MaxPool3D")
def _max_pool3d_grad(op, grad):
    x = op.inputs[0]
    return [array_op("MaxPool3DGrad", [x, grad], [(grad.dtype, x.shape)], attrs=dict(op.attrs))]


@registry.register_gradient("AvgPool3D")
def _avg_pool3d_grad(op, grad):
    x = op.inputs[0]
    return [array_op("AvgPool3DGrad", [x, grad], [(grad.dtype, x.shape)], attrs=dict(op.attrs))]


def _five(values: Any, what: str) -> list[int]:
    v = [int(values)] * 3 if isinstance(values, int) else [int(x) for x in values]
    if len(v) == 3:
        v = [1] + v + [1]
    if len(v) != 5 or v[0] != 1 or v[4] != 1:
        raise ValueError(f"pool3d: {what} must be [1, d, h, w, 1] (or 3 values), got {values}")
    return v[1:4]


def _pool3d(op_type: str, input: Any, ksize: Any, strides: Any, padding: str, data_format: str,  # noqa: A002
            name: str | None) -> Tensor:
    if data_format not in ("NDHWC", None):
        raise ValueError(f"{op_type}: only data_format='NDHWC' is supported on CPU, got {data_format!r}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f'{op_type}: padding must be "SAME" or "VALID", got {padding!r}')
    x = convert_to_tensor(input, name="input")
    if not x.dtype.is_floating:
        raise TypeError(f"{op_type}: input must be a float tensor, got {x.dtype.name}")
    k, s = _five(ksize, "ksize"), _five(strides, "strides")
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 5
    if len(dims) != 5:
        raise ValueError(f"{op_type}: input must be 5-D [batch, depth, height, width, channels], got {x.shape}")
    out = [None if d is None else _window(d, kk, ss, 1, padding)[0] for d, kk, ss in zip(dims[1:4], k, s)]
    return array_op(op_type, [x], [(x.dtype, [dims[0]] + out + [dims[4]])], name,
                    {"ksize": k, "strides": s, "padding": padding})


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """3-D max pooling over [batch, depth, height, width, channels]."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """3-D average pooling (padding cells are not counted)."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _pool_v2(pooling_type: str, input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
             data_format: str | None, name: str | None) -> Tensor:
    x = convert_to_tensor(input, name="input")
    n = (x.shape.ndims or 0) - 2
    if n not in (1, 2, 3):
        raise ValueError(f"Input tensor must be of rank 3, 4 or 5 but was {n + 2}.")
    if n == 3:
        fn = max_pool3d if pooling_type == "MAX" else avg_pool3d
        return fn(x, ksize, strides, padding, data_format or "NDHWC", name)
    return pool(x, _spatial(ksize, n), pooling_type, padding, strides=_spatial(strides, n), name=name)


def _spatial(value: Any, n: int) -> list[int]:
    """An int, 1, n or n + 2 values as the n spatial window sizes."""
    values = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    if len(values) == n + 2:
        return values[1:-1]
    return values * n if len(values) == 1 else values


def max_pool_v2(input: Any, ksize: Any, strides: Any, padding: str, data_format: str | None = None,  # noqa: A002
                name: str | None = None) -> Tensor:
    """Max pooling over 1, 2 or 3 spatial dimensions (from the input's rank)."""
    return _pool_v2("MAX", input, ksize, strides, padding, data_format, name)


def avg_pool_v2(input: Any, ksize: Any, strides: Any, padding: str, data_format: str | None = None,  # noqa: A002
                name: str | None = None) -> Tensor:
    """Average pooling over 1, 2 or 3 spatial dimensions (from the input's rank)."""
    return _pool_v2("AVG", input, ksize, strides, padding, data_format, name)


def _max_with_argmax(x: np.ndarray, ksize, strides, padding, include_batch_in_index):
    windows, table = _windows(x, ksize, strides, padding, -np.inf)
    first = windows.argmax(axis=-2)
    values = np.take_along_axis(windows, first[..., None, :], axis=-2)[..., 0, :]
    position = np.take_along_axis(np.broadcast_to(table[None, ..., None], windows.shape), first[..., None, :],
                                  axis=-2)[..., 0, :]
    channels = x.shape[-1]
    index = position * channels + np.arange(channels)
    if include_batch_in_index:
        index = index + (np.arange(x.shape[0]) * int(np.prod(x.shape[1:]))).reshape([-1] + [1] * (index.ndim - 1))
    return values, index


register_array_op("MaxPoolWithArgmax", _max_with_argmax, differentiable=True)
register_array_op("MaxPool2DGrad", _max_pool_grad)


@registry.register_gradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, _argmax_grad):
    x = op.inputs[0]
    attrs = {k: op.get_attr(k) for k in ("ksize", "strides", "padding")}
    return [array_op("MaxPool2DGrad", [x, grad], [(grad.dtype, x.shape)], attrs=attrs)]


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",  # noqa: A002
                         Targmax: Any = dtypes.int64, name: str | None = None, output_dtype: Any = None,
                         include_batch_in_index: bool = False) -> tuple[Tensor, Tensor]:
    """(max pooled output, flat index ((b * H + y) * W + x) * C + c of each maximum; b only if asked)."""
    if data_format != "NHWC":
        raise ValueError(f"max_pool_with_argmax: only data_format='NHWC' is supported, got {data_format!r}")
    x = convert_to_tensor(input, name="input")
    spatial = lambda v: [int(v)] * 2 if isinstance(v, int) else [int(a) for a in v][1:3]  # noqa: E731
    k, s = spatial(ksize), spatial(strides)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * 4
    if len(dims) != 4:
        raise ValueError(f"max_pool_with_argmax: input must be 4-D NHWC, got shape {x.shape}")
    out = [dims[0]] + [None if d is None else _window(d, kk, ss, 1, padding)[0]
                       for d, kk, ss in zip(dims[1:3], k, s)] + [dims[3]]
    index_type = dtypes.as_dtype(output_dtype if output_dtype is not None else Targmax)
    with name_scope(name, "MaxPoolWithArgmax", [x]) as scope:
        values, index = array_op("MaxPoolWithArgmax", [x], [(x.dtype, out), (index_type, out)], scope,
                                 {"ksize": k, "strides": s, "padding": padding,
                                  "include_batch_in_index": bool(include_batch_in_index)})
        return values, index
