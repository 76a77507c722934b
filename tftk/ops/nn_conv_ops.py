"""Convolution and pooling variants built on conv2d / pooling: convolution, pool, atrous_conv2d,
depthwise_conv2d, separable_conv2d, conv3d, and fused_batch_norm, weighted_moments.

depthwise_conv2d runs one conv2d with a block-diagonal filter [h, w, C, C * M] made from the
depthwise filter by an einsum with the identity, so its gradients are conv2d's and einsum's. That
costs C times the multiplications of a direct depthwise kernel: right for correctness and small
channel counts, not a fast path for wide MobileNet-style layers.

conv3d is a numpy kernel: strided patch views contracted with the filter by tensordot, and the
input gradient accumulated back tap by tap.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, gather_ops, math_ops, reduction_ops
from tftk.ops.einsum_ops import einsum
from tftk.ops.matrix_ops import eye
from tftk.ops.nn_ops import avg_pool, batch_normalization, conv1d, conv2d, max_pool, moments
from tftk.ops.op_builder import make_op

__all__ = ["convolution", "pool", "atrous_conv2d", "depthwise_conv2d", "depthwise_conv2d_native",
           "separable_conv2d", "conv3d", "fused_batch_norm", "weighted_moments", "sufficient_statistics",
           "normalize_moments", "swish", "max_pool1d", "avg_pool1d", "max_pool2d", "avg_pool2d"]


def _spatial(values: Any, n: int, default: int, what: str) -> list[int]:
    if values is None:
        return [default] * n
    vals = [int(v) for v in np.atleast_1d(values)]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n or min(vals) < 1:
        raise ValueError(f"{what} must be {n} positive integers, got {list(np.atleast_1d(values))}")
    return vals


# ---- depthwise / separable / atrous -------------------------------------------------------------------

def _block_diagonal(filter_: Tensor) -> Tensor:
    """[h, w, C, M] -> [h, w, C, C * M] with out channel c * M + m reading only input channel c."""
    kh, kw, c, m = filter_.shape.as_list()
    if None in (kh, kw, c, m):
        raise ValueError(f"depthwise_conv2d needs a filter of known shape [h, w, in, multiplier], got {filter_.shape}")
    expanded = einsum("hwcm,cd->hwcdm", filter_, eye(c, dtype=filter_.dtype))
    return array_ops.reshape(expanded, [kh, kw, c, c * m])


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: str, rate: Any = None,  # noqa: A002
                     name: str | None = None, data_format: str | None = None, dilations: Any = None) -> Tensor:
    """Each input channel c convolved with its own filters [h, w, c, :]: out channel c * M + m."""
    with name_scope(name, "depthwise", [input, filter]):
        x = convert_to_tensor(input)
        w = convert_to_tensor(filter, dtype=x.dtype)
        rate = dilations if dilations is not None else rate
        dil = _spatial(rate[1:3] if rate is not None and len(np.atleast_1d(rate)) == 4 else rate, 2, 1, "rate")
        return conv2d(x, _block_diagonal(w), strides, padding, data_format=data_format or "NHWC",
                      dilations=[1, dil[0], dil[1], 1])


def depthwise_conv2d_native(input: Any, filter: Any, strides: Any, padding: str,  # noqa: A002
                            data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """tf.nn.depthwise_conv2d_native: depthwise_conv2d with TF's op-level argument names."""
    return depthwise_conv2d(input, filter, strides, padding, name=name, data_format=data_format,
                            dilations=dilations)


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: str, rate: Any = None, name: str | None = None, data_format: str | None = None,
                     dilations: Any = None) -> Tensor:
    """A depthwise convolution followed by a 1x1 (pointwise) convolution mixing the channels."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]):
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate=rate,
                                     data_format=data_format, dilations=dilations)
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], "VALID", data_format=data_format or "NHWC")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: str | None = None) -> Tensor:
    """conv2d with the filter taps `rate` pixels apart (dilated convolution), stride 1."""
    if int(rate) < 1:
        raise ValueError(f"atrous_conv2d: rate must be >= 1, got {rate}")
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, int(rate), int(rate), 1], name=name)


# ---- convolution / pool: dispatch on the number of spatial dimensions --------------------------------

def convolution(input: Any, filter: Any, padding: str, strides: Any = None, dilation_rate: Any = None,  # noqa: A002
                name: str | None = None, data_format: str | None = None, filters: Any = None,
                dilations: Any = None) -> Tensor:
    """N-d convolution (N = 1, 2 or 3 from the input's rank) with strides and dilation rates."""
    x = convert_to_tensor(input)
    w = filters if filters is not None else filter
    rank = x.shape.ndims
    if rank not in (3, 4, 5):
        raise ValueError(f"convolution: input must be rank 3, 4 or 5 (1-3 spatial dims), got shape {x.shape}")
    n = rank - 2
    st = _spatial(strides, n, 1, "strides")
    dil = _spatial(dilations if dilations is not None else dilation_rate, n, 1, "dilation_rate")
    if n == 1:
        return conv1d(x, w, st[0], padding, data_format=data_format or "NWC", dilations=dil[0], name=name)
    if n == 2:
        return conv2d(x, w, [1] + st + [1], padding, data_format=data_format or "NHWC",
                      dilations=[1] + dil + [1], name=name)
    return conv3d(x, w, [1] + st + [1], padding, data_format=data_format or "NDHWC",
                  dilations=[1] + dil + [1], name=name)


def pool(input: Any, window_shape: Sequence[int], pooling_type: str, padding: str,  # noqa: A002
         dilation_rate: Any = None, strides: Any = None, name: str | None = None,
         data_format: str | None = None) -> Tensor:
    """N-d max or average pooling (N = 1 or 2) with the given window and strides."""
    x = convert_to_tensor(input)
    n = len(window_shape)
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    if _spatial(dilation_rate, n, 1, "dilation_rate") != [1] * n:
        raise ValueError("pool: dilation_rate > 1 is not supported; use strides or a larger window")
    if x.shape.ndims is not None and x.shape.ndims != n + 2:
        raise ValueError(f"pool: input of shape {x.shape} does not have {n} spatial dimensions")
    st = _spatial(strides, n, 1, "strides")
    window = _spatial(window_shape, n, 1, "window_shape")
    fn = max_pool if pooling_type == "MAX" else avg_pool
    with name_scope(name, pooling_type.lower() + "_pool", [x]):
        if n == 1:
            y = fn(array_ops.expand_dims(x, 1), [1, 1] + window + [1], [1, 1] + st + [1], padding)
            return array_ops.squeeze(y, [1])
        if n == 2:
            return fn(x, [1] + window + [1], [1] + st + [1], padding, data_format=data_format or "NHWC")
    raise ValueError(f"pool: {n} spatial dimensions are not supported (1 or 2)")


# ---- conv3d ------------------------------------------------------------------------------------------

def _conv3d_geometry(in_dhw, k_dhw, strides, dilations, padding):
    out, pads = [], []
    for size, k, s, d in zip(in_dhw, k_dhw, strides, dilations):
        span = (k - 1) * d + 1
        if padding == "VALID":
            o = (size - span) // s + 1
            pads.append((0, 0))
        else:
            o = -(-size // s)
            total = max((o - 1) * s + span - size, 0)
            pads.append((total // 2, total - total // 2))
        if o < 1:
            raise ValueError(f"conv3d: a window of {span} does not fit an input dimension of {size}")
        out.append(o)
    return out, pads


def _patches(xpad, out, k, strides, dilations):
    """A view [N, OD, OH, OW, KD, KH, KW, C] of the input windows."""
    n, c = xpad.shape[0], xpad.shape[-1]
    s0, s1, s2, s3, s4 = xpad.strides
    shape = (n, *out, *k, c)
    view_strides = (s0, s1 * strides[0], s2 * strides[1], s3 * strides[2],
                    s1 * dilations[0], s2 * dilations[1], s3 * dilations[2], s4)
    return np.lib.stride_tricks.as_strided(xpad, shape, view_strides, writeable=False)


def _bind_conv3d(op, ctx):
    strides, dilations, padding = op.get_attr("strides"), op.get_attr("dilations"), op.get_attr("padding")

    def kernel(x, w):
        out, pads = _conv3d_geometry(x.shape[1:4], w.shape[:3], strides, dilations, padding)
        xpad = np.pad(x, [(0, 0), *pads, (0, 0)])
        return np.tensordot(_patches(xpad, out, w.shape[:3], strides, dilations), w, axes=4).astype(x.dtype)
    return kernel


def _bind_conv3d_grad(op, ctx):
    strides, dilations, padding = op.get_attr("strides"), op.get_attr("dilations"), op.get_attr("padding")
    wrt_input = op.get_attr("wrt") == "input"

    def kernel(x, w, dy):
        out, pads = _conv3d_geometry(x.shape[1:4], w.shape[:3], strides, dilations, padding)
        xpad = np.pad(x, [(0, 0), *pads, (0, 0)])
        if not wrt_input:
            patches = _patches(xpad, out, w.shape[:3], strides, dilations)
            return np.tensordot(patches, dy, axes=([0, 1, 2, 3], [0, 1, 2, 3])).astype(w.dtype)
        dxpad = np.zeros(xpad.shape, dy.dtype)
        for a in range(w.shape[0]):
            for b in range(w.shape[1]):
                for c in range(w.shape[2]):
                    contribution = np.tensordot(dy, w[a, b, c], axes=([4], [1]))  # [N, OD, OH, OW, C]
                    d0, h0, w0 = a * dilations[0], b * dilations[1], c * dilations[2]
                    dxpad[:, d0:d0 + out[0] * strides[0]:strides[0], h0:h0 + out[1] * strides[1]:strides[1],
                          w0:w0 + out[2] * strides[2]:strides[2]] += contribution
        (pd, _), (ph, _), (pw, _) = pads
        return dxpad[:, pd:pd + x.shape[1], ph:ph + x.shape[2], pw:pw + x.shape[3]]
    return kernel


registry.register_op("Conv3D", _bind_conv3d)
registry.register_op("Conv3DGrad", _bind_conv3d_grad)
registry.not_differentiable("Conv3DGrad")


@registry.register_gradient("Conv3D")
def _conv3d_grad(op, grad):
    x, w = op.inputs
    attrs = {k: op.get_attr(k) for k in ("strides", "dilations", "padding")}
    return [make_op("Conv3DGrad", [x, w, grad], x.dtype, x.shape, attrs={**attrs, "wrt": "input"}),
            make_op("Conv3DGrad", [x, w, grad], w.dtype, w.shape, attrs={**attrs, "wrt": "filter"})]


def conv3d(input: Any, filter: Any = None, strides: Any = None, padding: str | None = None,  # noqa: A002
           data_format: str = "NDHWC", dilations: Any = None, name: str | None = None,
           filters: Any = None) -> Tensor:
    """3-D cross-correlation of NDHWC `input` with a [d, h, w, in, out] filter, TF's output sizes.

    Dilations > 1 work here (TF's CPU kernel refuses them).
    """
    if data_format not in ("NDHWC", None):
        raise ValueError(f"conv3d: only data_format='NDHWC' is supported on CPU, got {data_format!r}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f'conv3d: padding must be "SAME" or "VALID", got {padding!r}')
    x = convert_to_tensor(input)
    if not x.dtype.is_floating:
        raise TypeError(f"Conv3D: input must be a float tensor, got {x.dtype.name}")
    w = convert_to_tensor(filter if filter is not None else filters, dtype=x.dtype)
    st = [int(v) for v in strides] if strides is not None else [1] * 5
    dil = [int(v) for v in dilations] if dilations is not None else [1] * 5
    if len(st) != 5 or st[0] != 1 or st[4] != 1 or len(dil) != 5 or dil[0] != 1 or dil[4] != 1:
        raise ValueError(f"conv3d: strides and dilations must be [1, d, h, w, 1], got {st} and {dil}")
    xs = x.shape.as_list() if x.shape.ndims is not None else [None] * 5
    ws = w.shape.as_list() if w.shape.ndims is not None else [None] * 5
    if len(xs) != 5 or len(ws) != 5:
        raise ValueError(f"conv3d: input and filter must be 5-D, got shapes {x.shape} and {w.shape}")
    if xs[4] is not None and ws[3] is not None and xs[4] != ws[3]:
        raise ValueError(f"conv3d: input has {xs[4]} channels but the filter expects {ws[3]} "
                         f"(filter shape {w.shape} = [d, h, w, in, out])")
    out = [None] * 3
    if None not in xs[1:4] and None not in ws[:3]:
        out, _ = _conv3d_geometry(xs[1:4], ws[:3], st[1:4], dil[1:4], padding)
    return make_op("Conv3D", [x, w], x.dtype, [xs[0], *out, ws[4]], name,
                   {"strides": tuple(st[1:4]), "dilations": tuple(dil[1:4]), "padding": padding})


# ---- fused_batch_norm / weighted_moments ---------------------------------------------------------------

def fused_batch_norm(x: Any, scale: Any, offset: Any, mean: Any = None, variance: Any = None,
                     epsilon: float = 0.001, data_format: str = "NHWC", is_training: bool = True,
                     name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(y, batch_mean, batch_variance) of 4-D `x` normalised per channel.

    In training the statistics come from the batch, and the returned variance is the unbiased
    one (n / (n - 1)), as TF returns it for the moving averages; in inference `mean` and `variance`
    are used and returned. As in TF, gradients flow from y only (not into the returned statistics,
    nor into `mean` and `variance` in inference).
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"fused_batch_norm: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    with name_scope(name, "FusedBatchNorm", [x, scale, offset]):
        t = convert_to_tensor(x)
        if t.dtype not in (dtypes.float16, dtypes.float32):
            raise TypeError(f"Value passed to parameter 'x' has DataType {t.dtype.name} not in list of allowed "
                            f"values: float16, float32 (fused_batch_norm)")
        if t.shape.ndims is not None and t.shape.ndims != 4:
            raise ValueError(f"fused_batch_norm: x must be 4-D, got shape {t.shape}")
        if data_format == "NCHW":
            t = array_ops.transpose(t, [0, 2, 3, 1])
        epsilon = max(float(epsilon), 1.001e-5)  # TF's minimum for the fused kernel
        if is_training:
            if mean is not None or variance is not None:
                raise ValueError("fused_batch_norm: mean and variance must be None when is_training=True")
            batch_mean, batch_var = moments(t, [0, 1, 2])
            n = math_ops.cast(reduction_ops.reduce_prod(array_ops.shape(t)[:3]), t.dtype)
            returned_var = batch_var * n / math_ops.maximum(n - 1.0, 1.0)
        else:
            if mean is None or variance is None:
                raise ValueError("fused_batch_norm: mean and variance are required when is_training=False")
            batch_mean = array_ops.stop_gradient(convert_to_tensor(mean, dtype=t.dtype))
            batch_var = returned_var = array_ops.stop_gradient(convert_to_tensor(variance, dtype=t.dtype))
        y = batch_normalization(t, batch_mean, batch_var, offset, scale, epsilon)
        if data_format == "NCHW":
            y = array_ops.transpose(y, [0, 3, 1, 2])
        # As TF's FusedBatchNormGrad: gradients flow from y only, not from the returned statistics.
        return y, array_ops.stop_gradient(batch_mean), array_ops.stop_gradient(returned_var)


def weighted_moments(x: Any, axes: Sequence[int], frequency_weights: Any, name: str | None = None,
                     keep_dims: bool | None = None, keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """(mean, variance) of x over `axes` with each entry counted frequency_weights times."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "weighted_moments", [x, frequency_weights]):
        t = convert_to_tensor(x)
        w = convert_to_tensor(frequency_weights, dtype=t.dtype)
        weighted_sum = reduction_ops.reduce_sum(w * t, axes, keepdims=True)
        total = reduction_ops.reduce_sum(w + array_ops.zeros_like(t), axes, keepdims=True)
        mean = weighted_sum / total
        variance = reduction_ops.reduce_sum(w * math_ops.squared_difference(t, mean), axes, keepdims=True) / total
        if not keep:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        return mean, variance


def sufficient_statistics(x: Any, axes: Sequence[int], shift: Any = None, keep_dims: bool | None = None,
                          name: str | None = None, keepdims: bool | None = None) -> tuple:
    """(count, sum of x - shift, sum of squares of x - shift, shift) over `axes`, for normalize_moments."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        t = convert_to_tensor(x)
        dims = array_ops.shape(t)
        count = math_ops.cast(reduction_ops.reduce_prod(gather_ops.gather(dims, list(axes))), t.dtype)
        centred = t if shift is None else math_ops.subtract(t, shift)
        mean_ss = reduction_ops.reduce_sum(centred, axes, keepdims=keep)
        var_ss = reduction_ops.reduce_sum(math_ops.square(centred), axes, keepdims=keep)
        return count, mean_ss, var_ss, (None if shift is None else convert_to_tensor(shift, dtype=t.dtype))


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None) -> tuple:
    """(mean, variance) from sufficient statistics."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(convert_to_tensor(counts))
        shifted_mean = math_ops.multiply(mean_ss, divisor)
        mean = shifted_mean if shift is None else math_ops.add(shifted_mean, shift)
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean))
        return mean, variance


def swish(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    """x * sigmoid(beta * x) (also tf.nn.silu)."""
    with name_scope(name, "swish", [features]):
        x = convert_to_tensor(features)
        return math_ops.multiply(x, math_ops.sigmoid(math_ops.multiply(x, beta)))


def _pool_nd(pooling_type: str, n: int):
    def pool_fn(input: Any, ksize: Any, strides: Any, padding: str, data_format: str | None = None,  # noqa: A002
                name: str | None = None) -> Tensor:
        return pool(input, _spatial(ksize[1:-1] if len(np.atleast_1d(ksize)) == n + 2 else ksize, n, 1, "ksize"),
                    pooling_type, padding,
                    strides=_spatial(strides[1:-1] if len(np.atleast_1d(strides)) == n + 2 else strides, n, 1,
                                     "strides"), name=name)
    pool_fn.__name__ = f"{pooling_type.lower()}_pool{n}d"
    pool_fn.__doc__ = f"{n}-D {pooling_type.lower()} pooling (ksize and strides: ints, {n} values or {n + 2})."
    return pool_fn


max_pool1d, avg_pool1d = _pool_nd("MAX", 1), _pool_nd("AVG", 1)
max_pool2d, avg_pool2d = _pool_nd("MAX", 2), _pool_nd("AVG", 2)
