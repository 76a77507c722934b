"""tf.layers' classes (Layer, Dense, Conv1D/2D/3D, Conv2DTranspose, SeparableConv1D/2D, pooling,
Dropout, Flatten, BatchNormalization) and the functional forms TF builds from them.

A layer object creates its variables on its first call, in a variable scope of its own (named by
`name`, or `dense`, `dense_1`, ... as TF1 numbers them); later calls reuse them, so one layer
applied to two inputs shares its weights. `variables`, `trainable_weights`, `updates` (batch
norm's moving averages) and `losses` (regularisation) list what that layer made.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, convert_to_tensor, get_collection
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, conv_backprop_ops, init_ops, layers as functional, nn_conv_ops, nn_ops, pool3d_ops
from tftk.ops.variable_scope import get_variable, variable_scope

__all__ = ["Layer", "Dense", "Dropout", "Flatten", "BatchNormalization", "Conv1D", "Conv2D", "Conv3D",
           "Conv2DTranspose", "Conv3DTranspose", "MaxPooling3D", "AveragePooling3D", "max_pooling3d",
           "average_pooling3d", "conv3d_transpose", "SeparableConv1D", "SeparableConv2D", "MaxPooling1D", "MaxPooling2D",
           "AveragePooling1D", "AveragePooling2D", "conv1d", "conv3d", "conv2d_transpose", "separable_conv1d",
           "separable_conv2d", "max_pooling1d", "average_pooling1d"]


def _snake(name: str) -> str:
    """TF's layer naming: Conv2DTranspose -> conv2d_transpose, BatchNormalization -> batch_normalization."""
    intermediate = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", intermediate).lower()


class Layer:
    """A callable that builds its variables once (in `build`) and its computation on each call."""

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        unknown = set(kwargs) - {"_reuse", "_scope", "activity_regularizer", "input_shape", "batch_input_shape"}
        if unknown:
            raise TypeError(f"Keyword argument not understood: {sorted(unknown)[0]}")
        self.trainable = trainable
        self._name = name
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._reuse = kwargs.get("_reuse")
        self.activity_regularizer = kwargs.get("activity_regularizer")
        self._scope = None
        self.built = False
        self._variables: list = []
        self._updates: list = []
        self._losses: list = []

    base_name = property(lambda self: _snake(type(self).__name__))
    name = property(lambda self: self._scope.name.split("/")[-1] if self._scope is not None
                    else (self._name or self.base_name))
    dtype = property(lambda self: self._dtype)
    scope_name = property(lambda self: self._scope.name if self._scope is not None else None)
    variables = weights = property(lambda self: list(self._variables))
    trainable_variables = trainable_weights = property(lambda self: self._by_trainability(True))
    non_trainable_variables = non_trainable_weights = property(lambda self: self._by_trainability(False))
    updates = property(lambda self: list(self._updates))
    losses = property(lambda self: list(self._losses))

    def _by_trainability(self, trainable: bool) -> list:
        marked = {id(v) for v in get_collection(GraphKeys.TRAINABLE_VARIABLES)}
        return [v for v in self._variables if (id(v) in marked) == trainable]

    def add_weight(self, name: str, shape: Any, dtype: Any = None, initializer: Any = None, regularizer: Any = None,
                   trainable: bool = True, constraint: Any = None, **kwargs: Any) -> Any:
        """A variable `<layer scope>/name`, remembered by the layer (and its regularisation loss)."""
        before = len(get_collection(GraphKeys.REGULARIZATION_LOSSES))
        variable = get_variable(name, shape, dtype or self._dtype or dtypes.float32, initializer, regularizer,
                                trainable and self.trainable, constraint=constraint)
        self._variables.append(variable)
        self._losses += get_collection(GraphKeys.REGULARIZATION_LOSSES)[before:]
        return variable

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        self._updates += list(updates) if isinstance(updates, (list, tuple)) else [updates]

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        self._losses += list(losses) if isinstance(losses, (list, tuple)) else [losses]

    def build(self, input_shape: TensorShape) -> None:
        self.built = True

    def call(self, inputs: Tensor, **kwargs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        raise NotImplementedError(f"{type(self).__name__} does not compute output shapes without building")

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        reuse = True if self.built else self._reuse
        target = self._scope if self._scope is not None else self._name
        with variable_scope(target, default_name=self.base_name, values=[inputs], reuse=reuse) as scope:
            self._scope = scope
            x = inputs if isinstance(inputs, (list, tuple)) else convert_to_tensor(inputs)
            if self._dtype is None and isinstance(x, Tensor):
                self._dtype = x.dtype
            if not self.built:
                self.build(x.shape if isinstance(x, Tensor) else [t.shape for t in x])
                self.built = True
            outputs = self.call(x, *args, **kwargs)
            if self.activity_regularizer is not None:
                self.add_loss(self.activity_regularizer(outputs))
        return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """TF1's spelling of calling the layer."""
        return self(inputs, *args, **kwargs)

    def get_weights(self) -> list:
        from tftk.framework.ops import get_default_session
        return get_default_session().run(self._variables)

    def set_weights(self, weights: list) -> None:
        from tftk.framework.ops import get_default_session
        session = get_default_session()
        for variable, value in zip(self._variables, weights):
            variable.load(value, session)


class Dense(Layer):
    """activation(inputs @ kernel + bias)."""

    def __init__(self, units: int, activation: Callable | None = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(trainable, name, activity_regularizer=activity_regularizer, **kwargs)
        self.units, self.activation, self.use_bias = int(units), activation, use_bias
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, kernel_constraint,
                      bias_constraint)

    def build(self, input_shape: TensorShape) -> None:
        k_init, b_init, k_reg, b_reg, k_con, b_con = self._init
        in_dim = TensorShape(input_shape).as_list()[-1] if TensorShape(input_shape).ndims else None
        if in_dim is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        self.kernel = self.add_weight("kernel", [in_dim, self.units], initializer=k_init, regularizer=k_reg,
                                      constraint=k_con)
        self.bias = self.add_weight("bias", [self.units], initializer=b_init, regularizer=b_reg,
                                    constraint=b_con) if self.use_bias else None
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        outputs = functional._matmul_last(inputs, self.kernel)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Dropout(Layer):
    """Drops inputs with probability `rate` when called with training=True (identity otherwise)."""

    def __init__(self, rate: float = 0.5, noise_shape: Any = None, seed: int | None = None, name: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        return functional.dropout(inputs, self.rate, self.noise_shape, self.seed, training)


class Flatten(Layer):
    """[batch, ...] -> [batch, product of the rest]."""

    def __init__(self, data_format: str = "channels_last", name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)

    def call(self, inputs: Tensor) -> Tensor:
        return functional._flatten(inputs)


class BatchNormalization(Layer):
    """Batch normalisation with moving statistics; the moving-average ops are in `updates` and UPDATE_OPS."""

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = init_ops.zeros_initializer(),
                 gamma_initializer: Any = init_ops.ones_initializer(),
                 moving_mean_initializer: Any = init_ops.zeros_initializer(),
                 moving_variance_initializer: Any = init_ops.ones_initializer(), beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, trainable: bool = True, name: str | None = None, **kwargs: Any) -> None:
        for ignored in ("beta_constraint", "gamma_constraint", "renorm", "renorm_clipping", "renorm_momentum",
                        "fused", "virtual_batch_size", "adjustment"):
            value = kwargs.pop(ignored, None)
            if ignored == "renorm" and value:
                raise ValueError("BatchNormalization: renorm is not supported")
        super().__init__(trainable, name, **kwargs)
        self._config = dict(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                            beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                            moving_mean_initializer=moving_mean_initializer,
                            moving_variance_initializer=moving_variance_initializer,
                            beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer)

    def call(self, inputs: Tensor, training: Any = False) -> Tensor:
        before = len(get_collection(GraphKeys.UPDATE_OPS))
        known = {id(v) for v in get_collection(GraphKeys.GLOBAL_VARIABLES)}
        outputs = functional.batch_normalization(inputs, training=training, trainable=self.trainable,
                                                 name=self._scope, reuse=True if self._variables else None,
                                                 **self._config)
        if not self._variables:
            self._variables = [v for v in get_collection(GraphKeys.GLOBAL_VARIABLES) if id(v) not in known]
        self._updates += get_collection(GraphKeys.UPDATE_OPS)[before:]
        return outputs


# ---- convolutions -------------------------------------------------------------------------------

def _ints(value: Any, n: int, what: str) -> list[int]:
    values = [int(value)] * n if isinstance(value, int) else [int(v) for v in value]
    if len(values) != n:
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. Received: {value}")
    return values


class _Conv(Layer):
    """N-d convolution (NWC/NHWC/NDHWC), kernel [*kernel_size, in, filters]."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, activation: Callable | None = None,
                 use_bias: bool = True, kernel_initializer: Any = None,
                 bias_initializer: Any = init_ops.zeros_initializer(), kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(trainable, name, activity_regularizer=activity_regularizer, **kwargs)
        functional._channels_last(data_format)
        n = self.rank
        self.filters, self.activation, self.use_bias = int(filters), activation, use_bias
        self.kernel_size = _ints(kernel_size, n, "kernel_size")
        self.strides = _ints(strides, n, "strides")
        self.dilation_rate = _ints(dilation_rate, n, "dilation_rate")
        self.padding = functional._layer_padding(padding)
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, kernel_constraint,
                      bias_constraint)

    def _channels(self, input_shape: Any) -> int:
        shape = TensorShape(input_shape)
        if shape.ndims is not None and shape.ndims != self.rank + 2:
            raise ValueError(f"Input 0 of layer {self.name} is incompatible with the layer: expected "
                             f"ndim={self.rank + 2}, found ndim={shape.ndims}. Full shape received: {shape}")
        channels = shape.as_list()[-1] if shape.ndims else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        return channels

    def _kernel_shape(self, channels: int) -> list[int]:
        return self.kernel_size + [channels, self.filters]

    def build(self, input_shape: Any) -> None:
        k_init, b_init, k_reg, b_reg, k_con, b_con = self._init
        self.kernel = self.add_weight("kernel", self._kernel_shape(self._channels(input_shape)), initializer=k_init,
                                      regularizer=k_reg, constraint=k_con)
        self.bias = self.add_weight("bias", [self.filters], initializer=b_init, regularizer=b_reg,
                                    constraint=b_con) if self.use_bias else None
        self.built = True

    def _convolve(self, inputs: Tensor) -> Tensor:
        return nn_conv_ops.convolution(inputs, self.kernel, self.padding, strides=self.strides,
                                       dilation_rate=self.dilation_rate)

    def call(self, inputs: Tensor) -> Tensor:
        outputs = self._convolve(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        return self.activation(outputs) if self.activation is not None else outputs


class Conv1D(_Conv):
    """1-D convolution over [batch, width, channels]."""
    rank = 1


class Conv2D(_Conv):
    """2-D convolution over [batch, height, width, channels]."""
    rank = 2


class Conv3D(_Conv):
    """3-D convolution over [batch, depth, height, width, channels]."""
    rank = 3


class Conv2DTranspose(_Conv):
    """The transpose of Conv2D (its gradient w.r.t. the input): kernel [kh, kw, filters, in]."""
    rank = 2

    def _kernel_shape(self, channels: int) -> list[int]:
        return self.kernel_size + [self.filters, channels]

    def _convolve(self, inputs: Tensor) -> Tensor:
        size = array_ops.shape(inputs)
        grow = lambda d, k, s: d * s if self.padding == "SAME" else d * s + max(k - s, 0)  # noqa: E731
        dims = [grow(size[1 + i], k, s) for i, (k, s) in enumerate(zip(self.kernel_size, self.strides))]
        output_shape = array_ops.stack([size[0]] + dims + [self.filters])
        transpose = nn_ops.conv2d_transpose if self.rank == 2 else conv_backprop_ops.conv3d_transpose
        outputs = transpose(inputs, self.kernel, output_shape, [1] + self.strides + [1], self.padding)
        static = inputs.shape.as_list() if inputs.shape.ndims == self.rank + 2 else [None] * (self.rank + 2)
        spatial = [None if d is None else grow(d, k, s) for d, k, s in zip(static[1:-1], self.kernel_size, self.strides)]
        outputs.set_shape([static[0]] + spatial + [self.filters])
        return outputs


class Conv3DTranspose(Conv2DTranspose):
    """The transpose of Conv3D: kernel [kd, kh, kw, filters, in]."""
    rank = 3


class _SeparableConv(_Conv):
    """A depthwise convolution (depth_multiplier filters per channel) then a 1x1 pointwise one."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, depth_multiplier: int = 1,
                 activation: Callable | None = None, use_bias: bool = True, depthwise_initializer: Any = None,
                 pointwise_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
                 depthwise_regularizer: Any = None, pointwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None, pointwise_constraint: Any = None,
                 bias_constraint: Any = None, trainable: bool = True, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                         None, bias_initializer, None, bias_regularizer, activity_regularizer, None, bias_constraint,
                         trainable, name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self._separable = (depthwise_initializer, pointwise_initializer, depthwise_regularizer, pointwise_regularizer,
                           depthwise_constraint, pointwise_constraint)

    def build(self, input_shape: Any) -> None:
        d_init, p_init, d_reg, p_reg, d_con, p_con = self._separable
        channels = self._channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", self.kernel_size + [channels, self.depth_multiplier], initializer=d_init,
            regularizer=d_reg, constraint=d_con)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", [1] * self.rank + [channels * self.depth_multiplier, self.filters],
            initializer=p_init, regularizer=p_reg, constraint=p_con)
        _, b_init, _, b_reg, _, b_con = self._init
        self.bias = self.add_weight("bias", [self.filters], initializer=b_init, regularizer=b_reg,
                                    constraint=b_con) if self.use_bias else None
        self.built = True

    def _convolve(self, inputs: Tensor) -> Tensor:
        if self.rank == 2:
            return nn_conv_ops.separable_conv2d(inputs, self.depthwise_kernel, self.pointwise_kernel,
                                                [1] + self.strides + [1], self.padding, rate=self.dilation_rate)
        y = nn_conv_ops.separable_conv2d(  # 1-D as 2-D with a height of one
            array_ops.expand_dims(inputs, 1), array_ops.expand_dims(self.depthwise_kernel, 0),
            array_ops.expand_dims(self.pointwise_kernel, 0), [1, 1] + self.strides + [1], self.padding,
            rate=[1] + self.dilation_rate)
        return array_ops.squeeze(y, [1])


class SeparableConv1D(_SeparableConv):
    """Depthwise-separable 1-D convolution."""
    rank = 1


class SeparableConv2D(_SeparableConv):
    """Depthwise-separable 2-D convolution."""
    rank = 2


# ---- pooling ------------------------------------------------------------------------------------

class _Pooling(Layer):
    rank, pooling_type = 2, "MAX"

    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid", data_format: str = "channels_last",
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        functional._channels_last(data_format)
        self.pool_size = _ints(pool_size, self.rank, "pool_size")
        self.strides = _ints(strides, self.rank, "strides")
        self.padding = functional._layer_padding(padding)

    def call(self, inputs: Tensor) -> Tensor:
        if self.rank == 3:
            fn = pool3d_ops.max_pool3d if self.pooling_type == "MAX" else pool3d_ops.avg_pool3d
            return fn(inputs, self.pool_size, self.strides, self.padding)
        return nn_conv_ops.pool(inputs, self.pool_size, self.pooling_type, self.padding, strides=self.strides)


class MaxPooling1D(_Pooling):
    """Max pooling over [batch, width, channels]."""
    rank, pooling_type = 1, "MAX"


class MaxPooling2D(_Pooling):
    """Max pooling over [batch, height, width, channels]."""
    rank, pooling_type = 2, "MAX"


class MaxPooling3D(_Pooling):
    """Max pooling over [batch, depth, height, width, channels]."""
    rank, pooling_type = 3, "MAX"


class AveragePooling3D(_Pooling):
    """Average pooling over [batch, depth, height, width, channels]."""
    rank, pooling_type = 3, "AVG"


class AveragePooling1D(_Pooling):
    """Average pooling over [batch, width, channels]."""
    rank, pooling_type = 1, "AVG"


class AveragePooling2D(_Pooling):
    """Average pooling over [batch, height, width, channels]."""
    rank, pooling_type = 2, "AVG"


# ---- functional forms (TF builds each from its class) ---------------------------------------------

def _functional(cls: type, doc: str) -> Callable:
    def layer_fn(inputs: Any, *args: Any, reuse: Any = None, **kwargs: Any) -> Tensor:
        training = kwargs.pop("training", None)
        layer = cls(*args, _reuse=reuse, **kwargs)
        return layer(inputs) if training is None else layer(inputs, training=training)
    layer_fn.__name__ = _snake(cls.__name__)
    layer_fn.__doc__ = doc
    return layer_fn


conv1d = _functional(Conv1D, "1-D convolution layer (see Conv1D).")
conv3d = _functional(Conv3D, "3-D convolution layer (see Conv3D).")
conv2d_transpose = _functional(Conv2DTranspose, "Transposed 2-D convolution layer (see Conv2DTranspose).")
separable_conv1d = _functional(SeparableConv1D, "Depthwise-separable 1-D convolution layer.")
separable_conv2d = _functional(SeparableConv2D, "Depthwise-separable 2-D convolution layer.")
max_pooling1d = _functional(MaxPooling1D, "1-D max pooling layer.")
average_pooling1d = _functional(AveragePooling1D, "1-D average pooling layer.")
max_pooling3d = _functional(MaxPooling3D, "3-D max pooling layer.")
average_pooling3d = _functional(AveragePooling3D, "3-D average pooling layer.")
conv3d_transpose = _functional(Conv3DTranspose, "Transposed 3-D convolution layer (see Conv3DTranspose).")
