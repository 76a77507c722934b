"""`tf.contrib.layers` (TF1's, today's `tf_slim.layers`): conv2d, the 2-D poolings, batch_norm, layer_norm
and dropout, with contrib's defaults and variable names.

Each layer opens `variable_scope(scope, <default name>)` ("Conv", "BatchNorm", "LayerNorm", ...), so
`Conv/weights`, `Conv_1/biases`, `BatchNorm/moving_mean` are the names a TF1 checkpoint holds. Variables
go to MODEL_VARIABLES as well as the global ones, and `variables_collections` may be a list or a dict
per variable (`{"weights": [...], "biases": [...]}`) as in contrib. A `normalizer_fn` replaces the
biases of conv2d, as in contrib: conv, normalizer, activation.
"""

from __future__ import annotations

from typing import Any, Callable

from tftk.framework import dtypes
from tftk.framework.graph_keys import GraphKeys
from tftk.framework.ops import (Tensor, add_to_collection, add_to_collections, control_dependencies, convert_to_tensor,
                                name_scope)
from tftk.ops import array_ops, conv_pool_ops, init_ops, nn_ops
from tftk.ops import layers as core_layers
from tftk.ops.control_flow_ops import cond
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = ["avg_pool2d", "batch_norm", "conv2d", "dropout", "layer_norm", "max_pool2d"]


def _collections(variables_collections: Any, name: str) -> list:
    """The global and model-variable collections plus contrib's per-variable extra ones."""
    extra = variables_collections.get(name) if isinstance(variables_collections, dict) else variables_collections
    return [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES] + list(extra or [])


def _pair(value: Any, what: str) -> list[int]:
    pair = [int(value)] * 2 if isinstance(value, int) else [int(v) for v in value]
    if len(pair) != 2:
        raise ValueError(f"{what} must be an int or a pair of ints, got {value!r}")
    return pair


def _collect(outputs_collections: Any, outputs: Tensor) -> Tensor:
    for collection in outputs_collections or []:
        add_to_collection(collection, outputs)
    return outputs


def conv2d(inputs: Any, num_outputs: int, kernel_size: Any, stride: Any = 1, padding: str = "SAME",
           data_format: str | None = None, rate: Any = 1, activation_fn: Callable | None = nn_ops.relu,
           normalizer_fn: Callable | None = None, normalizer_params: dict | None = None,
           weights_initializer: Any = None, weights_regularizer: Callable | None = None,
           biases_initializer: Any = init_ops.zeros_initializer(), biases_regularizer: Callable | None = None,
           reuse: Any = None, variables_collections: Any = None, outputs_collections: Any = None,
           trainable: bool = True, scope: Any = None) -> Tensor:
    """activation_fn(normalizer_fn or bias_add(conv2d(inputs, weights))): variables `<scope>/weights`
    [kh, kw, in, num_outputs] (Xavier-uniform by default) and `<scope>/biases`."""
    if data_format not in (None, "NHWC", "NCHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    data_format = data_format or "NHWC"
    strides, rates = _pair(stride, "stride"), _pair(rate, "rate")
    if max(strides) > 1 and max(rates) > 1:
        raise ValueError("conv2d: stride > 1 is not supported with rate > 1")
    with variable_scope(scope, default_name="Conv", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        if x.shape.ndims != 4:
            raise ValueError(f"Convolution expects input with rank 4, got {x.shape.ndims}")
        channels = x.shape.as_list()[1 if data_format == "NCHW" else 3]
        if channels is None:
            raise ValueError(f"conv2d: the number of input channels of {x.name} must be known")
        weights = get_variable("weights", _pair(kernel_size, "kernel_size") + [channels, num_outputs], x.dtype,
                               weights_initializer or init_ops.xavier_initializer(), weights_regularizer, trainable,
                               _collections(variables_collections, "weights"))
        spatial = [1, 1] + strides if data_format == "NCHW" else [1] + strides + [1]
        dilations = [1, 1] + rates if data_format == "NCHW" else [1] + rates + [1]
        outputs = conv_pool_ops.conv2d(x, weights, spatial, padding.upper(), data_format=data_format,
                                       dilations=dilations, name="Conv2D")
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        elif biases_initializer is not None:
            biases = get_variable("biases", [num_outputs], x.dtype, biases_initializer, biases_regularizer, trainable,
                                  _collections(variables_collections, "biases"))
            outputs = nn_ops.bias_add(outputs, biases, data_format=data_format, name="BiasAdd")
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect(outputs_collections, outputs)


def _pool2d(pool: Callable, default_name: str, inputs: Any, kernel_size: Any, stride: Any, padding: str,
            data_format: str, outputs_collections: Any, scope: Any) -> Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    kernel, strides = _pair(kernel_size, "kernel_size"), _pair(stride, "stride")
    window = [1, 1] + kernel if data_format == "NCHW" else [1] + kernel + [1]
    steps = [1, 1] + strides if data_format == "NCHW" else [1] + strides + [1]
    with name_scope(scope, default_name, [inputs]) as sc:
        outputs = pool(convert_to_tensor(inputs), window, steps, padding.upper(), data_format=data_format,
                       name=sc.rstrip("/").rpartition("/")[2] if sc else None)
        return _collect(outputs_collections, outputs)


def max_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections: Any = None, scope: Any = None) -> Tensor:
    """The maximum of each [kh, kw] window, windows `stride` apart (contrib's default: 2, VALID)."""
    return _pool2d(conv_pool_ops.max_pool, "MaxPool2D", inputs, kernel_size, stride, padding, data_format,
                   outputs_collections, scope)


def avg_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections: Any = None, scope: Any = None) -> Tensor:
    """The mean of each [kh, kw] window, windows `stride` apart (contrib's default: 2, VALID)."""
    return _pool2d(conv_pool_ops.avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding, data_format,
                   outputs_collections, scope)


def dropout(inputs: Any, keep_prob: float = 0.5, noise_shape: Any = None, is_training: Any = True,
            outputs_collections: Any = None, scope: Any = None, seed: int | None = None) -> Tensor:
    """Dropout keeping `keep_prob` of the values (scaled by 1 / keep_prob) when `is_training`."""
    with variable_scope(scope, default_name="Dropout", values=[inputs]):
        outputs = core_layers.dropout(inputs, rate=1.0 - keep_prob, noise_shape=noise_shape, seed=seed,
                                      training=is_training)
        return _collect(outputs_collections, outputs)


def layer_norm(inputs: Any, center: bool = True, scale: bool = True, activation_fn: Callable | None = None,
               reuse: Any = None, variables_collections: Any = None, outputs_collections: Any = None,
               trainable: bool = True, begin_norm_axis: int = 1, begin_params_axis: int = -1,
               scope: Any = None) -> Tensor:
    """Normalise over the axes from `begin_norm_axis` on (mean 0, variance 1, epsilon 1e-12), then
    gamma * x + beta with `<scope>/gamma`, `<scope>/beta` shaped like the axes from `begin_params_axis`."""
    with variable_scope(scope, default_name="LayerNorm", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {x.name} has undefined rank.")
        begin_norm_axis = begin_norm_axis % rank if begin_norm_axis < 0 else begin_norm_axis
        if begin_norm_axis >= rank:
            raise ValueError(f"begin_norm_axis ({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = x.shape.as_list()[begin_params_axis:]
        if any(d is None for d in params_shape):
            raise ValueError(f"Inputs {x.name}: parameter shape {params_shape} is not fully defined")
        beta = get_variable("beta", params_shape, x.dtype, init_ops.zeros_initializer(), None, trainable,
                            _collections(variables_collections, "beta")) if center else None
        gamma = get_variable("gamma", params_shape, x.dtype, init_ops.ones_initializer(), None, trainable,
                             _collections(variables_collections, "gamma")) if scale else None
        mean, variance = nn_ops.moments(x, list(range(begin_norm_axis, rank)), keep_dims=True)
        outputs = nn_ops.batch_normalization(x, mean, variance, beta, gamma, 1e-12)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect(outputs_collections, outputs)


def batch_norm(inputs: Any, decay: float = 0.999, center: bool = True, scale: bool = False, epsilon: float = 0.001,
               activation_fn: Callable | None = None, param_initializers: dict | None = None,
               param_regularizers: dict | None = None, updates_collections: Any = GraphKeys.UPDATE_OPS,
               is_training: Any = True, reuse: Any = None, variables_collections: Any = None,
               outputs_collections: Any = None, trainable: bool = True, batch_weights: Any = None,
               fused: Any = None, data_format: str = "NHWC", zero_debias_moving_mean: bool = False,
               scope: Any = None, renorm: bool = False, renorm_clipping: Any = None, renorm_decay: float = 0.99,
               adjustment: Any = None) -> Tensor:
    """Batch normalisation over every axis but the channels, contrib's way.

    Variables `<scope>/beta` (when `center`), `<scope>/gamma` (when `scale`), `moving_mean` and
    `moving_variance` (a 4-D input with the default UPDATE_OPS goes through the core layer, which
    makes gamma first). When training, the batch's statistics normalise and the moving ones move by
    `decay` (moving -= (1 - decay) * (moving - batch)): through ops in `updates_collections`, or
    before the output when it is None. `fused` (the default) is TF's fused kernel: its moving
    variance takes the batch's unbiased variance and epsilon is at least 1.001e-5.
    """
    if batch_weights is not None or renorm or adjustment is not None or zero_debias_moving_mean:
        raise ValueError("batch_norm: batch_weights, renorm, adjustment and zero_debias_moving_mean are not "
                         "supported by tftk")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    fused = True if fused is None else bool(fused)
    params = dict(param_initializers or {})
    regularizers = dict(param_regularizers or {})
    with variable_scope(scope, default_name="BatchNorm", values=[inputs], reuse=reuse):
        x = convert_to_tensor(inputs)
        rank = x.shape.ndims
        if rank not in (2, 4):
            raise ValueError(f"batch_norm: inputs must be 2-D or 4-D, got shape {x.shape}")
        axis = 1 if data_format == "NCHW" else rank - 1
        size = x.shape.as_list()[axis]
        if size is None:
            raise ValueError(f"Inputs {x.name} has undefined channels dimension.")

        def variable(name: str, default: Any, learnt: bool) -> Any:
            return get_variable(name, [size], x.dtype, params.get(name, default), regularizers.get(name),
                                trainable and learnt, _collections(variables_collections, name))

        layer_path = rank == 4 and updates_collections == GraphKeys.UPDATE_OPS
        gamma = variable("gamma", init_ops.ones_initializer(), True) if scale and layer_path else None
        beta = variable("beta", init_ops.zeros_initializer(), True) if center else None
        if scale and not layer_path:
            gamma = variable("gamma", init_ops.ones_initializer(), True)
        moving_mean = variable("moving_mean", init_ops.zeros_initializer(), False)
        moving_variance = variable("moving_variance", init_ops.ones_initializer(), False)
        if fused:
            epsilon = max(epsilon, 1.001e-5)
        training = is_training if isinstance(is_training, bool) else convert_to_tensor(is_training, dtypes.bool)

        def batch() -> tuple:
            axes = [i for i in range(rank) if i != axis]
            mean, variance = nn_ops.moments(x, axes)
            outputs = _normalize(x, mean, variance, beta, gamma, epsilon, axis, rank)
            return outputs, mean, core_layers.unbiased_variance(x, variance, axes) if fused else variance

        def moving() -> tuple:
            mean, variance = moving_mean.value(), moving_variance.value()
            return _normalize(x, mean, variance, beta, gamma, epsilon, axis, rank), mean, variance

        if training is False:
            outputs = moving()[0]
        else:
            outputs, mean, variance = batch() if training is True else cond(training, batch, moving)
            outputs = _with_updates(outputs, moving_mean, moving_variance, mean, variance, decay, training,
                                    updates_collections)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return _collect(outputs_collections, outputs)


def _normalize(x: Tensor, mean: Any, variance: Any, beta: Any, gamma: Any, epsilon: float, axis: int,
               rank: int) -> Tensor:
    shape = [1] * rank
    shape[axis] = -1

    def broadcast(v: Any) -> Any:
        return v if v is None or axis == rank - 1 else array_ops.reshape(v, shape)
    return nn_ops.batch_normalization(x, broadcast(mean), broadcast(variance), broadcast(beta), broadcast(gamma),
                                      epsilon)


def _with_updates(outputs: Tensor, moving_mean: Any, moving_variance: Any, mean: Tensor, variance: Tensor,
                  decay: float, training: Any, updates_collections: Any) -> Tensor:
    """Move the moving averages (moving -= (1 - decay) * (moving - batch)) by ops put in
    `updates_collections`, or run before `outputs` when it is None. With a tensor `training` the
    updates happen only in runs where it is true (elsewhere the ops give the moving values)."""
    def update() -> list:
        return core_layers.moving_average_updates([(moving_mean, mean), (moving_variance, variance)], decay)

    ops = update() if training is True else list(cond(training, update, lambda: [moving_mean.value(),
                                                                                  moving_variance.value()]))
    if updates_collections is None:
        with control_dependencies(ops):
            return array_ops.identity(outputs)
    names = [updates_collections] if isinstance(updates_collections, str) else list(updates_collections)
    for op in ops:
        add_to_collections(names, op)
    return outputs
