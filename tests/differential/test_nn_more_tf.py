"""tf.nn's convolution backprops and transposes, 3-D and rank-dispatching pooling, max_pool_with_argmax
and the composite losses against real TensorFlow (values and gradients)."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1303)


def u(*shape):
    return RNG.uniform(-1, 1, shape)


OPS = [
    ("conv2d_backprop_input", "tf.nn.conv2d_backprop_input([2, 5, 6, 3], y, x, [1, 2, 2, 1], 'SAME')",
     {"y": u(3, 2, 3, 4), "x": u(2, 3, 3, 4)}),
    ("conv2d_backprop_filter", "tf.nn.conv2d_backprop_filter(x, [2, 3, 3, 4], y, [1, 1, 1, 1], 'VALID')",
     {"x": u(2, 4, 5, 3), "y": u(2, 3, 3, 4)}),
    ("conv3d_backprop_filter_v2", "tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 2, 3], y, [1, 1, 1, 1, 1], 'VALID')",
     {"x": u(1, 3, 4, 3, 2), "y": u(1, 2, 3, 2, 3)}),
    ("conv3d_backprop_filter", "tf.nn.conv3d_backprop_filter(x, [2, 1, 2, 2, 3], y, "
     "[1, 1, 1, 1, 1], 'SAME')", {"x": u(1, 3, 3, 3, 2), "y": u(1, 3, 3, 3, 3)}),
    ("depthwise_backprop_input", "tf.nn.depthwise_conv2d_backprop_input([1, 5, 5, 2], y, x, [1, 2, 2, 1], 'SAME')",
     {"y": u(3, 3, 2, 2), "x": u(1, 3, 3, 4)}),
    ("depthwise_native_backprop_input", "tf.nn.depthwise_conv2d_native_backprop_input([1, 4, 4, 2], y, x, "
     "[1, 1, 1, 1], 'VALID')", {"y": u(2, 2, 2, 3), "x": u(1, 3, 3, 6)}),
    ("depthwise_backprop_filter", "tf.nn.depthwise_conv2d_backprop_filter(x, [2, 2, 2, 1], y, [1, 1, 1, 1], 'VALID')",
     {"x": u(2, 4, 3, 2), "y": u(2, 3, 2, 2)}),
    ("depthwise_native_backprop_filter", "tf.nn.depthwise_conv2d_native_backprop_filter(x, [3, 3, 1, 2], y, "
     "[1, 2, 2, 1], 'SAME')", {"x": u(1, 5, 5, 1), "y": u(1, 3, 3, 2)}),
    ("conv3d_transpose", "tf.nn.conv3d_transpose(x, y, [1, 4, 6, 4, 2], [1, 2, 2, 2, 1], 'SAME')",
     {"x": u(1, 2, 3, 2, 3), "y": u(2, 2, 2, 2, 3)}),
    ("conv3d_transpose_valid", "tf.nn.conv3d_transpose(x, y, [2, 4, 3, 4, 1], [1, 1, 1, 1, 1], 'VALID')",
     {"x": u(2, 3, 2, 3, 2), "y": u(2, 2, 2, 1, 2)}),
    ("conv1d_transpose", "tf.nn.conv1d_transpose(x, y, [2, 8, 3], 2, 'SAME')", {"x": u(2, 4, 2), "y": u(3, 3, 2)}),
    ("conv_transpose_1d", "tf.nn.conv_transpose(x, y, [1, 7, 2], [1, 1, 1], 'VALID')", {"x": u(1, 5, 3), "y": u(3, 2, 3)}),
    ("conv_transpose_2d", "tf.nn.conv_transpose(x, y, [1, 6, 4, 2], 2, 'SAME')", {"x": u(1, 3, 2, 3), "y": u(3, 2, 2, 3)}),
    ("conv_transpose_3d", "tf.nn.conv_transpose(x, y, [1, 3, 4, 3, 1], [1, 1, 1], 'SAME')",
     {"x": u(1, 3, 4, 3, 2), "y": u(2, 2, 2, 1, 2)}),
    ("atrous_conv2d_transpose", "tf.nn.atrous_conv2d_transpose(x, y, [1, 6, 6, 2], 2, 'SAME')",
     {"x": u(1, 6, 6, 3), "y": u(3, 3, 2, 3)}),
    ("max_pool3d_same", "tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 1, 1], 'SAME')", {"x": u(2, 3, 4, 3, 2).astype(np.float32)}),
    ("max_pool3d_valid", "tf.nn.max_pool3d(x, 2, 1, 'VALID')", {"x": u(1, 3, 3, 4, 2).astype(np.float32)}),
    ("avg_pool3d_same", "tf.nn.avg_pool3d(x, [1, 3, 2, 2, 1], [1, 2, 2, 2, 1], 'SAME')", {"x": u(1, 4, 3, 5, 2).astype(np.float32)}),
    ("avg_pool3d_valid", "tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 2, 1, 1], 'VALID')", {"x": u(2, 3, 4, 3, 1).astype(np.float32)}),
    ("max_pool_v2_1d", "tf.nn.max_pool_v2(x, 2, 2, 'SAME')", {"x": u(2, 7, 3)}),
    ("avg_pool_v2_2d", "tf.nn.avg_pool_v2(x, [2, 3], [1, 2], 'VALID')", {"x": u(1, 4, 7, 2)}),
    ("max_pool_v2_3d", "tf.nn.max_pool_v2(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], 'VALID')", {"x": u(1, 4, 4, 4, 1).astype(np.float32)}),
    ("avg_pool_v2_3d", "tf.nn.avg_pool_v2(x, 2, 2, 'SAME')", {"x": u(1, 3, 3, 3, 2).astype(np.float32)}),
    ("max_pool_with_argmax", "tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], 'SAME')[0]",
     {"x": u(2, 5, 4, 3).astype(np.float32)}),
    ("log_poisson_loss", "tf.nn.log_poisson_loss(y, x)", {"y": RNG.uniform(0, 3, (2, 4)), "x": u(2, 4)}),
    ("log_poisson_loss_full", "tf.nn.log_poisson_loss(y, x, compute_full_loss=True)",
     {"y": np.array([[0.0, 0.5, 1.0, 2.5], [4.0, 1.5, 0.2, 7.0]]), "x": u(2, 4)}),
    ("batch_norm_with_global_normalization", "tf.nn.batch_norm_with_global_normalization(x, m, tf.abs(v) + 0.1, b, g, "
     "0.01, True)", {"x": u(2, 3, 4), "m": u(4), "v": u(4), "b": u(4), "g": u(4)}),
    ("batch_norm_global_no_scale", "tf.nn.batch_norm_with_global_normalization(input=x, mean=m, variance=v * v + 0.5, "
     "beta=b, gamma=b, variance_epsilon=0.1, scale_after_normalization=False)",
     {"x": u(3, 2), "m": u(2), "v": u(2), "b": u(2)}),
    ("compute_average_loss", "tf.nn.compute_average_loss(x)", {"x": u(5)}),
    ("compute_average_loss_weighted", "tf.nn.compute_average_loss(x, sample_weight=y, global_batch_size=4)",
     {"x": u(4, 2), "y": u(4, 2)}),
    ("scale_regularization_loss", "tf.nn.scale_regularization_loss([x, y])", {"x": u(3), "y": u(3)}),
]

ROWS = [op_row(name, build, inputs) for name, build, inputs in OPS] + [
    Row("max_pool_with_argmax_indices",
        "x = tf.constant(inputs['x'])\nv, i = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 1, 1], 'VALID')\n"
        "j = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 1, 1], 'VALID', include_batch_in_index=True)[1]\n"
        "k = tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME', Targmax=tf.int32)[1]\n"
        "fetch = {'v': v, 'i': i, 'j': j, 'k': k}\n", {"x": u(2, 4, 3, 2).astype(np.float32)}),
    Row("max_pool3d_int_rejected", "fetch = {'y': tf.nn.max_pool3d(tf.zeros([1, 2, 2, 2, 1], tf.int32), 2, 2, 'SAME')}\n"),
    Row("compute_average_loss_scalar", "fetch = {'y': tf.nn.compute_average_loss(tf.constant(1.0))}\n"),
    Row("compute_average_loss_empty", "fetch = {'y': tf.nn.compute_average_loss(tf.zeros([0]))}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("nn_more", ROWS)
