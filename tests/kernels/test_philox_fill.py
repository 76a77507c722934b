"""The compiled Philox draws (`tftk.kernels.philox_fill`) give the numpy path's values bit for bit:
sizes on and across block and group boundaries, counters whose low word carries into the high one
and that wrap at 2**128, generators moved on by earlier runs, every dtype with a kernel."""

import numpy as np
import pytest

from tftk.kernels import philox

DRAWS = [(philox.uniform_float, np.float32), (philox.uniform_float, np.float64),
         (philox.standard_normal, np.float32), (philox.truncated_normal, np.float32)]
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 255, 256, 257, 1023, 1024, 1025, 4099]
STREAMS = [((1, 2), 0),
           ((0xFFFFFFFF, 7), (5 << 64) | (2 ** 64 - 3)),  # carries into the high words mid-draw
           ((123, 456), 2 ** 128 - 2),  # wraps around the 128-bit counter
           ((87654321, 0), 42 << 64)]  # an op seed in the high words, as TF sets them


def _name(draw) -> str:
    return f"{draw[0].__name__}-{np.dtype(draw[1]).name}"


@pytest.mark.parametrize("draw", DRAWS, ids=_name)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("key, counter", STREAMS)
def test_compiled_draw_is_the_numpy_draw(draw, n, key, counter):
    function, dtype = draw
    fast = function(key, counter, n, dtype)
    reference = function(key, counter, n, dtype, compiled=False)
    assert fast.dtype == reference.dtype == np.dtype(dtype) and fast.shape == (n,)
    assert fast.tobytes() == reference.tobytes()


@pytest.mark.parametrize("draw", DRAWS, ids=_name)
def test_successive_runs_of_one_generator_agree(draw):
    # an op run three times moves its generator on by 256 blocks per value each time (TF's skip)
    function, dtype = draw
    state = philox.PhiloxState(7, 11)
    for n in (5, 1024, 33):
        key, counter = state.reserve(n)
        assert function(key, counter, n, dtype).tobytes() == function(key, counter, n, dtype, compiled=False).tobytes()


@pytest.mark.parametrize("draw", DRAWS, ids=_name)
def test_empty_draw(draw):
    function, dtype = draw
    assert function((1, 2), 0, 0, dtype).shape == (0,)


def test_truncated_normal_stays_in_the_cut_and_uniforms_in_the_unit_interval():
    normals = philox.truncated_normal((3, 4), 9, 100003, np.float32)
    assert np.abs(normals).max() < 2.0 and abs(normals.mean()) < 0.02
    uniforms = philox.uniform_float((3, 4), 9, 100003, np.float32)
    assert uniforms.min() >= 0.0 and uniforms.max() < 1.0
