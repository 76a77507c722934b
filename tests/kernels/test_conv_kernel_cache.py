"""The conv and pool kernels a ConvNet step uses are compiled once per install: a second process
with the same Numba cache compiles nothing (not even under another thread budget)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROGRAM = """
import numpy as np
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev): pass
event.register("numba:compile", Listener())
from tftk.kernels import conv, parallel, pool
parallel.set_thread_budget(int(__import__("sys").argv[1]))
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


def _run(cache_dir: str, threads: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    return subprocess.run([sys.executable, "-c", _PROGRAM, str(threads)], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.mark.slow
def test_a_second_process_compiles_no_conv_or_pool_kernel(tmp_path):
    first = _run(str(tmp_path), 1)
    assert first.returncode == 0, first.stderr
    assert "_patch_rows" in first.stdout and "_max_pool" in first.stdout
    for threads in (1, 2):
        again = _run(str(tmp_path), threads)
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == "compiled: []"
