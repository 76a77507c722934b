"""Float64 finite-difference checks of the differentiable ops this area adds."""

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient

rng = np.random.RandomState(1)

GRADIENT_CASES = [
    GradientCase("Print", lambda x: tf.Print(x * x, [x], "x: ", first_n=0), [rng.rand(2, 3)]),
    GradientCase("ResizeBicubic", lambda x: tf.image.resize_images(x, [5, 3], tf.image.ResizeMethod.BICUBIC),
                 [rng.rand(1, 4, 4, 2)]),
    GradientCase("ResizeBicubic_align", lambda x: tf.image.resize_bicubic(x, [3, 6], align_corners=True),
                 [rng.rand(2, 3, 4, 1)]),
    GradientCase("ResizeArea", lambda x: tf.image.resize_images(x, [2, 3], tf.image.ResizeMethod.AREA),
                 [rng.rand(1, 5, 4, 2)]),
]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient(case):
    with tf.Graph().as_default():
        check_gradient(case)
