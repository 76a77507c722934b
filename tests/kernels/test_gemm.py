"""Dense float32 products on the second OpenBLAS copy (tftk.kernels.gemm): values, routing, isolation."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest

from tftk.kernels import gemm

RNG = np.random.default_rng(7)


def _numpy_corename() -> bytes | None:
    path = gemm.numpy_library()
    if path is None:
        return None
    library = ctypes.CDLL(path)
    library.gotoblas_corename.restype = ctypes.c_char_p
    return library.gotoblas_corename()


needs_copy = pytest.mark.skipif(not gemm.active(), reason="the second OpenBLAS copy does not apply on this CPU/numpy")


def _matrix(rows: int, cols: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal((rows, cols)).astype(dtype)


A, B = _matrix(300, 200), _matrix(200, 150)
LAYOUTS = {  # name -> (a, b): every way a kernel hands a product its operands
    "both C": (A, B),
    "row slice": (A[10:250], B),
    "a transposed (F)": (np.asfortranarray(A), B),
    "b transposed view": (A, np.ascontiguousarray(B.T).T),
    "both transposed": (B.T, A.T),
    "column slice of b": (A, B[:, 7:90]),
    "strided rows": (A[::2], B),
    "one row": (A[:1], B),
    "one column": (A, B[:, :1]),
    "reversed rows": (A[::-1], B),
    "float64": (A.astype(np.float64), B.astype(np.float64)),
    "LSTM gate product": (_matrix(128, 256), _matrix(256, 512)),
    "LSTM input gradient": (_matrix(128, 512), np.ascontiguousarray(_matrix(512, 256).T).T),
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_product_equals_the_float64_product(name):
    a, b = LAYOUTS[name]
    got = gemm.product(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.dtype == np.result_type(a, b) and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 * np.abs(want).max())


def test_mismatched_inner_dimensions_fail_as_numpy_does():
    with pytest.raises(ValueError, match="matmul"):
        gemm.product(_matrix(128, 256), _matrix(255, 512))


def _cpu_wants_copy() -> bool:
    return gemm._amd_family() == 25 and _numpy_corename() == b"SkylakeX"


def test_the_copy_applies_exactly_on_zen_with_numpys_skylakex_kernels():
    assert gemm.active() == (os.environ.get("TFTK_GEMM", "").lower() != "numpy" and _cpu_wants_copy())


@pytest.fixture
def calls(monkeypatch):
    """The products the compiled kernel ran (shapes of a and b as it got them)."""
    made = []
    kernel = gemm._gemm

    def recording(address, ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
        made.append((m, n, k, ta, tb))
        return kernel(address, ta, tb, m, n, k, a, lda, b, ldb, c, ldc)

    monkeypatch.setattr(gemm, "_gemm", recording)
    return made


@needs_copy
@pytest.mark.parametrize("name, routed", [
    ("both C", True), ("row slice", True), ("a transposed (F)", True), ("b transposed view", True),
    ("both transposed", True), ("column slice of b", False), ("strided rows", False), ("float64", False),
    ("LSTM gate product", True)])
def test_which_products_go_to_the_copy(calls, name, routed):
    from threadpoolctl import threadpool_limits
    a, b = LAYOUTS[name]
    with threadpool_limits(1, user_api="blas"):
        gemm.product(a, b)
    assert bool(calls) == routed


@needs_copy
def test_small_products_and_two_thread_blas_stay_with_numpy(calls):
    from threadpoolctl import threadpool_limits
    small = _matrix(64, 64)
    with threadpool_limits(1, user_api="blas"):
        gemm.product(small, small)  # 64^3 multiply-adds: below MIN_MULTIPLY_ADDS
    with threadpool_limits(2, user_api="blas"):
        gemm.product(*LAYOUTS["both C"])
    assert calls == []


def _child_product(queue):
    a, b = LAYOUTS["LSTM gate product"]
    queue.put(float(np.abs(gemm.product(a, b) - a.astype(np.float64) @ b).max()))


@needs_copy
def test_a_forked_child_multiplies_on_the_loaded_copy():
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_product, args=(queue,))
    child.start()
    error = queue.get(timeout=60)
    child.join(60)
    assert child.exitcode == 0 and error < 1e-3


LOADER = """
import os, sys, json
import numpy as np
from tftk.kernels import gemm
before = {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS")}
active = gemm.active()
after = {k: os.environ.get(k) for k in before}
print(json.dumps({"active": active, "same_env": before == after}))
"""


@pytest.mark.parametrize("setting", ["numpy", "NumPy", ""])
def test_tftk_gemm_numpy_turns_the_copy_off_and_loading_leaves_the_environment(setting):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "TFTK_GEMM")}
    env["TFTK_GEMM"] = setting
    out = subprocess.run([sys.executable, "-c", LOADER], env=env, capture_output=True, text=True, check=True).stdout
    result = __import__("json").loads(out)
    assert result["same_env"]
    assert result["active"] == (setting == "" and _cpu_wants_copy())
