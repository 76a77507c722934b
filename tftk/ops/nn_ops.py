"""Neural-network ops (tf.nn): activations, bias_add, convolution, pooling, LRN, normalization, top-k.

Each op's constructor checks ranks and channels at build time, its kernel is bound once per plan
(the Numba kernels of `tftk.kernels` are imported inside the factories), and its gradient sits
beside it. Fused gradient ops (ReluGrad, BiasAddGrad, Conv2DBackpropInput, ...) mirror TF's.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels.scatter import along_last_axis, scatter_into_zeros
from tftk.ops import array_ops, math_ops, random_ops, reduction_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.conv_pool_ops import avg_pool, conv1d, conv2d, conv2d_transpose, max_pool
from tftk.ops.op_builder import float_input, make_multi_op, make_op

__all__ = [
    "relu", "relu6", "crelu", "elu", "selu", "softplus", "softsign", "leaky_relu", "sigmoid", "tanh",
    "softmax", "log_softmax", "bias_add", "relu_layer", "xw_plus_b", "l2_loss", "l2_normalize",
    "moments", "batch_normalization", "dropout", "conv2d", "conv2d_transpose", "conv1d", "max_pool",
    "avg_pool", "local_response_normalization", "lrn", "in_top_k", "top_k",
]

sigmoid = math_ops.sigmoid
tanh = math_ops.tanh


# ---- activations: forward kernel + fused gradient kernel (g, features) -> dx -------------------

def _activation(op_type: str, forward: Callable, backward: Callable) -> Callable:
    """Register `op_type` (x -> forward(x)) and `op_type + "Grad"` ((g, x) -> backward(g, x))."""
    grad_type = op_type + "Grad"
    registry.register_op(op_type, lambda op, ctx: forward, fresh=True)
    registry.register_op(grad_type, lambda op, ctx: backward, fresh=True)
    registry.register_gradient(op_type)(
        lambda op, g: [make_op(grad_type, [g, op.inputs[0]], g.dtype, g.shape)])

    def constructor(features: Any, name: str | None = None) -> Tensor:
        x = float_input(features, op_type)
        return make_op(op_type, [x], x.dtype, x.shape, name)

    constructor.__name__ = op_type.lower()
    constructor.__doc__ = f"Element-wise {op_type} (TF's tf.nn.{op_type.lower()})."
    return constructor


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _relu_inplace(op, ctx, position):
    return lambda x: np.maximum(x, 0, out=x) if isinstance(x, np.ndarray) else np.maximum(x, 0)


def _bind_relu_grad(op, ctx):
    from tftk.kernels.elementwise import relu_grad
    return relu_grad


def _relu_grad_inplace(op, ctx, position):
    from tftk.kernels.elementwise import relu_grad, relu_grad_in_place
    if position != 0:
        return relu_grad
    return lambda g, y: relu_grad_in_place(g, y) if g.flags.c_contiguous and g.flags.writeable else relu_grad(g, y)


registry.register_op("Relu", lambda op, ctx: lambda x: np.maximum(x, 0), inplace=_relu_inplace,
                     rows=batch_rows.elementwise)
registry.register_op("ReluGrad", _bind_relu_grad, inplace=_relu_grad_inplace, rows=batch_rows.elementwise)


def _bind_bias_relu(op, ctx):
    from tftk.kernels.bias import bias_relu
    return bias_relu


def _bias_relu_inplace(op, ctx, position):
    from tftk.kernels.bias import bias_relu
    return (lambda x, b: bias_relu(x, b, in_place=True)) if position == 0 else bias_relu


# Plans run a bias add that feeds only a ReLU as one pass (64x28x28x16 float32: 0.43 -> 0.07 ms).
for _producer in ("BiasAdd", "Add"):
    registry.register_op(_producer + "Relu", _bind_bias_relu, inplace=_bias_relu_inplace, rows=batch_rows.elementwise)
    registry.not_differentiable(_producer + "Relu")  # exists in plans only, never in a graph
    registry.register_fusion(_producer, "Relu", _producer + "Relu")


@registry.register_gradient("Relu")
def _relu_grad(op, grad):
    """Like TF, from the output: y > 0 exactly where x > 0, and x can then be freed."""
    return [make_op("ReluGrad", [grad, op.outputs[0]], grad.dtype, grad.shape)]


def relu(features: Any, name: str | None = None) -> Tensor:
    """Element-wise max(x, 0) (tf.nn.relu)."""
    x = float_input(features, "Relu")
    return make_op("Relu", [x], x.dtype, x.shape, name)


relu6 = _activation("Relu6", lambda x: np.clip(x, 0, 6), lambda g, x: g * ((x > 0) & (x < 6)))
elu = _activation("Elu", _elu, lambda g, x: np.where(x > 0, g, g * np.exp(np.minimum(x, 0))))
selu = _activation("Selu", lambda x: _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0))),
                   lambda g, x: g * _SELU_SCALE * np.where(x > 0, 1, _SELU_ALPHA * np.exp(np.minimum(x, 0))))
softplus = _activation("Softplus", lambda x: np.logaddexp(0, x),
                       lambda g, x: g * np.exp(-np.logaddexp(0, -x)))
softsign = _activation("Softsign", lambda x: x / (1 + np.abs(x)), lambda g, x: g / np.square(1 + np.abs(x)))
registry.not_differentiable("Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad")


@registry.register_gradient("ReluGrad")
def _relu_grad_grad(op, grad):
    return [make_op("ReluGrad", [grad, op.inputs[1]], grad.dtype, grad.shape), None]


def _bind_leaky(op, ctx):
    alpha = op.get_attr("alpha")
    return lambda x: np.where(x > 0, x, x * alpha).astype(x.dtype, copy=False)


def _bind_leaky_grad(op, ctx):
    alpha = op.get_attr("alpha")
    return lambda g, x: np.where(x > 0, g, g * alpha).astype(g.dtype, copy=False)


registry.register_op("LeakyRelu", _bind_leaky)
registry.register_op("LeakyReluGrad", _bind_leaky_grad)
registry.not_differentiable("LeakyReluGrad")


@registry.register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [make_op("LeakyReluGrad", [grad, op.inputs[0]], grad.dtype, grad.shape,
                    attrs={"alpha": op.get_attr("alpha")})]


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """max(x, alpha * x) for 0 <= alpha <= 1 (TF's tf.nn.leaky_relu)."""
    x = float_input(features, "LeakyRelu")
    return make_op("LeakyRelu", [x], x.dtype, x.shape, name, {"alpha": float(alpha)})


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """Concatenated ReLU: concat([relu(x), relu(-x)], axis), doubling that axis."""
    with name_scope(name, "CRelu", [features]):
        x = float_input(features, "CRelu")
        return relu(array_ops.concat([x, math_ops.negative(x)], axis))


# ---- softmax / log_softmax --------------------------------------------------------------------

def _axis(x: Tensor, axis: int, op_type: str) -> int:
    rank = x.shape.ndims
    if rank is None:
        if axis != -1:
            raise ValueError(f"{op_type}: axis {axis} needs an input of known rank")
        return -1
    if rank == 0 or not -rank <= axis < rank:
        raise ValueError(f"{op_type}: axis {axis} is out of range for an input of rank {rank}")
    return axis % rank


def _bind_softmax(op, ctx):
    axis = op.get_attr("axis")

    def kernel(x):
        # float64 inside, so float32 results are correctly rounded as TF prints them (seed 000).
        wide = x.astype(np.float64) if x.dtype.itemsize < 8 else x
        e = np.exp(wide - wide.max(axis=axis, keepdims=True))
        e /= e.sum(axis=axis, keepdims=True)
        return e.astype(x.dtype, copy=False)
    return kernel


def _bind_log_softmax(op, ctx):
    axis = op.get_attr("axis")

    def kernel(x):
        shifted = x - x.max(axis=axis, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return kernel


registry.register_op("Softmax", _bind_softmax, rows=batch_rows.along_axis())
registry.register_op("LogSoftmax", _bind_log_softmax, rows=batch_rows.along_axis())


@registry.register_gradient("Softmax")
def _softmax_grad(op, grad):
    y, axis = op.outputs[0], op.get_attr("axis")
    inner = reduction_ops.reduce_sum(math_ops.multiply(grad, y), axis, keepdims=True)
    return [math_ops.multiply(math_ops.subtract(grad, inner), y)]


@registry.register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    y, axis = op.outputs[0], op.get_attr("axis")
    total = reduction_ops.reduce_sum(grad, axis, keepdims=True)
    return [math_ops.subtract(grad, math_ops.multiply(math_ops.exp(y), total))]


def softmax(logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """exp(logits) / sum(exp(logits), axis), computed stably (axis defaults to the last)."""
    x = float_input(logits, "Softmax", "logits")
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    return make_op("Softmax", [x], x.dtype, x.shape, name, {"axis": _axis(x, axis, "Softmax")})


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None, dim: int | None = None) -> Tensor:
    """logits - log(sum(exp(logits), axis)), computed stably."""
    x = float_input(logits, "LogSoftmax", "logits")
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    return make_op("LogSoftmax", [x], x.dtype, x.shape, name, {"axis": _axis(x, axis, "LogSoftmax")})


# ---- bias_add, xw_plus_b, relu_layer ---------------------------------------------------------

def _bind_bias_add(op, ctx):
    from tftk.kernels.bias import bias_add
    return bias_add


def _bias_add_inplace(op, ctx, position):
    from tftk.kernels.bias import bias_add
    return (lambda x, b: bias_add(x, b, out=x)) if position == 0 else bias_add


registry.register_op("BiasAdd", _bind_bias_add, inplace=_bias_add_inplace, rows=batch_rows.elementwise)


def _bind_bias_add_grad(op, ctx):
    from tftk.kernels.bias import bias_add_grad, ones_for
    ones = [None]

    def run(g):
        weights = ones[0] = ones_for(g, ones[0])
        return bias_add_grad(g, weights)
    return run


registry.register_op("BiasAddGrad", _bind_bias_add_grad, fresh=True, rows=batch_rows.per_example_sum(0))


@registry.register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    return [grad, make_op("BiasAddGrad", [grad], grad.dtype, op.inputs[1].shape)]


@registry.register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    return [math_ops.broadcast_like(grad, op.inputs[0])]


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """value + bias along the channel axis (the last one; the second with data_format 'NCHW'/'NC...')."""
    x = convert_to_tensor(value, name="input")
    b = convert_to_tensor(bias, dtype=x.dtype, name="bias")
    if data_format not in (None, "NHWC", "N...C", "NCHW", "NC..."):
        raise ValueError(f"bias_add: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    if b.shape.ndims not in (None, 1):
        raise ValueError(f"bias_add: bias must be 1-D, got shape {b.shape}")
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"bias_add: value must be at least 2-D, got shape {x.shape}")
    channels_first = data_format in ("NCHW", "NC...") and x.shape.ndims != 2
    if channels_first:
        if x.shape.ndims is None:
            raise ValueError("bias_add: data_format 'NCHW' needs a value of known rank")
        channels, bias_len = x.shape.as_list()[1], b.shape.as_list()[0] if b.shape.ndims else None
        if channels is not None and bias_len is not None and channels != bias_len:
            raise ValueError(f"bias_add: bias has {bias_len} elements but value has {channels} channels "
                             f"(second dimension of shape {x.shape}, data_format {data_format})")
        with name_scope(name, "BiasAdd", [x, b]) as scope:
            return math_ops.add(x, array_ops.reshape(b, [-1] + [1] * (x.shape.ndims - 2)), name=scope)
    channels = x.shape.as_list()[-1] if x.shape.ndims else None
    bias_len = b.shape.as_list()[0] if b.shape.ndims else None
    if channels is not None and bias_len is not None and channels != bias_len:
        raise ValueError(f"bias_add: bias has {bias_len} elements but value has {channels} channels "
                         f"(last dimension of shape {x.shape})")
    return make_op("BiasAdd", [x, b], x.dtype, x.shape, name)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """matmul(x, weights) + biases."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]):
        return bias_add(math_ops.matmul(x, weights), biases)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """relu(matmul(x, weights) + biases)."""
    with name_scope(name, "relu_layer", [x, weights, biases]):
        return relu(bias_add(math_ops.matmul(x, weights), biases))


# ---- l2_loss, l2_normalize, moments, batch_normalization ------------------------------------

registry.register_op("L2Loss", lambda op, ctx: lambda x: np.asarray(np.vdot(x, x) / 2, dtype=x.dtype))


@registry.register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [math_ops.multiply(op.inputs[0], grad)]


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2."""
    x = float_input(t, "L2Loss", "t")
    return make_op("L2Loss", [x], x.dtype, TensorShape([]), name)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None,
                 dim: Any = None) -> Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = float_input(x, "l2_normalize", "x")
        axis = axis if axis is not None else dim
        square_sum = reduction_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        return math_ops.multiply(x, math_ops.rsqrt(math_ops.maximum(square_sum, epsilon)), name=scope)


def moments(x: Any, axes: Sequence[int], shift: Any = None, name: str | None = None,
            keep_dims: bool = False, keepdims: bool | None = None) -> tuple[Tensor, Tensor]:
    """(mean, variance) of x over `axes` (the biased variance, as TF)."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x]):
        x = float_input(x, "moments", "x")
        mean = reduction_ops.reduce_mean(x, axes, keepdims=True, name="mean")
        centred = math_ops.squared_difference(x, array_ops.stop_gradient(mean))
        variance = reduction_ops.reduce_mean(centred, axes, keepdims=True, name="variance")
        if not keep:
            mean = array_ops.squeeze(mean, list(axes))
            variance = array_ops.squeeze(variance, list(axes))
        return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: str | None = None) -> Tensor:
    """scale * (x - mean) / sqrt(variance + epsilon) + offset (offset/scale may be None)."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = float_input(x, "batch_normalization", "x")
        inv = math_ops.rsqrt(math_ops.add(convert_to_tensor(variance, dtype=x.dtype), variance_epsilon))
        if scale is not None:
            inv = math_ops.multiply(inv, convert_to_tensor(scale, dtype=x.dtype))
        shift = math_ops.negative(math_ops.multiply(convert_to_tensor(mean, dtype=x.dtype), inv))
        if offset is not None:
            shift = math_ops.add(convert_to_tensor(offset, dtype=x.dtype), shift)
        return math_ops.add(math_ops.multiply(x, inv), shift)


# ---- dropout ----------------------------------------------------------------------------------

def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None,
            name: str | None = None, rate: Any = None) -> Tensor:
    """Keep each unit with probability keep_prob (or 1 - rate), scaling kept units by 1/keep_prob.

    The mask is floor(keep_prob + uniform[0, 1)), so a keep_prob of exactly 1.0 (even fed through
    a placeholder) keeps every unit and returns x unchanged; `seed` makes the mask reproducible.
    """
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: pass exactly one of keep_prob and rate")
    with name_scope(name, "dropout", [x]):
        x = float_input(x, "dropout", "x")
        if rate is not None:
            keep_prob = math_ops.subtract(1.0, convert_to_tensor(rate, dtype=x.dtype))
        keep = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        static = constant_value(keep)
        if static is not None:
            if not 0 < float(static) <= 1:
                raise ValueError(f"dropout: keep_prob must be a scalar in (0, 1], got {float(static)}")
            if float(static) == 1.0:
                return x
        shape = array_ops.shape(x) if noise_shape is None else noise_shape
        noise = random_ops.random_uniform(shape, seed=seed, dtype=x.dtype)
        if noise_shape is None:
            noise.set_shape(x.shape)  # tf.shape(x) hides the static dims; the output keeps x's
        mask = math_ops.floor(math_ops.add(keep, noise))
        result = math_ops.multiply(math_ops.realdiv(x, keep), mask)
        if noise_shape is None:
            result.set_shape(x.shape)  # keep_prob is a scalar, whatever its static shape says
        return result


# ---- local response normalization -------------------------------------------------------------

def _bind_lrn(op, ctx):
    from tftk.kernels.lrn import lrn as kernel
    a = op.attrs
    return lambda x: kernel(x, a["depth_radius"], a["bias"], a["alpha"], a["beta"])


def _bind_lrn_grad(op, ctx):
    from tftk.kernels.lrn import lrn_grad as kernel
    a = op.attrs
    return lambda dy, x, y: kernel(dy, x, y, a["depth_radius"], a["bias"], a["alpha"], a["beta"])


registry.register_op("LRN", _bind_lrn)
registry.register_op("LRNGrad", _bind_lrn_grad)
registry.not_differentiable("LRNGrad")


@registry.register_gradient("LRN")
def _lrn_grad(op, grad):
    return [make_op("LRNGrad", [grad, op.inputs[0], op.outputs[0]], grad.dtype, grad.shape, None, dict(op.attrs))]


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5, name: str | None = None) -> Tensor:
    """x / (bias + alpha * sum of x**2 over depth_radius neighbours on the channel axis) ** beta.

    As in TF (and seed 000's formula), alpha multiplies the window sum as is: AlexNet's k=2, n=5,
    alpha=1e-4, beta=0.75 is depth_radius=2 (n/2), bias=2, alpha=1e-4, beta=0.75.
    """
    x = float_input(input, "LRN", "input")
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"LRN: input must be 4-D NHWC, got shape {x.shape}")
    if int(depth_radius) < 0:
        raise ValueError(f"LRN: depth_radius must be >= 0, got {depth_radius}")
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha), "beta": float(beta)}
    return make_op("LRN", [x], x.dtype, x.shape, name, attrs)


lrn = local_response_normalization


# ---- in_top_k, top_k ------------------------------------------------------------------------

def _bind_in_top_k(op, ctx):
    k = op.get_attr("k")

    def kernel(predictions, targets):
        classes = predictions.shape[1]
        valid = (targets >= 0) & (targets < classes)
        rows = np.arange(predictions.shape[0])
        target_value = predictions[rows, np.where(valid, targets, 0)]
        above = (predictions > target_value[:, None]).sum(axis=1)
        return valid & np.isfinite(target_value) & (above < k)
    return kernel


registry.register_op("InTopKV2", _bind_in_top_k)
registry.not_differentiable("InTopKV2")


def in_top_k(predictions: Any, targets: Any, k: int, name: str | None = None) -> Tensor:
    """Whether each target is among the top k predictions of its row.

    TF's ties: a target is in the top k when fewer than k classes score strictly higher, so equal
    scores at the boundary all count; a non-finite target score or an out-of-range id is False.
    """
    p = float_input(predictions, "InTopKV2", "predictions")
    t = convert_to_tensor(targets, name="targets")
    if not t.dtype.is_integer:
        raise TypeError(f"in_top_k: targets must be int32 or int64, got {t.dtype.name}")
    if p.shape.ndims not in (None, 2) or t.shape.ndims not in (None, 1):
        raise ValueError(f"in_top_k: predictions must be 2-D and targets 1-D, got shapes {p.shape} and {t.shape}")
    rows = p.shape.as_list()[0] if p.shape.ndims else None
    trows = t.shape.as_list()[0] if t.shape.ndims else None
    if rows is not None and trows is not None and rows != trows:
        raise ValueError(f"in_top_k: predictions have {rows} rows but targets have {trows}")
    return make_op("InTopKV2", [p, t], dtypes.bool, [rows if rows is not None else trows], name, {"k": int(k)})


def _bind_top_k(op, ctx):
    k = op.get_attr("k")  # values always come back sorted, which also satisfies sorted=False
    npd = op.outputs[1].dtype.as_numpy_dtype

    def kernel(x):
        if x.shape[-1] < k:
            from tftk.framework.errors import InvalidArgumentError
            raise InvalidArgumentError(None, op, f"top_k: input must have at least k={k} columns, "
                                                 f"got {x.shape[-1]}")
        order = np.argsort(-x, axis=-1, kind="stable")[..., :k]  # ties: lower index first, as TF
        return np.take_along_axis(x, order, axis=-1), order.astype(npd)
    return kernel


def _bind_top_k_grad(op, ctx):
    return lambda grad, indices, x: scatter_into_zeros(x.shape, grad, along_last_axis(indices))


registry.register_op("TopKV2", _bind_top_k)
registry.register_op("TopKGrad", _bind_top_k_grad)
registry.not_differentiable("TopKGrad")


@registry.register_gradient("TopKV2")
def _top_k_grad(op, grad, _indices_grad):
    x = op.inputs[0]
    return [make_op("TopKGrad", [grad, op.outputs[1], x], grad.dtype, x.shape)]


def top_k(input: Any, k: int = 1, sorted: bool = True, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """(values, indices) of the k largest entries of the last axis, largest first, ties by lower index."""
    x = convert_to_tensor(input, name="input")
    if x.shape.ndims == 0:
        raise ValueError("top_k: input must be at least 1-D")
    last = x.shape.as_list()[-1] if x.shape.ndims else None
    if last is not None and last < k:
        raise ValueError(f"top_k: input must have at least k={k} columns, got shape {x.shape}")
    shape = TensorShape(None) if x.shape.ndims is None else TensorShape(x.shape.as_list()[:-1] + [int(k)])
    op = make_multi_op("TopKV2", [x], [(x.dtype, shape), (dtypes.int32, shape)], name,
                       {"k": int(k), "sorted": bool(sorted)})
    return op.outputs[0], op.outputs[1]
