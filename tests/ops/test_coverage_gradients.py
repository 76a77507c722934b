"""Float64 finite-difference gradients of the op types added for API coverage (issue 13, wave 2):
sorting, index re-ordering, space/depth/batch moves, image patches, and the families after them."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient

RNG = np.random.default_rng(1313)


def arr(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape)


GRADIENT_CASES = [
    GradientCase("Sort", lambda x: tf.sort(x, axis=0, direction="DESCENDING"), [arr(4, 3)]),
    GradientCase("ReverseSequence", lambda x: tf.reverse_sequence(x, [1, 3, 2], seq_axis=1, batch_axis=0),
                 [arr(3, 4, 2)]),
    GradientCase("SelectV2", lambda x, y: tf.where_v2(x > 0, x * x, y), [arr(3, 4), arr(1, 4)]),
    GradientCase("EnsureShape", lambda x: tf.ensure_shape(x, [None, 3]) ** 2, [arr(2, 3)]),
    GradientCase("SpaceToDepth", lambda x: tf.space_to_depth(x, 2) ** 2, [arr(1, 4, 2, 3)]),
    GradientCase("DepthToSpace", lambda x: tf.depth_to_space(x, 2) ** 2, [arr(1, 2, 1, 8)]),
    GradientCase("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 2]]) ** 2,
                 [arr(1, 2, 2, 2)]),
    GradientCase("BatchToSpaceND", lambda x: tf.batch_to_space_nd(x, [2, 1], [[1, 0], [0, 0]]) ** 2,
                 [arr(4, 2, 2, 1)]),
    GradientCase("ExtractImagePatches", lambda x: tf.extract_image_patches(
        x, [1, 2, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME") ** 2, [arr(1, 3, 4, 2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient_matches_finite_differences(case):
    check_gradient(case)

BESSEL_POINTS = np.array([-3.0, -0.4, 0.0, 0.7, 2.5])
GRADIENT_CASES += [
    GradientCase("BesselI0", lambda x: tf.math.bessel_i0(x), [BESSEL_POINTS]),
    GradientCase("BesselI0e", lambda x: tf.math.bessel_i0e(x), [BESSEL_POINTS[BESSEL_POINTS != 0]]),
    GradientCase("BesselI1", lambda x: tf.math.bessel_i1(x), [BESSEL_POINTS]),  # I1'(0) = 0.5
    GradientCase("BesselI1e", lambda x: tf.math.bessel_i1e(x), [BESSEL_POINTS[BESSEL_POINTS != 0]]),
    GradientCase("Erfinv", lambda x: tf.math.erfinv(x), [np.array([-0.95, -0.3, 0.0, 0.6, 0.99])]),
    GradientCase("Ndtri", lambda x: tf.math.ndtri(x), [np.array([1e-3, 0.3, 0.5, 0.9])], rtol=1e-4),
    # real/imag of conj(z) times real factors: products of complex tensors are left out, since
    # tftk's complex Mul gradient does not conjugate as TF's does (an open difference).
    GradientCase("Conj", lambda x, y: tf.real(tf.conj(tf.complex(x, y))) * y + tf.imag(tf.conj(tf.complex(x, y))) * x,
                 [arr(3), arr(3)]),
    GradientCase("Angle", lambda x, y: tf.angle(tf.complex(x, y)), [arr(4, lo=0.2), arr(4)]),
    GradientCase("ComplexAbs", lambda x, y: tf.abs(tf.complex(x, y)), [arr(4, lo=0.2), arr(4)]),
]

GRADIENT_CASES += [
    GradientCase("MaxPool3D", lambda x: tf.nn.max_pool3d(x, 2, [1, 2, 1], "SAME"), [arr(1, 3, 4, 3, 2)]),
    GradientCase("AvgPool3D", lambda x: tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], 2, "SAME"), [arr(1, 3, 4, 3, 2)]),
    GradientCase("MaxPoolWithArgmax", lambda x: tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 1, 2, 1], "SAME")[0],
                 [arr(2, 3, 4, 2)]),
    GradientCase("conv3d_transpose", lambda x, w: tf.nn.conv3d_transpose(x, w, [1, 4, 3, 2, 2], [1, 2, 1, 1, 1], "SAME"),
                 [arr(1, 2, 3, 2, 3), arr(2, 2, 1, 2, 3)]),
    GradientCase("conv3d_backprop_filter_v2", lambda x, dy: tf.nn.conv3d_backprop_filter_v2(
        x, [2, 1, 2, 2, 3], dy, [1, 1, 1, 1, 1], "VALID"), [arr(1, 3, 2, 3, 2), arr(1, 2, 2, 2, 3)]),
]

GRADIENT_CASES += [  # crop_and_resize's crops are float32: its image gradient is checked at float32 precision
    GradientCase("CropAndResize", lambda x: tf.cast(tf.image.crop_and_resize(
        x, [[0.1, 0.2, 0.8, 0.9], [0.5, -0.1, 1.0, 0.5]], [0, 1], [3, 2]), tf.float64),
        [arr(2, 4, 5, 2)], eps=1e-3, rtol=1e-3, atol=1e-4),
]

SPD3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
GRADIENT_CASES += [
    GradientCase("MatrixExponential", lambda x: tf.linalg.expm(x), [arr(3, 3)]),
    GradientCase("MatrixSquareRoot", lambda x: tf.linalg.sqrtm(x), [SPD3 + 0.1 * arr(3, 3)]),
]

# Fake quantisation's gradient is TF's straight-through estimator, not the derivative of the step
# function: finite differences agree with it only outside the range (zero in both); the estimator
# itself (to inputs, min and max) is compared with TF's in tests/differential/test_fake_quant_tf.py.
OUTSIDE = np.array([-5.0, -3.0, 3.5, 4.0])
GRADIENT_CASES += [
    GradientCase("FakeQuantWithMinMaxArgs", lambda x: tf.cast(tf.fake_quant_with_min_max_args(
        tf.cast(x, tf.float32), -2.0, 2.0), tf.float64), [OUTSIDE]),
    GradientCase("FakeQuantWithMinMaxVars", lambda x: tf.cast(tf.fake_quant_with_min_max_vars(
        tf.cast(x, tf.float32), -2.0, 3.0), tf.float64), [OUTSIDE]),
]

GRADIENT_CASES += [
    GradientCase("SparseSoftmax", lambda v: tf.sparse_softmax(tf.SparseTensor(
        [[0, 0], [0, 2], [1, 1], [2, 0], [2, 3]], v, [3, 4])).values, [arr(5)]),
]

GRADIENT_CASES += [
    GradientCase("TensorScatterExtremum", lambda x, y: tf.tensor_scatter_nd_max(x, [[0, 1], [2, 0]], y),
                 [arr(3, 2), np.array([0.9, -0.3])]),
]

GRADIENT_CASES += [
    GradientCase("Dilation2D", lambda x, w: tf.nn.dilation2d(x, w, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
                 [arr(1, 4, 4, 2), arr(2, 2, 2)]),
]

GRADIENT_CASES += [  # shape arguments known only at run time (a placeholder with a default), reshaped to static
    GradientCase("TileDynamic", lambda x: tf.reshape(tf.tile(x, [tf.placeholder_with_default(3, []), 1]), [6, 3]) ** 2,
                 [arr(2, 3)]),
    GradientCase("PadDynamic", lambda x: tf.reshape(tf.pad(x, [[tf.placeholder_with_default(1, []), 2], [0, 1]],
                                                           constant_values=0.5), [5, 4]) ** 2, [arr(2, 3)]),
    GradientCase("StridedSliceDynamic", lambda x: tf.reshape(x[tf.placeholder_with_default(1, []) - 1, 1:, ::2], [2, 2])
                 ** 2, [arr(2, 3, 4)]),
    GradientCase("BroadcastLikeRunTime", lambda x: tf.reshape(
        tf.broadcast_to(x, [tf.placeholder_with_default(3, []), 4]), [3, 4]) ** 2, [arr(1, 4)]),
]
