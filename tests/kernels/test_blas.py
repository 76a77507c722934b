"""`c += a @ b` in one gemm (tftk.kernels.blas.add_product): values, layouts, fallbacks, thread counts."""

from __future__ import annotations

import numpy as np
import pytest

from tftk.kernels import blas

RNG = np.random.default_rng(11)


def _matrix(rows: int, cols: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal((rows, cols)).astype(dtype)


CASES = {  # name -> (c, a, b)
    "float32 rows": (_matrix(40, 30), _matrix(40, 20), _matrix(20, 30)),
    "float32 a transposed": (_matrix(256, 512), _matrix(128, 256).T, _matrix(128, 512)),
    "float32 b transposed": (_matrix(128, 256), _matrix(128, 512), _matrix(256, 512).T),
    "float32 b transposed, shallow": (_matrix(128, 256), _matrix(128, 128), _matrix(256, 128).T),
    "float32 deep (k beyond a block)": (_matrix(64, 48), _matrix(64, 2000), _matrix(2000, 48)),
    "float64": (_matrix(17, 9, np.float64), _matrix(17, 33, np.float64), _matrix(33, 9, np.float64)),
    "one row, one column": (_matrix(1, 1), _matrix(1, 7), _matrix(7, 1)),
    "strided a (numpy's product)": (_matrix(20, 30), _matrix(40, 20)[::2], _matrix(20, 30)),
    "column slice of b (numpy's product)": (_matrix(20, 30), _matrix(20, 20), _matrix(20, 60)[:, 5:35]),
    "integers (numpy's product)": (np.ones((3, 4), np.int64), np.arange(6).reshape(3, 2), np.arange(8).reshape(2, 4)),
    "empty inner dimension": (_matrix(3, 4), _matrix(3, 0), _matrix(0, 4)),
}


@pytest.mark.parametrize("name", CASES)
def test_add_product_adds_the_product_into_c(name):
    c, a, b = CASES[name]
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    target = c.copy()
    got = blas.add_product(target, a, b)
    assert got is target and got.dtype == c.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, np.abs(want).max()))


# c [6, 6] laid out in a buffer of 84 floats with an operand: both C-contiguous, so that the gemm could take the
# operand by address; where the bytes overlap it must not (it would read what it writes)
SHARING = {  # name -> (c's first float, the operand's first float, which operand)
    "a is c": (0, 0, "a"),
    "a overlaps c's last rows": (0, 18, "a"),
    "b overlaps c's first rows": (24, 0, "b"),
    "a transposed overlaps c": (0, 30, "a.T"),
    "a right after c (no overlap)": (0, 36, "a"),
    "b right before c (no overlap)": (36, 0, "b"),
}


@pytest.mark.parametrize("name", SHARING)
def test_an_operand_sharing_cs_memory_is_read_as_it_was_before_c_changes(name):
    c_at, operand_at, which = SHARING[name]
    buffer = RNG.standard_normal(84).astype(np.float32)
    c, operand = buffer[c_at:c_at + 36].reshape(6, 6), buffer[operand_at:operand_at + 36].reshape(6, 6)
    operand = operand.T if which == "a.T" else operand
    a, b = (_matrix(6, 6), operand) if which == "b" else (operand, _matrix(6, 6))
    want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    got = blas.add_product(c, a, b)
    assert got is c
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("name", ["float32 rows", "float32 a transposed", "float32 b transposed, shallow", "float64"])
def test_within_one_block_the_gemm_gives_the_bits_of_the_product_added(name):
    """Inner dimensions up to OpenBLAS's block (a few hundred): its sum is added to c once, as np.add adds it."""
    c, a, b = CASES[name]
    assert np.array_equal(blas.add_product(c.copy(), a, b), c + a @ b)


def test_the_bits_do_not_depend_on_blas_threads():
    """As numpy's own products (whose bits OpenBLAS keeps on any thread count except for inner
    dimensions between one and two of its blocks, ~400-760: there np.matmul differs too)."""
    from threadpoolctl import threadpool_limits
    c, a, b = _matrix(300, 500), _matrix(300, 300), _matrix(300, 500)
    runs = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="blas"):
            runs.append(blas.add_product(c.copy(), a, b))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_numpys_openblas_is_called_where_numpy_bundles_it(monkeypatch):
    calls = []
    kernel = blas._gemm_into
    monkeypatch.setattr(blas, "_gemm_into", lambda *args: calls.append(args[3:6]) or kernel(*args))
    c, a, b = CASES["float32 rows"]
    blas.add_product(c.copy(), a, b)
    blas.add_product(*(x.copy() if i == 0 else x for i, x in enumerate(CASES["strided a (numpy's product)"])))
    assert calls == ([(40, 30, 20)] if blas.numpy_openblas() is not None else [])


def _numpy_lib(name: str) -> str:
    import os
    return os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs", name)


@pytest.mark.parametrize("loaded, found", [
    ([("openblas", "numpy.libs/libscipy_openblas64_-32a4b2a6.so")], 0),  # numpy 2's wheel
    ([("openblas", "numpy.libs/libopenblas64_p-r0-0cf96a72.3.23.dev.so")], 0),  # numpy 1.26's
    ([("openblas", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"),  # another package's first
      ("openblas", "numpy.libs/libscipy_openblas64_-32a4b2a6.so")], 1),
    ([("openblas", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0")], None),  # numpy built on the system's
    ([("mkl", "numpy.libs/libmkl_rt.so.2")], None),  # not OpenBLAS
])
def test_numpys_openblas_is_the_openblas_its_wheel_bundles(monkeypatch, loaded, found):
    import threadpoolctl
    entries = [{"internal_api": api, "filepath": _numpy_lib(path.split("/", 1)[1]) if path.startswith("numpy.libs/")
                else path} for api, path in loaded]
    monkeypatch.setattr(threadpoolctl, "threadpool_info", lambda: entries)
    assert blas.numpy_openblas() == (None if found is None else entries[found]["filepath"])
