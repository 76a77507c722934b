"""2-D convolution and pooling ops (tf.nn.conv2d, conv2d_transpose, conv1d, max_pool, avg_pool).

Each constructor checks ranks, channels and the window geometry at build time; each kernel is bound
once per plan (the Numba kernels of `tftk.kernels.conv` and `tftk.kernels.pool` are imported inside
the binders, so building a graph loads no Numba), and each gradient sits beside its op. The fused
gradient ops (Conv2DBackpropInput, Conv2DBackpropFilter, MaxPoolGrad, AvgPoolGrad) mirror TF's.
`tftk.ops.nn_ops` re-exports the public names. NCHW inputs are transposed to NHWC around the same
ops, so their gradients are those ops'.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import float_input, make_multi_op, make_op

__all__ = ["conv2d", "conv2d_transpose", "conv1d", "max_pool", "avg_pool"]


# ---- convolution ------------------------------------------------------------------------------

def _pair_from_4(values: Any, what: str, op_type: str) -> tuple[int, int]:
    """TF's [1, h, w, 1] strides/dilations/ksize (an int or a pair is accepted too) -> (h, w)."""
    if isinstance(values, int):
        return values, values
    vals = [int(v) for v in values]
    if len(vals) == 2:
        return vals[0], vals[1]
    if len(vals) != 4 or vals[0] != 1 or vals[3] != 1:
        raise ValueError(f"{op_type}: {what} must be [1, h, w, 1] for NHWC (batch and depth 1), got {list(values)}")
    if vals[1] < 1 or vals[2] < 1:
        raise ValueError(f"{op_type}: {what} must be >= 1, got {list(values)}")
    return vals[1], vals[2]


def _check_padding(padding: Any, op_type: str) -> str:
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding not in ("SAME", "VALID"):
        raise ValueError(f'{op_type}: padding must be "SAME" or "VALID", got {padding!r}')
    return padding


def _check_format(data_format: str | None, op_type: str) -> bool:
    """True for NCHW, False for NHWC (the default); anything else is refused."""
    if data_format not in ("NHWC", "NCHW", None):
        raise ValueError(f"{op_type}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    return data_format == "NCHW"


def _nhwc_order(values: Any) -> Any:
    """NCHW's [1, 1, h, w] strides/dilations/ksize as NHWC's [1, h, w, 1] (an int or a pair is kept)."""
    if values is None or isinstance(values, int):
        return values
    vals = [int(v) for v in values]
    if len(vals) != 4:
        return vals
    if vals[0] != 1 or vals[1] != 1:
        raise ValueError(f"NCHW: strides, dilations and ksize must be [1, 1, h, w] (batch and depth 1), got {vals}")
    return [1, vals[2], vals[3], 1]


def _in_nchw(build: Callable[[Tensor], Tensor], x: Tensor, name: str | None, scope: str) -> Tensor:
    """`build` (an NHWC op) applied to NCHW `x`: transposed in and out, the result named `name`."""
    with name_scope(None, scope, [x]):
        y = build(array_ops.transpose(x, [0, 2, 3, 1]))
    return array_ops.transpose(y, [0, 3, 1, 2], name=name)


def _rank4(x: Tensor, what: str, op_type: str) -> list[int | None]:
    if x.shape.ndims is None:
        return [None] * 4
    if x.shape.ndims != 4:
        raise ValueError(f"{op_type}: {what} must be 4-D, got shape {x.shape}")
    return x.shape.as_list()


def _geometry(attrs: dict, in_hw: Sequence[int], k_hw: Sequence[int]) -> tuple[tuple[int, int], tuple]:
    """Output (h, w) and pads ((top, bottom), (left, right)) of a window op with TF's padding rule."""
    return _window_geometry(tuple(in_hw), tuple(k_hw), tuple(attrs["strides"][:2]),
                            tuple(attrs.get("dilations", (1, 1))[:2]), attrs["padding"])


@functools.lru_cache(maxsize=1024)
def _window_geometry(in_hw: tuple[int, int], k_hw: tuple[int, int], strides: tuple[int, int],
                     dil: tuple[int, int], padding: str) -> tuple[tuple[int, int], tuple]:
    """`_geometry` of hashable sizes, computed once per geometry: kernels ask for it at every call."""
    from tftk.kernels.conv import conv_output_size
    oh, *pad_h = conv_output_size(in_hw[0], k_hw[0], strides[0], dil[0], padding)
    ow, *pad_w = conv_output_size(in_hw[1], k_hw[1], strides[1], dil[1], padding)
    return (oh, ow), (tuple(pad_h), tuple(pad_w))


def _static_out_hw(attrs: dict, in_hw: Sequence[Any], k_hw: Sequence[Any], op_type: str) -> list[Any]:
    """Static output (h, w) of a window op; None where the input or window size is unknown."""
    from tftk.kernels.conv import conv_output_size
    dil = attrs.get("dilations", (1, 1))
    out = []
    for i in range(2):
        if in_hw[i] is None or k_hw[i] is None:
            out.append(None)
            continue
        try:
            out.append(conv_output_size(in_hw[i], k_hw[i], attrs["strides"][i], dil[i], attrs["padding"])[0])
        except ValueError as e:
            raise ValueError(f"{op_type}: {e}") from None
    return out


def _conv_attrs(strides: Any, padding: Any, dilations: Any, op_type: str) -> dict:
    attrs = {"strides": _pair_from_4(strides, "strides", op_type), "padding": _check_padding(padding, op_type),
             "dilations": _pair_from_4(dilations if dilations is not None else [1, 1, 1, 1], "dilations", op_type)}
    if attrs["dilations"] != (1, 1) and attrs["strides"] != (1, 1):
        raise ValueError(f"{op_type}: dilations > 1 need strides of 1, got strides {attrs['strides']}")
    return attrs


def conv2d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002
           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = None,
           name: str | None = None, filters: Any = None) -> Tensor:
    """2-D cross-correlation of `input` (NHWC, or NCHW) with an HWIO `filter` [h, w, in, out], TF's output sizes."""
    filter = filter if filter is not None else filters
    if strides is None or padding is None:
        raise ValueError("conv2d: strides and padding are required")
    x = float_input(input, "Conv2D", "input")
    if _check_format(data_format, "Conv2D"):
        _rank4(x, "input", "Conv2D")
        return _in_nchw(lambda t: conv2d(t, filter, _nhwc_order(strides), padding, dilations=_nhwc_order(dilations)),
                        x, name, "Conv2D_NCHW")
    w = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = _conv_attrs(strides, padding, dilations, "Conv2D")
    xs, ws = _rank4(x, "input", "Conv2D"), _rank4(w, "filter", "Conv2D")
    if xs[3] is not None and ws[2] is not None and xs[3] != ws[2]:
        raise ValueError(f"Conv2D: input has {xs[3]} channels but the filter expects {ws[2]} "
                         f"(input shape {x.shape}, filter shape {w.shape} = [h, w, in, out])")
    oh, ow = _static_out_hw(attrs, xs[1:3], ws[0:2], "Conv2D")
    return make_op("Conv2D", [x, w], x.dtype, [xs[0], oh, ow, ws[3]], name, attrs)


# Work a convolution call costs beyond its products, per filter weight, in flops of its products:
# the Winograd kernels transform the filter on every call (~8 ns a weight at ~100 flops a ns).
_FIXED_FLOPS_PER_WEIGHT = 800.0


def _conv_pieces(x_shape: Sequence[int], out_hw: Sequence[int], filter_shape: Sequence[int], dtype: np.dtype,
                 strides: Sequence[int], dilations: Sequence[int]) -> list[tuple[int, int]]:
    """Image ranges a convolution call is cut in for the work-sharing threads (by its multiply-adds).

    A call that runs by Winograd stays whole where its pieces would be too small for it (they would
    take the slower im2col path, with other rounding)."""
    from tftk.kernels import winograd, work_sharing
    ranges, shareable = _conv_ranges(tuple(x_shape), tuple(out_hw), tuple(filter_shape), np.dtype(dtype),
                                     tuple(strides), tuple(dilations), work_sharing.tuning(),
                                     (_FIXED_FLOPS_PER_WEIGHT, winograd.MIN_CHANNELS, winograd.MIN_ROWS))
    if shareable:
        work_sharing.count_shareable()
    return list(ranges)


@functools.lru_cache(maxsize=1024)
def _conv_ranges(x_shape: tuple[int, ...], out_hw: tuple[int, int], filter_shape: tuple[int, ...], dtype: np.dtype,
                 strides: tuple[int, ...], dilations: tuple[int, ...], *tuning: tuple
                 ) -> tuple[tuple[tuple[int, int], ...], bool]:
    """`_conv_pieces` computed once per geometry, and whether the call was big enough to share; `tuning`:
    the constants it reads (the cut's, this module's and Winograd's), so that no result cached under
    other values is reused."""
    from tftk.kernels import winograd, work_sharing
    weights = float(math.prod(filter_shape))
    ranges = work_sharing.cut(x_shape[0], 2.0 * out_hw[0] * out_hw[1] * weights, _FIXED_FLOPS_PER_WEIGHT * weights)
    shareable = len(ranges) > 1
    smallest = (min(b1 - b0 for b0, b1 in ranges),) + tuple(x_shape[1:])
    if winograd.applies(dtype, x_shape, filter_shape, strides, dilations) \
            and not winograd.applies(dtype, smallest, filter_shape, strides, dilations):
        return ((0, x_shape[0]),), shareable
    return tuple(ranges), shareable


def _bind_conv2d(op, ctx):
    from tftk.kernels.conv import conv2d as kernel
    from tftk.kernels.work_sharing import stacked
    attrs, strides, dil = op.attrs, op.get_attr("strides"), op.get_attr("dilations")

    def run(x, w):
        out_hw, pads = _geometry(attrs, x.shape[1:3], w.shape[:2])
        return stacked(_conv_pieces(x.shape, out_hw, w.shape, x.dtype, strides, dil),
                       lambda b0, b1: kernel(x[b0:b1], w, strides, pads, dil))
    return run


def _bind_conv2d_backprop_input(op, ctx):
    from tftk.kernels.conv import conv2d_backprop_input as kernel
    from tftk.kernels.work_sharing import stacked
    attrs, strides, dil = op.attrs, op.get_attr("strides"), op.get_attr("dilations")

    def run(sizes, w, dy):
        sizes = tuple(int(s) for s in sizes)
        _, pads = _geometry(attrs, sizes[1:3], w.shape[:2])
        return stacked(_conv_pieces(sizes, dy.shape[1:3], w.shape, dy.dtype, strides, dil),
                       lambda b0, b1: kernel(dy[b0:b1], w, (b1 - b0,) + sizes[1:], strides, pads, dil))
    return run


def _bind_conv2d_backprop_filter(op, ctx):
    from tftk.kernels.conv import conv2d_backprop_filter as kernel
    from tftk.kernels.work_sharing import summed
    attrs, strides, dil = op.attrs, op.get_attr("strides"), op.get_attr("dilations")

    def run(x, sizes, dy):
        sizes = tuple(int(s) for s in sizes)
        _, pads = _geometry(attrs, x.shape[1:3], sizes[:2])
        return summed(_conv_pieces(x.shape, dy.shape[1:3], sizes, x.dtype, strides, dil),
                      lambda b0, b1: kernel(x[b0:b1], dy[b0:b1], sizes, strides, pads, dil))
    return run


def _fused_conv2d_bias(relu: bool) -> Callable:
    """The kernel factory of Conv2D -> BiasAdd or Add (-> Relu) fused in a plan: inputs (x, filter, bias).

    A 1-channel input into 16k channels runs `conv_one_channel.conv2d`, which starts its sums from
    the bias and applies the ReLU as it stores them (LeNet's first layer: 1.03 -> 0.48 ms); anything
    else runs the Conv2D kernel a plain Conv2D gets, then the bias (and ReLU) in place on its output.
    An Add's second input may be any value that broadcasts against the output (`conv + b` with b of
    shape [channels] is the tutorials' bias): one the output cannot hold gives a new array.
    """

    def bind(op, ctx):
        from tftk.kernels import bias as bias_kernels, conv_one_channel
        conv_op = op.producer.producer if relu else op.producer
        convolve = registry.lookup("Conv2D").kernel(conv_op, ctx)
        attrs, strides, dil = conv_op.attrs, conv_op.get_attr("strides"), conv_op.get_attr("dilations")

        def run(x, w, b):
            if conv_one_channel.applies(x.dtype, x.shape, w.shape, strides) and b.shape == w.shape[3:] \
                    and b.dtype == x.dtype:
                _, pads = _geometry(attrs, x.shape[1:3], w.shape[:2])
                return conv_one_channel.conv2d(x, w, strides, pads, dil, b, relu)
            y = convolve(x, w)
            if relu:
                return bias_kernels.bias_relu(y, b, in_place=True)
            fits = np.broadcast_shapes(y.shape, b.shape) == y.shape and np.result_type(y, b) == y.dtype
            return bias_kernels.bias_add(y, b, out=y if fits else None)
        return run
    return bind


registry.register_op("Conv2D", _bind_conv2d, fresh=True, rows=batch_rows.per_example(0))
registry.register_op("Conv2DBackpropInput", _bind_conv2d_backprop_input, fresh=True, rows=batch_rows.to_shape(1))
registry.register_op("Conv2DBackpropFilter", _bind_conv2d_backprop_filter, fresh=True,
                     rows=batch_rows.per_example_sum(0, 2))
# Plans run a convolution read only by a bias add, and that read only by a ReLU, as one kernel; the graph
# (and its GraphDef) keeps TF's three ops, as TF's own _FusedConv2D rewrite does.
registry.register_op("Conv2DBiasAdd", _fused_conv2d_bias(relu=False), fresh=True, rows=batch_rows.per_example(0))
registry.register_op("Conv2DBiasAddRelu", _fused_conv2d_bias(relu=True), fresh=True, rows=batch_rows.per_example(0))
registry.not_differentiable("Conv2DBiasAdd", "Conv2DBiasAddRelu")  # exist in plans only, never in a graph
registry.register_fusion("Conv2D", "BiasAdd", "Conv2DBiasAdd")
registry.register_fusion("Conv2D", "Add", "Conv2DBiasAdd")  # `conv2d(x, w) + b`, as TF's Grappler fuses it
registry.register_fusion("Conv2DBiasAdd", "Relu", "Conv2DBiasAddRelu")


def _shape_of(t: Tensor) -> Tensor:
    """t's shape as an int32 tensor: a constant when static, else a Shape op."""
    if t.shape.is_fully_defined():
        from tftk.ops.constant_op import constant
        return constant(np.asarray(t.shape.as_list(), dtype=np.int32))
    return array_ops.shape(t)


def _backprop_input(sizes: Tensor, w: Tensor, dy: Tensor, attrs: dict, static: Any, name: str | None = None) -> Tensor:
    return make_op("Conv2DBackpropInput", [sizes, w, dy], dy.dtype, static, name, dict(attrs))


def _backprop_filter(x: Tensor, sizes: Tensor, dy: Tensor, attrs: dict, static: Any) -> Tensor:
    return make_op("Conv2DBackpropFilter", [x, sizes, dy], dy.dtype, static, None, dict(attrs))


def _conv(x: Tensor, w: Tensor, attrs: dict) -> Tensor:
    xs, ws = x.shape.as_list() if x.shape.ndims else [None] * 4, w.shape.as_list() if w.shape.ndims else [None] * 4
    oh, ow = _static_out_hw(attrs, xs[1:3], ws[0:2], "Conv2D")
    return make_op("Conv2D", [x, w], x.dtype, [xs[0], oh, ow, ws[3]], None, dict(attrs))


@registry.register_gradient("Conv2D")
def _conv2d_grad(op, grad):
    x, w = op.inputs
    return [_backprop_input(_shape_of(x), w, grad, op.attrs, x.shape),
            _backprop_filter(x, _shape_of(w), grad, op.attrs, w.shape)]


@registry.register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    _, w, dy = op.inputs
    return [None, _backprop_filter(grad, _shape_of(w), dy, op.attrs, w.shape), _conv(grad, w, op.attrs)]


@registry.register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    return [_backprop_input(_shape_of(x), grad, dy, op.attrs, x.shape), None, _conv(x, grad, op.attrs)]


def conv2d_transpose(value: Any, filter: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NHWC", name: str | None = None, dilations: Any = None) -> Tensor:
    """The gradient of conv2d w.r.t. its input: `filter` is [h, w, out_channels, in_channels]."""
    dy = float_input(value, "conv2d_transpose", "value")
    if _check_format(data_format, "conv2d_transpose"):
        _rank4(dy, "value", "conv2d_transpose")
        known = constant_value(convert_to_tensor(output_shape, dtype=dtypes.int32))
        if known is None or len(known) != 4:
            raise ValueError("conv2d_transpose: NCHW needs a constant 4-element output_shape")
        n, c, h, w = (int(d) for d in known)
        return _in_nchw(lambda t: conv2d_transpose(t, filter, [n, h, w, c], _nhwc_order(strides), padding,
                                                   dilations=_nhwc_order(dilations)),
                        dy, name, "conv2d_transpose_NCHW")
    w = convert_to_tensor(filter, dtype=dy.dtype, name="filter")
    attrs = _conv_attrs(strides, padding, dilations, "conv2d_transpose")
    ys, ws = _rank4(dy, "value", "conv2d_transpose"), _rank4(w, "filter", "conv2d_transpose")
    if ys[3] is not None and ws[3] is not None and ys[3] != ws[3]:
        raise ValueError(f"conv2d_transpose: value has {ys[3]} channels but filter shape {w.shape} expects "
                         f"{ws[3]} (filter is [h, w, out_channels, in_channels])")
    sizes = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
    known = constant_value(sizes)
    static = TensorShape([None] * 4)
    if known is not None:
        known = [int(d) for d in known]
        if len(known) != 4:
            raise ValueError(f"conv2d_transpose: output_shape must have 4 elements, got {known}")
        if ws[2] is not None and known[3] != ws[2]:
            raise ValueError(f"conv2d_transpose: output_shape has {known[3]} channels but the filter "
                             f"produces {ws[2]}")
        expected = _static_out_hw(attrs, known[1:3], ws[0:2], "conv2d_transpose")
        if None not in ys[1:3] and expected != ys[1:3]:
            raise ValueError(f"conv2d_transpose: output_shape {known} convolved back gives spatial size "
                             f"{expected}, but value has {ys[1:3]}")
        static = TensorShape(known)
    with name_scope(name, "conv2d_transpose", [dy, w, sizes]):
        return _backprop_input(sizes, w, dy, attrs, static)


def conv1d(value: Any, filters: Any = None, stride: Any = None, padding: Any = None,
           use_cudnn_on_gpu: bool = True, data_format: str = "NWC", name: str | None = None,
           filter: Any = None, dilations: Any = None) -> Tensor:  # noqa: A002
    """1-D convolution of [batch, width, in] with [k, in, out], computed as a conv2d of height 1."""
    if data_format not in ("NWC", None):
        raise ValueError(f"conv1d: only data_format='NWC' is supported, got {data_format!r}")
    filters = filters if filters is not None else filter
    stride = stride if isinstance(stride, int) else int(list(stride)[-2] if len(list(stride)) == 3 else list(stride)[0])
    dilation = 1 if dilations is None else (dilations if isinstance(dilations, int) else int(list(dilations)[-1]))
    with name_scope(name, "conv1d", [value, filters]):
        x = float_input(value, "conv1d", "value")
        if x.shape.ndims not in (None, 3):
            raise ValueError(f"conv1d: value must be 3-D [batch, width, channels], got shape {x.shape}")
        w = convert_to_tensor(filters, dtype=x.dtype, name="filters")
        if w.shape.ndims not in (None, 3):
            raise ValueError(f"conv1d: filters must be 3-D [width, in, out], got shape {w.shape}")
        y = conv2d(array_ops.expand_dims(x, 1), array_ops.expand_dims(w, 0), [1, 1, stride, 1], padding,
                   dilations=[1, 1, dilation, 1])
        return array_ops.squeeze(y, [1])


# ---- pooling ----------------------------------------------------------------------------------

def _pool_attrs(x: Tensor, ksize: Any, strides: Any, padding: Any, op_type: str) -> tuple:
    attrs = {"ksize": _pair_from_4(ksize, "ksize", op_type), "strides": _pair_from_4(strides, "strides", op_type),
             "padding": _check_padding(padding, op_type)}
    xs = _rank4(x, "value", op_type)
    oh, ow = _static_out_hw(attrs, xs[1:3], attrs["ksize"], op_type)
    return attrs, [xs[0], oh, ow, xs[3]]


def _pool_in_nchw(pool_fn: Callable, x: Tensor, ksize: Any, strides: Any, padding: Any, name: str | None,
                  op_type: str) -> Tensor:
    """`pool_fn` (max_pool or avg_pool) of NCHW `x`, computed in NHWC."""
    _rank4(x, "value", op_type)
    return _in_nchw(lambda t: pool_fn(t, _nhwc_order(ksize), _nhwc_order(strides), padding), x, name,
                    op_type + "_NCHW")


def _pooling(op, kernel: Callable) -> Callable:
    """`kernel(x, ksize, strides, pads)` with the pads worked out from each input's size."""
    attrs, ksize, strides = op.attrs, op.get_attr("ksize"), op.get_attr("strides")

    def run(x):
        _, pads = _geometry(attrs, x.shape[1:3], ksize)
        return kernel(x, ksize, strides, pads)
    return run


def _bind_max_pool(op, ctx):
    from tftk.kernels.pool import max_pool
    return _pooling(op, max_pool)


def _tiles(op) -> Callable:
    """For a MaxPoolGrad (or a plan's fusion of it), `tiles(x)`: whether the MaxPool behind its arg-max input
    pools x in 2x2 stride-2 windows that tile it (`tftk.kernels.pool.tiled_2x2`)."""
    from tftk.kernels.pool import tiled_2x2
    pool_op = op.inputs[1].op
    if pool_op.type != "MaxPool":
        return lambda x: False
    attrs, ksize, strides = pool_op.attrs, pool_op.get_attr("ksize"), pool_op.get_attr("strides")
    return lambda x: tiled_2x2(x.dtype, x.shape, ksize, strides, _geometry(attrs, x.shape[1:3], ksize)[1])


def _bind_max_pool_grad(op, ctx):
    from tftk.kernels.pool import max_pool_2x2_grad, max_pool_grad as kernel
    tiles = _tiles(op)
    return lambda dy, argmax, x: max_pool_2x2_grad(dy, x) if tiles(x) else kernel(dy, argmax, x.shape)


def _max_pool_grad_grad(ddx: np.ndarray, argmax: np.ndarray) -> np.ndarray:
    """d(MaxPoolGrad)/d(dy) applied to ddx: each output reads the input gradient at its arg-max."""
    flat = ddx.reshape(-1)
    return np.where(argmax >= 0, flat[np.maximum(argmax, 0)], 0).astype(ddx.dtype, copy=False)


def _bind_max_pool_relu_grad(op, ctx):
    from tftk.kernels.pool import max_pool_2x2_grad, max_pool_relu_grad as kernel
    tiles = _tiles(op)
    return lambda dy, argmax, x, relu_y: (max_pool_2x2_grad(dy, x, relu_y) if tiles(x)
                                          else kernel(dy, argmax, x.shape, relu_y))


registry.register_op("MaxPool", _bind_max_pool, fresh=True, rows=batch_rows.per_slice_positions)
registry.register_op("MaxPoolGrad", _bind_max_pool_grad, fresh=True, rows=batch_rows.pool_gradient)
# Plans run a max-pool gradient read only by a ReLU gradient (ReLU then pooling: every conv layer's
# backward pass) as one kernel; the graph keeps TF's two ops.
registry.register_op("MaxPoolGradReluGrad", _bind_max_pool_relu_grad, fresh=True, rows=batch_rows.pool_gradient)
registry.not_differentiable("MaxPoolGradReluGrad")  # exists in plans only, never in a graph
registry.register_fusion("MaxPoolGrad", "ReluGrad", "MaxPoolGradReluGrad")
registry.register_op("MaxPoolGradGrad", lambda op, ctx: _max_pool_grad_grad)
registry.not_differentiable("MaxPoolGradGrad")


@registry.register_gradient("MaxPool")
def _max_pool_grad(op, grad, _argmax_grad):
    x = op.inputs[0]
    return [make_op("MaxPoolGrad", [grad, op.outputs[1], x], grad.dtype, x.shape)]


@registry.register_gradient("MaxPoolGrad")
def _max_pool_grad_grad_rule(op, grad):
    dy, argmax, _ = op.inputs
    return [make_op("MaxPoolGradGrad", [grad, argmax], grad.dtype, dy.shape), None, None]


def max_pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",
             name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """Max over [kh, kw] windows of `value` (NHWC, or NCHW); the gradient goes to the first max of each window."""
    x = float_input(value if value is not None else input, "MaxPool", "value")
    if _check_format(data_format, "MaxPool"):
        return _pool_in_nchw(max_pool, x, ksize, strides, padding, name, "MaxPool")
    attrs, shape = _pool_attrs(x, ksize, strides, padding, "MaxPool")
    op = make_multi_op("MaxPool", [x], [(x.dtype, shape), (dtypes.int64, shape)], name, attrs)
    return op.outputs[0]


def _bind_avg_pool(op, ctx):
    from tftk.kernels.pool import avg_pool
    return _pooling(op, avg_pool)


def _bind_avg_pool_grad(op, ctx):
    from tftk.kernels.pool import avg_pool_grad as kernel
    attrs, ksize, strides = op.attrs, op.get_attr("ksize"), op.get_attr("strides")

    def run(sizes, dy):
        sizes = tuple(int(s) for s in sizes)
        _, pads = _geometry(attrs, sizes[1:3], ksize)
        return kernel(dy, sizes, ksize, strides, pads)
    return run


registry.register_op("AvgPool", _bind_avg_pool, rows=batch_rows.per_example(0))
registry.register_op("AvgPoolGrad", _bind_avg_pool_grad, rows=batch_rows.to_shape())


@registry.register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    x = op.inputs[0]
    return [make_op("AvgPoolGrad", [_shape_of(x), grad], grad.dtype, x.shape, None, dict(op.attrs))]


@registry.register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    dy = op.inputs[1]
    return [None, make_op("AvgPool", [grad], grad.dtype, dy.shape, None, dict(op.attrs))]


def avg_pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",
             name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """Mean over [kh, kw] windows of `value` (NHWC, or NCHW), counting only in-bounds elements (TF's SAME rule)."""
    x = float_input(value if value is not None else input, "AvgPool", "value")
    if _check_format(data_format, "AvgPool"):
        return _pool_in_nchw(avg_pool, x, ksize, strides, padding, name, "AvgPool")
    attrs, shape = _pool_attrs(x, ksize, strides, padding, "AvgPool")
    return make_op("AvgPool", [x], x.dtype, shape, name, attrs)
