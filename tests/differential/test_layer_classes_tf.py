"""tf.layers' classes and functional forms against real TensorFlow: outputs, gradients w.r.t. the
inputs, variable names and shapes, weight sharing between calls, updates and losses.

Weights come from fixed initializers (a cosine ramp), so both libraries start from the same values.
"""

import numpy as np
import pytest

from tests.differential.op_tables import Row, row_result, table_tests

RNG = np.random.default_rng(1302)

RAMP = "tf.constant_initializer(np.cos(np.arange({n}) * 0.37).reshape({shape}))"


def ramp(*shape) -> str:
    return RAMP.format(n=int(np.prod(shape)), shape=list(shape))


def layer_row(name: str, x_shape: tuple, build: str, extra: str = "", dtype=np.float64) -> Row:
    """`y = build(x)`; fetched with d sum(y sin y)/dx, the layer's variable names and shapes."""
    body = (f"x = tf.constant(inputs['x'])\n{build}\n{extra}"
            "fetch = {'y': y, 'dx': tf.gradients(tf.reduce_sum(y * tf.sin(y)), x)[0]}\n"
            "mine = tf.get_variable_scope().name + '/'\n"
            "fetch['vars'] = tf.constant([v.name for v in tf.global_variables(mine)] or ['none'])\n"
            "fetch['var_shapes'] = tf.constant([str(v.shape.as_list()) for v in tf.global_variables(mine)] or ['none'])\n"
            "fetch['trainable'] = tf.constant([v.name for v in tf.trainable_variables(mine)] or ['none'])\n")
    return Row(name, body, {"x": RNG.uniform(-1, 1, x_shape).astype(dtype)})


ROWS = [
    layer_row("Dense", (3, 4), f"layer = tf.layers.Dense(5, activation=tf.nn.tanh, kernel_initializer={ramp(4, 5)}, "
              "bias_initializer=tf.constant_initializer(0.1))\ny = layer(x) + layer(x * 2)\n"
              "fetch_extra = [v.name for v in layer.trainable_weights]\n"),
    layer_row("Dense_rank3_no_bias", (2, 3, 4), f"y = tf.layers.Dense(2, use_bias=False, kernel_initializer={ramp(4, 2)}, "
              "name='proj')(x)"),
    layer_row("Dense_regularized", (3, 4), f"layer = tf.layers.Dense(2, kernel_initializer={ramp(4, 2)}, "
              "kernel_regularizer=lambda w: tf.reduce_sum(w * w))\ny = layer(x)\n"
              "y = y + tf.add_n(layer.losses) + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))"),
    layer_row("Conv1D", (2, 7, 3), f"y = tf.layers.Conv1D(4, 3, strides=2, padding='same', kernel_initializer={ramp(3, 3, 4)})(x)"),
    layer_row("conv1d_functional", (2, 7, 3), f"y = tf.layers.conv1d(x, 2, 2, dilation_rate=2, kernel_initializer={ramp(2, 3, 2)}, "
              "activation=tf.nn.relu)"),
    layer_row("Conv2D", (2, 5, 6, 3), f"y = tf.layers.Conv2D(4, (2, 3), kernel_initializer={ramp(2, 3, 3, 4)}, "
              "bias_initializer=tf.constant_initializer(-0.2))(x)"),
    layer_row("Conv3D", (1, 4, 5, 4, 2), f"y = tf.layers.Conv3D(3, 2, strides=(1, 2, 1), padding='same', "
              f"kernel_initializer={ramp(2, 2, 2, 2, 3)})(x)"),
    layer_row("conv3d_functional", (1, 4, 4, 3, 2), f"y = tf.layers.conv3d(x, 2, [2, 1, 2], kernel_initializer={ramp(2, 1, 2, 2, 2)})"),
    layer_row("Conv2DTranspose_same", (2, 3, 4, 3), f"y = tf.layers.Conv2DTranspose(2, 3, strides=2, padding='same', "
              f"kernel_initializer={ramp(3, 3, 2, 3)})(x)"),
    layer_row("conv2d_transpose_valid", (1, 3, 3, 2), f"y = tf.layers.conv2d_transpose(x, 3, (2, 3), strides=(2, 1), "
              f"kernel_initializer={ramp(2, 3, 3, 2)})"),
    layer_row("SeparableConv2D", (2, 5, 5, 3), f"y = tf.layers.SeparableConv2D(4, 3, depth_multiplier=2, "
              f"depthwise_initializer={ramp(3, 3, 3, 2)}, pointwise_initializer={ramp(1, 1, 6, 4)})(x)"),
    layer_row("separable_conv1d", (2, 8, 3), f"y = tf.layers.separable_conv1d(x, 2, 3, padding='same', "
              f"depthwise_initializer={ramp(3, 3, 1)}, pointwise_initializer={ramp(1, 3, 2)})"),
    layer_row("separable_conv2d", (1, 6, 6, 2), f"y = tf.layers.separable_conv2d(x, 3, 2, strides=2, "
              f"depthwise_initializer={ramp(2, 2, 2, 1)}, pointwise_initializer={ramp(1, 1, 2, 3)})"),
    layer_row("MaxPooling1D", (2, 7, 3), "y = tf.layers.MaxPooling1D(3, 2)(x)"),
    layer_row("max_pooling1d_same", (2, 7, 3), "y = tf.layers.max_pooling1d(x, 2, 2, padding='same')"),
    layer_row("AveragePooling1D", (2, 7, 3), "y = tf.layers.AveragePooling1D(2, 1)(x)"),
    layer_row("average_pooling1d", (2, 6, 2), "y = tf.layers.average_pooling1d(x, 3, 3)"),
    layer_row("MaxPooling2D", (1, 5, 5, 2), "y = tf.layers.MaxPooling2D((2, 3), 2, padding='same')(x)"),
    layer_row("AveragePooling2D", (1, 4, 6, 2), "y = tf.layers.AveragePooling2D(2, 2)(x)"),
    layer_row("MaxPooling3D", (1, 4, 4, 3, 2), "y = tf.layers.MaxPooling3D(2, (2, 2, 1), padding='same')(x)", "",
              np.float32),
    layer_row("average_pooling3d", (1, 4, 4, 4, 1), "y = tf.layers.average_pooling3d(x, 2, 2)", "", np.float32),
    layer_row("AveragePooling3D", (2, 3, 4, 3, 2), "y = tf.layers.AveragePooling3D((2, 2, 3), 1)(x)", "", np.float32),
    layer_row("max_pooling3d", (1, 3, 3, 3, 1), "y = tf.layers.max_pooling3d(x, 3, 2, padding='same')", "", np.float32),
    layer_row("Conv3DTranspose", (1, 2, 3, 2, 3), f"y = tf.layers.Conv3DTranspose(2, 2, strides=(2, 1, 2), "
              f"padding='same', kernel_initializer={ramp(2, 2, 2, 2, 3)})(x)"),
    layer_row("conv3d_transpose", (1, 2, 2, 2, 2), f"y = tf.layers.conv3d_transpose(x, 1, (2, 3, 2), "
              f"kernel_initializer={ramp(2, 3, 2, 1, 2)}, activation=tf.nn.relu)"),
    layer_row("Flatten", (2, 3, 4), "y = tf.layers.Flatten()(x)"),
    layer_row("Dropout_inference", (3, 4), "y = tf.layers.Dropout(0.5)(x)"),
    layer_row("Dropout_training_rate0", (3, 4), "y = tf.layers.Dropout(0.0)(x, training=True)"),
    layer_row("BatchNormalization_training", (6, 3),
              "bn = tf.layers.BatchNormalization(momentum=0.5, gamma_initializer=tf.constant_initializer(1.5))\n"
              "y = bn(x, training=True)\nwith tf.control_dependencies(bn.updates):\n    y = tf.identity(y)\n"
              "assert len(bn.updates) == 2 and len(bn.variables) == 4 and len(bn.trainable_weights) == 2"),
    layer_row("BatchNormalization_inference", (4, 2, 3), "y = tf.layers.BatchNormalization(axis=1, epsilon=0.1)(x)"),
    layer_row("layers_share_weights", (2, 3), f"d = tf.layers.Dense(3, kernel_initializer={ramp(3, 3)})\n"
              "y = d(d(x))\nassert len(d.variables) == 2 and d.built"),
    layer_row("layers_numbering", (2, 3), f"y = tf.layers.Dense(2, kernel_initializer={ramp(3, 2)})(x)\n"
              f"y = tf.layers.Dense(2, kernel_initializer={ramp(2, 2)})(y) + tf.layers.dense(x, 2, "
              f"kernel_initializer={ramp(3, 2)})"),
    Row("Layer_base", "class Scale(tf.layers.Layer):\n"
        "    def build(self, input_shape):\n"
        "        self.w = self.add_weight('w', [input_shape[-1]], initializer=tf.constant_initializer(2.0))\n"
        "        super(Scale, self).build(input_shape)\n"
        "    def call(self, inputs):\n        return inputs * self.w\n"
        "layer = Scale(name='scale')\ny = layer.apply(tf.constant([[1.0, 2.0]]))\n"
        "fetch = {'y': y, 'name': tf.constant(layer.name), 'vars': tf.constant([v.name for v in layer.weights])}\n"),
    Row("Conv2D_bad_rank", "tf.layers.Conv2D(2, 3)(tf.zeros([2, 5, 3]))\nfetch = {}\n"),
    Row("Dense_unknown_last_dim", "tf.layers.Dense(2)(tf.placeholder(tf.float32, [None, None]))\nfetch = {}\n"),
]

results, _compare_row = table_tests("layer_classes", ROWS)


@pytest.mark.parametrize("name", [row.name for row in ROWS])
def test_tftk_agrees_with_tensorflow(results, name):
    expected = row_result(results[0], name)
    if expected.error == "AttributeError" and "Keras 3" in (expected.message or ""):
        pytest.skip("this TensorFlow has no tf.compat.v1.layers: install tf-keras in its venv (.ci/run does)")
    _compare_row(results, name)
