"""The tiled transposed copy against numpy's `.T`: every tile edge case, dtypes, and strided input."""

import numpy as np
import pytest

from tftk.kernels.transpose import transposed


@pytest.mark.parametrize("shape", [(1, 1), (1, 37), (37, 1), (16, 16), (17, 33), (156, 512), (0, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_transposed_equals_numpy(shape, dtype):
    b = (np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    got = transposed(b)
    assert got.flags.c_contiguous and got.dtype == dtype
    np.testing.assert_array_equal(got, b.T)


def test_transposed_of_a_strided_view():
    b = np.arange(60.0).reshape(6, 10)[::2, 1:8]
    np.testing.assert_array_equal(transposed(b), b.T)
