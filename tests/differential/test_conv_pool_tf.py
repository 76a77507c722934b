"""conv2d, conv2d_transpose, pooling and bias_add over the geometry table of tests/nn/conv_pool_cases.py
against real TensorFlow: values and gradients, float32 and float64, NHWC and NCHW."""

import numpy as np
import pytest

from tests.differential.op_tables import op_row, register, row_result, run_batch, table_tests
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


# float32 stride-1 3x3/5x5 convolutions with >= 8 channels run by Winograd's algorithm in tftk
# (tftk/kernels/winograd.py), whose float32 rounding error is ~10x im2col's: these rows are compared
# within 2e-5 of each output's largest value (4e-5 for the gradients, which also carry y's error through
# the row's non-linear loss; TF's direct convolution is the reference) instead of the table's
# element-wise 1e-5. float64 takes the im2col kernels the table above checks.
WINOGRAD_CASES = [  # >= 8 channels and >= 64 tiles of 4x4 outputs over the batch
    ("winograd_same_5x5", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')", (4, 14, 13, 16), (5, 5, 16, 17)),
    ("winograd_valid_3x3", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'VALID')", (4, 18, 15, 18), (3, 3, 18, 16)),
    ("winograd_nchw_same_3x3", "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME', data_format='NCHW')",
     (4, 16, 14, 13), (3, 3, 16, 16)),
    ("winograd_relu_pool", "tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')), "
     "[1, 2, 2, 1], [1, 2, 2, 1], 'SAME')", (4, 14, 14, 32), (5, 5, 32, 16)),
]

ROWS = [op_row(f"{name}_{np.dtype(dtype).name}", expression, _inputs(x_shape, w_shape, dtype))
        for name, expression, x_shape, w_shape in CONV_POOL_CASES for dtype in _dtypes(name)]
WINOGRAD_ROWS = [op_row(f"{name}_float32", expression, _inputs(x_shape, w_shape, np.float32))
                 for name, expression, x_shape, w_shape in WINOGRAD_CASES]

results, test_tftk_agrees_with_tensorflow = table_tests("conv_pool", ROWS)
register("conv_winograd", WINOGRAD_ROWS)


@pytest.fixture(scope="module")
def winograd_results():
    return run_batch("conv_winograd")


@pytest.mark.parametrize("name", [row.name for row in WINOGRAD_ROWS])
def test_winograd_convolutions_agree_with_tensorflow(winograd_results, name):
    expected, got = (row_result(r, name) for r in winograd_results)
    assert got.error is None and expected.error is None, (got.message, expected.message)
    assert sorted(got.outputs) == sorted(expected.outputs) == ["d_w", "d_x", "y"]
    for key, want in expected.outputs.items():
        have = got.outputs[key]
        assert have.dtype == want.dtype == np.float32 and have.shape == want.shape, key
        bound = 2e-5 if key == "y" else 4e-5  # the gradients also carry y's error through the loss
        np.testing.assert_allclose(have, want, rtol=0, atol=bound * np.abs(want).max(), err_msg=key)
