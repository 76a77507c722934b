"""Convolution backprops and transposes as TF exposes them: conv2d_backprop_input/filter,
conv3d_backprop_filter(_v2), depthwise_conv2d(_native)_backprop_input/filter, conv1d_transpose,
conv3d_transpose, conv_transpose (1-3 spatial dims) and atrous_conv2d_transpose.

A convolution is linear in its input and in its filter, so each backprop is the gradient of the
forward convolution at zeros of the given size, contracted with `out_backprop`: built with
`gradients`, it runs the forward convolution's own gradient kernels and nothing else. The 3-D
transpose gets a gradient of its own (a 3-D convolution and a filter backprop), since the 3-D
gradient kernel has none.
"""

from __future__ import annotations

from typing import Any, Callable

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.custom_gradient import custom_gradient
from tftk.ops.gradients_impl import gradients
from tftk.ops.nn_conv_ops import conv3d, depthwise_conv2d
from tftk.ops.nn_ops import conv2d, conv2d_transpose

__all__ = ["conv2d_backprop_input", "conv2d_backprop_filter", "conv3d_backprop_filter", "conv3d_backprop_filter_v2",
           "depthwise_conv2d_backprop_input", "depthwise_conv2d_backprop_filter",
           "depthwise_conv2d_native_backprop_input", "depthwise_conv2d_native_backprop_filter",
           "conv1d_transpose", "conv3d_transpose", "conv_transpose", "atrous_conv2d_transpose"]


def _linear_backprop(forward: Callable[[Tensor, Tensor], Tensor], wrt_input: bool, fixed: Any, sizes: Any,
                     out_backprop: Any) -> Tensor:
    """d<forward(x, w), out_backprop>/d(x or w), the other argument `fixed`, the variable at zeros of `sizes`."""
    dy = convert_to_tensor(out_backprop, name="out_backprop")
    other = convert_to_tensor(fixed, dtype=dy.dtype)
    size = convert_to_tensor(sizes, dtype=dtypes.int32, name="sizes")
    at = array_ops.zeros(size, dy.dtype)
    known = constant_value(size)
    if known is not None:
        at.set_shape([int(d) for d in known])
    y = forward(at, other) if wrt_input else forward(other, at)
    (grad,) = gradients(y, [at], grad_ys=dy)
    return grad


def _conv2d_fn(strides: Any, padding: str, dilations: Any) -> Callable:
    return lambda x, w: conv2d(x, w, strides, padding, dilations=dilations)


def conv2d_backprop_input(input_sizes: Any, filter: Any = None, out_backprop: Any = None, strides: Any = None,  # noqa: A002
                          padding: Any = None, use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
                          dilations: Any = None, name: str | None = None, filters: Any = None) -> Tensor:
    """The gradient of conv2d w.r.t. an input of shape `input_sizes`, given out_backprop."""
    with name_scope(name, "Conv2DBackpropInput", [filter, out_backprop]):
        return _linear_backprop(_conv2d_fn(strides, padding, dilations), True,
                                filters if filters is not None else filter, input_sizes, out_backprop)


def conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = None,
                           name: str | None = None) -> Tensor:
    """The gradient of conv2d w.r.t. a filter of shape `filter_sizes`, given input and out_backprop."""
    with name_scope(name, "Conv2DBackpropFilter", [input, out_backprop]):
        return _linear_backprop(_conv2d_fn(strides, padding, dilations), False, input, filter_sizes, out_backprop)


def conv3d_backprop_filter_v2(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002
                              data_format: str = "NDHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The gradient of conv3d w.r.t. a filter of shape `filter_sizes` (differentiable in input and out_backprop)."""
    forward = lambda x, w: conv3d(x, w, strides, padding, dilations=dilations)  # noqa: E731

    @custom_gradient
    def backprop(x: Tensor, dy: Tensor):
        def grad(g: Tensor):  # bilinear in (x, dy): <g, F(x, dy)> = <dy, conv3d(x, g)>
            return [_linear_backprop(forward, True, g, array_ops.shape(x), dy), forward(x, g)]
        return _linear_backprop(forward, False, x, filter_sizes, dy), grad

    with name_scope(name, "Conv3DBackpropFilterV2", [input, out_backprop]):
        x = convert_to_tensor(input, name="input")
        result = backprop(x, convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop"))
        known = constant_value(convert_to_tensor(filter_sizes, dtype=dtypes.int32))
        if known is not None:
            result.set_shape([int(d) for d in known])
        return result


conv3d_backprop_filter = conv3d_backprop_filter_v2  # TF 2's compat.v1 maps the v1 name to the v2 op


def _depthwise_fn(strides: Any, padding: str, dilations: Any) -> Callable:
    return lambda x, w: depthwise_conv2d(x, w, strides, padding, dilations=dilations)


def depthwise_conv2d_native_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any, strides: Any,  # noqa: A002
                                           padding: Any, data_format: str = "NHWC", dilations: Any = None,
                                           name: str | None = None) -> Tensor:
    """The gradient of depthwise_conv2d w.r.t. an input of shape `input_sizes`."""
    with name_scope(name, "DepthwiseConv2dNativeBackpropInput", [filter, out_backprop]):
        return _linear_backprop(_depthwise_fn(strides, padding, dilations), True, filter, input_sizes, out_backprop)


def depthwise_conv2d_native_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,  # noqa: A002
                                            padding: Any, data_format: str = "NHWC", dilations: Any = None,
                                            name: str | None = None) -> Tensor:
    """The gradient of depthwise_conv2d w.r.t. a filter of shape `filter_sizes` [h, w, in, multiplier]."""
    with name_scope(name, "DepthwiseConv2dNativeBackpropFilter", [input, out_backprop]):
        return _linear_backprop(_depthwise_fn(strides, padding, dilations), False, input, filter_sizes, out_backprop)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def conv3d_transpose(value: Any, filter: Any = None, output_shape: Any = None, strides: Any = None,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NDHWC", name: str | None = None,
                     filters: Any = None, dilations: Any = None) -> Tensor:
    """The gradient of conv3d w.r.t. its input: `filter` is [d, h, w, out_channels, in_channels]."""
    w_in = filters if filters is not None else filter
    forward = lambda x, w: conv3d(x, w, strides, padding, dilations=dilations)  # noqa: E731

    @custom_gradient
    def transpose(v: Tensor, w: Tensor):
        out = _linear_backprop(forward, True, w, output_shape, v)

        def grad(g: Tensor):
            return [forward(g, w), _linear_backprop(forward, False, g, array_ops.shape(w), v)]
        return out, grad

    with name_scope(name, "conv3d_transpose", [value, w_in]):
        v = convert_to_tensor(value, name="value")
        result = transpose(v, convert_to_tensor(w_in, dtype=v.dtype, name="filter"))
        known = constant_value(convert_to_tensor(output_shape, dtype=dtypes.int32))
        result.set_shape(TensorShape([int(d) for d in known]) if known is not None else TensorShape([None] * 5))
        return result


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose of conv1d: `filters` is [w, out_channels, in_channels]."""
    stride = _single(strides, "strides")
    dilation = _single(dilations, "dilations") if dilations is not None else 1
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]):
        shape = convert_to_tensor(output_shape, dtype=dtypes.int32, name="output_shape")
        shape2d = array_ops.concat([shape[:1], [1], shape[1:]], 0)
        y = conv2d_transpose(array_ops.expand_dims(input, 1), array_ops.expand_dims(filters, 0), shape2d,
                             [1, 1, stride, 1], padding, dilations=[1, 1, dilation, 1])
        return array_ops.squeeze(y, [1])


def _single(value: Any, what: str) -> int:
    values = [int(value)] if isinstance(value, int) else [int(v) for v in value]
    if len(values) == 3:
        values = values[1:2]
    if len(values) != 1:
        raise ValueError(f"conv1d_transpose: {what} must be an int or [1, w, 1], got {value}")
    return values[0]


def _full(value: Any, n: int) -> list[int]:
    """An int, n values or n + 2 values as the n + 2 entries [1, ..., 1] TF's ops take."""
    values = [int(value)] * n if isinstance(value, int) else [int(v) for v in value]
    return values if len(values) == n + 2 else [1] + values + [1]


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                   data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose of an N-d convolution (N = 1, 2, 3 from the length of output_shape)."""
    n = int(convert_to_tensor(output_shape, dtype=dtypes.int32).shape.as_list()[0]) - 2
    if n == 1:
        return conv1d_transpose(input, filters, output_shape, strides, padding, dilations=dilations, name=name)
    dil = None if dilations is None else _full(dilations, n)
    if n == 2:
        return conv2d_transpose(input, filters, output_shape, _full(strides, n), padding, name=name, dilations=dil)
    if n == 3:
        return conv3d_transpose(input, filters, output_shape, _full(strides, n), padding, name=name, dilations=dil)
    raise ValueError(f"conv_transpose: output_shape must have 3, 4 or 5 entries, got {n + 2}")


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int, padding: str,
                            name: str | None = None) -> Tensor:
    """The transpose of atrous_conv2d: stride 1, filter taps `rate` pixels apart."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]):
        return conv2d_transpose(value, filters, output_shape, [1, 1, 1, 1], padding,
                                dilations=[1, int(rate), int(rate), 1])
