"""The `tf.layers` namespace: layer classes and their functional forms."""

from tftk.ops.layer_classes import (AveragePooling1D, AveragePooling2D, BatchNormalization, Conv1D, Conv2D,
                                    Conv2DTranspose, Conv3D, Dense, Dropout, Flatten, Layer, MaxPooling1D,
                                    MaxPooling2D, SeparableConv1D, SeparableConv2D, average_pooling1d, conv1d,
                                    conv2d_transpose, conv3d, max_pooling1d, separable_conv1d, separable_conv2d)
from tftk.ops.layer_classes import (AveragePooling3D, Conv3DTranspose, MaxPooling3D, average_pooling3d,
                                    conv3d_transpose, max_pooling3d)
from tftk.ops.layers import (average_pooling2d, batch_normalization, conv2d, dense, dropout, flatten,
                             max_pooling2d)

__all__ = ["average_pooling2d", "batch_normalization", "conv2d", "dense", "dropout", "flatten",
           "max_pooling2d", "AveragePooling1D", "AveragePooling2D", "BatchNormalization", "Conv1D", "Conv2D",
           "Conv2DTranspose", "Conv3D", "Dense", "Dropout", "Flatten", "Layer", "MaxPooling1D", "MaxPooling2D",
           "SeparableConv1D", "SeparableConv2D", "average_pooling1d", "conv1d", "conv2d_transpose", "conv3d",
           "max_pooling1d", "separable_conv1d", "separable_conv2d", "AveragePooling3D", "Conv3DTranspose",
           "MaxPooling3D", "average_pooling3d", "conv3d_transpose", "max_pooling3d"]
