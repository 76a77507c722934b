"""Float64 finite-difference gradients of conv2d, conv2d_transpose, max/avg pooling and bias_add over
the geometry table in conv_pool_cases.py (strides, SAME/VALID, dilations, NHWC and NCHW)."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.gradient_check import GradientCase, check_gradient
from tests.nn.conv_pool_cases import CONV_POOL_CASES


def _case(name: str, expression: str, x_shape: tuple, w_shape: tuple | None) -> GradientCase:
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    # pooling inputs spaced 0.1 apart in random order: no ties within eps, so arg-maxes stay put
    size = int(np.prod(x_shape))
    x = rng.permutation(np.arange(size) * 0.1 - size * 0.05).reshape(x_shape)
    inputs = [x] if w_shape is None else [x, rng.normal(size=w_shape)]

    def build(*tensors):
        return eval(expression, {"tf": tf}, dict(zip("xw", tensors)))  # the table's TF1 expression
    return GradientCase(name, build, inputs)


GRADIENT_CASES = [_case(*row) for row in CONV_POOL_CASES]


@pytest.mark.parametrize("case", GRADIENT_CASES, ids=repr)
def test_gradient(case):
    check_gradient(case)
