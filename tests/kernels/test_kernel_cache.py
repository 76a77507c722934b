"""Kernels work when Numba's cache cannot be written, and a second process never recompiles."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_NO_LOCATION = """
from numba.core import caching
caching.CacheImpl._locator_classes = []  # as for a user with no writable cache location
"""

_LISTENER = """
import numpy as np
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", Listener())
"""

_PROGRAM = _LISTENER + """
from tftk.kernels import elementwise, softmax_xent
g = np.array([1.0, -2.0, 3.0], np.float32)
print(elementwise.relu_grad(g, np.array([1.0, 0.0, 2.0], np.float32)).tolist())
loss, _ = softmax_xent.sparse_softmax_cross_entropy(np.zeros((2, 3), np.float32), np.array([0, 2], np.int32))
print(round(float(loss.sum()), 4), "compiled:", len(compiled))
"""


# Every conv and pool kernel a ConvNet step uses (1 and 3 channels, both gradients).
_CONV_PROGRAM = _LISTENER + """
from tftk.kernels import conv, pool
rng = np.random.default_rng(0)
for c in (1, 3):
    x = rng.standard_normal((4, 9, 9, c)).astype(np.float32)
    w = rng.standard_normal((3, 3, c, 2)).astype(np.float32)
    y = conv.conv2d(x, w, (1, 1), ((1, 1), (1, 1)))
    conv.conv2d_backprop_input(y, w, x.shape, (1, 1), ((1, 1), (1, 1)))
    conv.conv2d_backprop_filter(x, y, w.shape, (1, 1), ((1, 1), (1, 1)))
    p, arg = pool.max_pool(y, (2, 2), (2, 2))
    pool.max_pool_grad(p, arg, y.shape)
    a = pool.avg_pool(y, (2, 2), (2, 2))
    pool.avg_pool_grad(a, y.shape, (2, 2), (2, 2))
print("compiled:", sorted(set(compiled)))
"""


def _run(cache_dir: str, prelude: str = "", program: str = _PROGRAM) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "TFTK_AOT_KERNELS": "0"}  # Numba's cache, not AOT
    return subprocess.run([sys.executable, "-c", prelude + program], capture_output=True, text=True, env=env,
                          timeout=600)


def test_an_unwritable_cache_location_falls_back_to_compiling_in_memory(tmp_path):
    result = _run(str(tmp_path), prelude=_NO_LOCATION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "[1.0, 0.0, 3.0]"
    assert "Numba cannot write its kernel cache" in result.stderr
    assert "Set NUMBA_CACHE_DIR" in result.stderr


def test_a_second_process_loads_kernels_from_the_cache(tmp_path):
    first = _run(str(tmp_path))
    assert first.returncode == 0, first.stderr
    second = _run(str(tmp_path))
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[1] == f"{2 * 1.0986:.4f} compiled: 0"


@pytest.mark.slow
def test_a_second_process_compiles_no_conv_or_pool_kernel(tmp_path):
    first = _run(str(tmp_path), "", _CONV_PROGRAM)
    assert first.returncode == 0, first.stderr
    assert "_patch_rows" in first.stdout and "_max_pool" in first.stdout
    again = _run(str(tmp_path), "", _CONV_PROGRAM)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "compiled: []"
