"""One table of conv2d / pooling geometries (strides, SAME/VALID, dilations, odd sizes, 1 and many
channels, NHWC and NCHW), used by the float64 gradient checks and by the differential test against TF.

Each row: (name, TF1 expression over `x` (and `w`), shape of x, shape of w or None). The expressions
are written against the TF1 API and run unchanged in tftk and in TensorFlow.
"""

from __future__ import annotations

CONV_POOL_CASES = [
    ("conv_same_1ch", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')", (2, 7, 6, 1), (5, 5, 1, 3)),
    ("conv_same_many_ch", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')", (2, 6, 5, 4), (3, 3, 4, 5)),
    ("conv_valid_stride2", "tf.nn.conv2d(x, w, [1, 2, 2, 1], 'VALID')", (2, 7, 8, 3), (3, 2, 3, 2)),
    ("conv_same_stride_hw", "tf.nn.conv2d(x, w, [1, 3, 2, 1], 'SAME')", (1, 8, 7, 2), (2, 3, 2, 3)),
    ("conv_same_stride2_1ch", "tf.nn.conv2d(x, w, [1, 2, 2, 1], 'SAME')", (2, 7, 7, 1), (3, 3, 1, 2)),
    ("conv_same_dilated", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME', dilations=[1, 2, 2, 1])",
     (2, 7, 6, 2), (3, 3, 2, 2)),
    ("conv_valid_dilated_hw", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'VALID', dilations=[1, 2, 3, 1])",
     (1, 8, 9, 1), (2, 3, 1, 2)),
    ("conv_1x1", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'VALID')", (2, 3, 4, 3), (1, 1, 3, 2)),
    ("conv_nchw_same", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME', data_format='NCHW')", (2, 3, 6, 5), (3, 3, 3, 2)),
    ("conv_nchw_strided", "tf.nn.conv2d(x, w, [1, 1, 2, 2], 'VALID', data_format='NCHW')",
     (1, 2, 7, 6), (3, 2, 2, 3)),
    ("conv_nchw_dilated", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME', data_format='NCHW', dilations=[1, 1, 2, 2])",
     (1, 2, 6, 6), (2, 2, 2, 2)),
    ("conv_transpose_nchw",
     "tf.nn.conv2d_transpose(x, w, [2, 3, 8, 6], [1, 1, 2, 2], 'SAME', data_format='NCHW')",
     (2, 4, 4, 3), (3, 3, 3, 4)),
    ("max_pool_same", "tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], 'SAME')", (2, 5, 7, 3), None),
    ("max_pool_overlap", "tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 1, 1], 'VALID')", (1, 7, 6, 2), None),
    ("max_pool_nchw", "tf.nn.max_pool(x, [1, 1, 3, 2], [1, 1, 2, 2], 'SAME', data_format='NCHW')",
     (2, 3, 5, 6), None),
    ("avg_pool_same", "tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME')", (2, 5, 6, 2), None),
    ("avg_pool_nchw", "tf.nn.avg_pool(x, [1, 1, 2, 3], [1, 1, 1, 2], 'VALID', data_format='NCHW')",
     (1, 2, 5, 7), None),
    ("bias_add_nchw", "tf.nn.bias_add(x, tf.constant([0.5, -1.0, 2.0], x.dtype), data_format='NCHW')",
     (2, 3, 4, 2), None),
]
