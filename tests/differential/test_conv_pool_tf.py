"""conv2d, conv2d_transpose, pooling and bias_add over the geometry table of tests/nn/conv_pool_cases.py
against real TensorFlow: values and gradients, float32 and float64, NHWC and NCHW."""

import numpy as np

from tests.differential.op_tables import op_row, table_tests
from tests.nn.conv_pool_cases import CONV_POOL_CASES

RNG = np.random.default_rng(23)


def _inputs(x_shape, w_shape, dtype):
    arrays = {"x": (0.5 * RNG.normal(size=x_shape)).astype(dtype)}  # outputs of order 1: float32 sums stay within rtol
    if w_shape is not None:
        arrays["w"] = (0.5 * RNG.normal(size=w_shape)).astype(dtype)
    return arrays


def _dtypes(name):
    """TF's CPU kernels refuse float64 for NCHW pooling and for the NCHW and dilated convolution
    gradients ("Default MaxPoolingOp only supports NHWC", Conv2DBackpropFilter): those rows are float32
    only (tftk's float64 gradients for them are checked in tests/nn/test_conv_pool_gradients.py)."""
    return (np.float32,) if "nchw" in name or "dilated" in name else (np.float32, np.float64)


ROWS = [op_row(f"{name}_{np.dtype(dtype).name}", expression, _inputs(x_shape, w_shape, dtype))
        for name, expression, x_shape, w_shape in CONV_POOL_CASES for dtype in _dtypes(name)]

results, test_tftk_agrees_with_tensorflow = table_tests("conv_pool", ROWS)
