"""Layers (tf.layers, tf.contrib.layers): functions that create their variables through variable scopes.

Each layer opens `variable_scope(name, default_name=<layer>, reuse=reuse)`, so a second call with
the same name and reuse=True shares the variables, and unnamed layers are numbered (dense, dense_1).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, add_to_collection, convert_to_tensor, name_scope
from tftk.ops import array_ops, init_ops, math_ops, nn_ops, reduction_ops
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = [
    "dense", "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout", "batch_normalization",
    "fully_connected", "contrib_flatten", "l1_regularizer", "l2_regularizer", "sum_regularizer",
]


def _tuple2(value: Any, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value}")
    return value


def _layer_padding(padding: str) -> str:
    if padding.lower() not in ("same", "valid"):
        raise ValueError(f'padding must be "same" or "valid", got {padding!r}')
    return padding.upper()


def _channels_last(data_format: str) -> None:
    if data_format != "channels_last":
        raise ValueError(f"only data_format='channels_last' (NHWC) is supported, got {data_format!r}")


def _finish(outputs: Tensor, use_bias: bool, bias: Any, activation: Callable | None,
            activity_regularizer: Callable | None) -> Tensor:
    if use_bias:
        outputs = nn_ops.bias_add(outputs, bias)
    if activation is not None:
        outputs = activation(outputs)
    if activity_regularizer is not None:
        with name_scope("ActivityRegularizer"):
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, activity_regularizer(outputs))
    return outputs


def _last_dim(x: Tensor, layer: str) -> int:
    if x.shape.ndims is None or x.shape.ndims < 2 or x.shape.as_list()[-1] is None:
        raise ValueError(f"The last dimension of the inputs to `{layer}` should be defined and the input at "
                         f"least 2-D. Found shape {x.shape}.")
    return x.shape.as_list()[-1]


def _matmul_last(x: Tensor, kernel: Any) -> Tensor:
    """x @ kernel over the last axis, for inputs of any rank >= 2."""
    if x.shape.ndims == 2:
        return math_ops.matmul(x, kernel)
    units = kernel.shape.as_list()[-1]
    flat = math_ops.matmul(array_ops.reshape(x, [-1, x.shape.as_list()[-1]]), kernel)
    lead = x.shape.as_list()[:-1]
    if None not in lead:
        return array_ops.reshape(flat, lead + [units])
    target = array_ops.concat([array_ops.shape(x)[:-1], np.asarray([units], dtype=np.int32)], 0)
    out = array_ops.reshape(flat, target)
    out.set_shape(lead + [units])
    return out


def dense(inputs: Any, units: int, activation: Callable | None = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
          kernel_regularizer: Callable | None = None, bias_regularizer: Callable | None = None,
          activity_regularizer: Callable | None = None, kernel_constraint: Any = None, bias_constraint: Any = None,
          trainable: bool = True, name: str | None = None, reuse: Any = None) -> Tensor:
    """activation(inputs @ kernel + bias) with variables `<name>/kernel` [in, units] and `<name>/bias`."""
    with variable_scope(name, default_name="dense", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        in_dim = _last_dim(x, "Dense")
        kernel = get_variable("kernel", [in_dim, units], x.dtype, kernel_initializer, kernel_regularizer,
                              trainable, constraint=kernel_constraint)
        bias = get_variable("bias", [units], x.dtype, bias_initializer, bias_regularizer, trainable,
                            constraint=bias_constraint) if use_bias else None
        return _finish(_matmul_last(x, kernel), use_bias, bias, activation, activity_regularizer)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1), activation: Callable | None = None,
           use_bias: bool = True, kernel_initializer: Any = None,
           bias_initializer: Any = init_ops.zeros_initializer(), kernel_regularizer: Callable | None = None,
           bias_regularizer: Callable | None = None, activity_regularizer: Callable | None = None,
           kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
           name: str | None = None, reuse: Any = None) -> Tensor:
    """2-D convolution layer (NHWC) with variables `<name>/kernel` [kh, kw, in, filters] and `<name>/bias`."""
    _channels_last(data_format)
    kh, kw = _tuple2(kernel_size, "kernel_size")
    sh, sw = _tuple2(strides, "strides")
    dh, dw = _tuple2(dilation_rate, "dilation_rate")
    with variable_scope(name, default_name="conv2d", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        if x.shape.ndims != 4:
            raise ValueError(f"Input 0 of layer conv2d is incompatible: expected ndim=4 (NHWC), found shape {x.shape}")
        channels = _last_dim(x, "Conv2D")
        kernel = get_variable("kernel", [kh, kw, channels, filters], x.dtype, kernel_initializer,
                              kernel_regularizer, trainable, constraint=kernel_constraint)
        bias = get_variable("bias", [filters], x.dtype, bias_initializer, bias_regularizer, trainable,
                            constraint=bias_constraint) if use_bias else None
        y = nn_ops.conv2d(x, kernel, [1, sh, sw, 1], _layer_padding(padding), dilations=[1, dh, dw, 1])
        return _finish(y, use_bias, bias, activation, activity_regularizer)


def _pooling(pool: Callable, default_name: str, inputs: Any, pool_size: Any, strides: Any, padding: str,
             data_format: str, name: str | None) -> Tensor:
    _channels_last(data_format)
    kh, kw = _tuple2(pool_size, "pool_size")
    sh, sw = _tuple2(strides, "strides")
    with name_scope(name, default_name, [inputs]):
        return pool(inputs, [1, kh, kw, 1], [1, sh, sw, 1], _layer_padding(padding))


def max_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                  data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """Max pooling layer over NHWC inputs."""
    return _pooling(nn_ops.max_pool, "max_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def average_pooling2d(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
                      data_format: str = "channels_last", name: str | None = None) -> Tensor:
    """Average pooling layer over NHWC inputs."""
    return _pooling(nn_ops.avg_pool, "average_pooling2d", inputs, pool_size, strides, padding, data_format, name)


def _flatten(inputs: Any) -> Tensor:
    x = convert_to_tensor(inputs)
    if x.shape.ndims is not None and x.shape.ndims < 1:
        raise ValueError(f"flatten: inputs must have a batch dimension, got shape {x.shape}")
    if x.shape.ndims is not None and None not in x.shape.as_list()[1:]:
        return array_ops.reshape(x, [-1, int(np.prod(x.shape.as_list()[1:]))])
    target = array_ops.stack([array_ops.shape(x)[0], -1])
    return array_ops.reshape(x, target)


def flatten(inputs: Any, name: str | None = None, data_format: str = "channels_last") -> Tensor:
    """[batch, ...] -> [batch, product of the rest]."""
    with name_scope(name, "flatten", [inputs]):
        return _flatten(inputs)


def contrib_flatten(inputs: Any, outputs_collections: Any = None, scope: str | None = None) -> Tensor:
    """tf.contrib.layers.flatten: [batch, ...] -> [batch, k]."""
    with name_scope(scope, "Flatten", [inputs]):
        return _flatten(inputs)


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: int | None = None,
            training: Any = False, name: str | None = None) -> Tensor:
    """nn.dropout(rate=rate) when training (a bool or a bool tensor), the inputs unchanged otherwise."""
    with name_scope(name, "dropout", [inputs]):
        x = convert_to_tensor(inputs)
        if isinstance(training, bool):
            return nn_ops.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed) if training else array_ops.identity(x)
        from tftk.ops.control_flow_ops import cond
        return cond(convert_to_tensor(training, dtype=dtypes.bool),
                    lambda: nn_ops.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed),
                    lambda: array_ops.identity(x))


def moving_average_updates(pairs: list, momentum: float) -> list[Tensor]:
    """moving -= (1 - momentum) * (moving - batch) for each (moving variable, batch statistic), in
    scopes AssignMovingAvg, AssignMovingAvg_1, ... as TF names batch norm's updates."""
    updates = []
    for k, (moving, batch) in enumerate(pairs):
        with name_scope("AssignMovingAvg" + (f"_{k}" if k else "")):
            updates.append(moving.assign_sub(math_ops.multiply(math_ops.subtract(moving.value(), batch),
                                                               1.0 - momentum)))
    return updates


def unbiased_variance(x: Tensor, variance: Tensor, axes: list[int]) -> Tensor:
    """variance * n / (n - 1), n the elements averaged per channel: the variance TF's fused batch-norm
    kernel hands the moving average (its output is normalised with the biased one)."""
    dims = [x.shape.as_list()[i] for i in axes]
    if all(d is not None for d in dims):
        n = float(np.prod(dims))
        return variance * (n / max(n - 1.0, 1.0))
    from tftk.ops import gather_ops
    count = math_ops.cast(reduction_ops.reduce_prod(gather_ops.gather(array_ops.shape(x), axes)), variance.dtype)
    return variance * count / math_ops.maximum(count - 1.0, 1.0)


def batch_normalization(inputs: Any, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True,
                        beta_initializer: Any = init_ops.zeros_initializer(),
                        gamma_initializer: Any = init_ops.ones_initializer(),
                        moving_mean_initializer: Any = init_ops.zeros_initializer(),
                        moving_variance_initializer: Any = init_ops.ones_initializer(),
                        beta_regularizer: Callable | None = None, gamma_regularizer: Callable | None = None,
                        training: Any = False, trainable: bool = True, name: str | None = None,
                        reuse: Any = None, fused: Any = None, renorm: bool = False) -> Tensor:
    """Batch normalization over every axis but `axis`, with moving statistics for inference.

    When training (a bool, or a bool tensor such as a fed placeholder), the batch mean and
    (biased) variance normalize the inputs, and ops in UPDATE_OPS move the moving statistics:
    moving -= (moving - batch) * (1 - momentum). Otherwise the moving statistics are used and the
    update ops leave them unchanged. Run the UPDATE_OPS with the train op. Where TF would use its
    fused kernel (`fused` not False, a 4-D input normalised over all but axis 1 or 3), the moving
    variance takes the batch's unbiased variance, as that kernel gives it.
    """
    if renorm:
        raise ValueError("batch_normalization: renorm is not supported")
    with variable_scope(name, default_name="batch_normalization", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if rank is None or not -rank <= axis < rank or x.shape.as_list()[axis] is None:
            raise ValueError(f"batch_normalization: axis {axis} must be a known dimension of the input, "
                             f"got shape {x.shape}")
        axis %= rank
        size = x.shape.as_list()[axis]
        reduce_axes = [i for i in range(rank) if i != axis]
        gamma = get_variable("gamma", [size], x.dtype, gamma_initializer, gamma_regularizer, trainable) if scale else None
        beta = get_variable("beta", [size], x.dtype, beta_initializer, beta_regularizer, trainable) if center else None
        moving_mean = get_variable("moving_mean", [size], x.dtype, moving_mean_initializer, trainable=False)
        moving_var = get_variable("moving_variance", [size], x.dtype, moving_variance_initializer, trainable=False)
        broadcast = [1] * rank
        broadcast[axis] = size

        def as_input_shape(v: Any) -> Any:
            return v if v is None or axis == rank - 1 else array_ops.reshape(v, broadcast)

        if isinstance(training, bool) and not training:
            return nn_ops.batch_normalization(x, as_input_shape(moving_mean.value()), as_input_shape(moving_var.value()),
                                              as_input_shape(beta), as_input_shape(gamma), epsilon)
        fused_kernel = fused is not False and rank == 4 and axis in (1, 3)

        def batch_moments() -> tuple:
            mean, variance = nn_ops.moments(x, reduce_axes)
            return mean, variance, unbiased_variance(x, variance, reduce_axes) if fused_kernel else variance

        if isinstance(training, bool):
            mean, variance, variance_for_average = batch_moments()
        else:
            from tftk.ops.control_flow_ops import cond
            mean, variance, variance_for_average = cond(
                convert_to_tensor(training, dtype=dtypes.bool), batch_moments,
                lambda: (array_ops.identity(moving_mean.value()), array_ops.identity(moving_var.value()),
                         array_ops.identity(moving_var.value())))
        for update in moving_average_updates([(moving_mean, mean), (moving_var, variance_for_average)], momentum):
            add_to_collection(GraphKeys.UPDATE_OPS, update.op)
        return nn_ops.batch_normalization(x, as_input_shape(mean), as_input_shape(variance), as_input_shape(beta),
                                          as_input_shape(gamma), epsilon)


# ---- tf.contrib.layers ------------------------------------------------------------------------

def fully_connected(inputs: Any, num_outputs: int, activation_fn: Callable | None = nn_ops.relu,
                    normalizer_fn: Callable | None = None, normalizer_params: dict | None = None,
                    weights_initializer: Any = None, weights_regularizer: Callable | None = None,
                    biases_initializer: Any = init_ops.zeros_initializer(),
                    biases_regularizer: Callable | None = None, reuse: Any = None,
                    variables_collections: Any = None, outputs_collections: Any = None,
                    trainable: bool = True, scope: str | None = None) -> Tensor:
    """tf.contrib.layers.fully_connected: activation_fn(inputs @ weights + biases), variables
    `<scope>/weights` (Xavier-initialized by default) and `<scope>/biases`, also in MODEL_VARIABLES."""
    if weights_initializer is None:
        weights_initializer = init_ops.xavier_initializer()
    with variable_scope(scope, default_name="fully_connected", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        in_dim = _last_dim(x, "fully_connected")
        collections = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES] + list(variables_collections or [])
        weights = get_variable("weights", [in_dim, num_outputs], x.dtype, weights_initializer,
                               weights_regularizer, trainable, collections)
        outputs = _matmul_last(x, weights)
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        elif biases_initializer is not None:
            biases = get_variable("biases", [num_outputs], x.dtype, biases_initializer, biases_regularizer,
                                  trainable, collections)
            outputs = nn_ops.bias_add(outputs, biases)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        for collection in outputs_collections or []:
            add_to_collection(collection, outputs)
        return outputs


def l2_regularizer(scale: float, scope: str | None = None) -> Callable[[Any], Tensor | None]:
    """A function weights -> scale * l2_loss(weights) (None when scale is 0)."""
    if scale < 0:
        raise ValueError(f"l2_regularizer: scale must be >= 0, got {scale}")

    def regularize(weights: Any) -> Tensor | None:
        if scale == 0:
            return None
        with name_scope(scope, "l2_regularizer", [weights]):
            w = convert_to_tensor(weights)
            return math_ops.multiply(nn_ops.l2_loss(w), scale, name="value")
    return regularize


def l1_regularizer(scale: float, scope: str | None = None) -> Callable[[Any], Tensor | None]:
    """A function weights -> scale * sum(|weights|) (None when scale is 0)."""
    if scale < 0:
        raise ValueError(f"l1_regularizer: scale must be >= 0, got {scale}")

    def regularize(weights: Any) -> Tensor | None:
        if scale == 0:
            return None
        with name_scope(scope, "l1_regularizer", [weights]):
            return math_ops.multiply(reduction_ops.reduce_sum(math_ops.abs(convert_to_tensor(weights))), scale,
                                     name="value")
    return regularize


def sum_regularizer(regularizer_list: list, scope: str | None = None) -> Callable[[Any], Tensor | None]:
    """A function weights -> the sum of the given regularizers' penalties."""
    def regularize(weights: Any) -> Tensor | None:
        penalties = [p for p in (r(weights) for r in regularizer_list) if p is not None]
        if not penalties:
            return None
        with name_scope(scope, "sum_regularizer", [weights]):
            return math_ops.add_n(penalties)
    return regularize
