"""`c += a @ b` in one BLAS call: the gemm with beta = 1 that numpy's own OpenBLAS has and numpy does not expose.

Why: a weight used at every step of a static RNN gets one gradient product per step, summed (the
plan adds each as soon as it is made: `tftk.client.plan.stream_sums`). Made by numpy, each product
is written to a new array and then added into the running sum, one more pass over a [256, 512]
array per step; a gemm with beta = 1 adds it in its own store. 28 steps of an LSTM layer's weight
gradient (xh^T @ dicfo, 256x128 @ 128x512), one thread: 11.3 ms made and added, 10.1 ms accumulated;
the same bits (the product's float32 sum is added to c once, as np.add does, while the inner
dimension fits one of OpenBLAS's blocks; beyond, OpenBLAS adds block by block).

How: the library numpy's wheel bundles (OpenBLAS with 64-bit integers) is opened by its path
(already loaded by numpy: the same instance, its thread setting included) and its `cblas_sgemm` /
`cblas_dgemm` called through their addresses from a compiled kernel (`_cblas_gemm`), ~3 us a call.
Where numpy has another BLAS, or an operand is laid out neither by rows nor by columns, numpy
computes the product and adds it (`np.add(c, a @ b, out=c)`), which is the same arithmetic.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np

from tftk.kernels.jit import intrinsic, njit

__all__ = ["add_product", "numpy_openblas", "gemm_address", "cblas_product", "matrix_product", "side_by_side",
           "NO_TRANS", "TRANS"]

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS enums
# the gemms' names with 64-bit integers (what `_cblas_gemm` passes): scipy-openblas's (numpy 2), OpenBLAS's
# own 64-bit-integer build (numpy 1.26); a library with neither (32-bit integers) is not called
_GEMM = {np.dtype(np.float32): ("scipy_cblas_sgemm64_", "cblas_sgemm64_"),
         np.dtype(np.float64): ("scipy_cblas_dgemm64_", "cblas_dgemm64_")}

_lock = threading.Lock()
_addresses: dict[np.dtype, int] = {}
_loaded: list[bool] = []


def _gemm_definition(beta: float):
    """The definition of an intrinsic `cblas_?gemm(RowMajor, trans_a, trans_b, m, n, k, 1, a, lda, b, ldb,
    beta, c, ldc)` through the function at `address`, whose integers are 64-bit; `a` and `b` are the
    addresses of their first elements (of c's dtype), `c` the array. beta 1: c += op(a) @ op(b); beta 0:
    c = op(a) @ op(b), the call numpy's matmul makes (c is not read)."""

    def definition(typingctx, address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
        from llvmlite import ir
        from numba import types

        if not (isinstance(c, types.Array) and c.ndim == 2 and c.dtype in (types.float32, types.float64)):
            return None
        i = types.intp
        signature = types.void(i, i, i, i, i, i, i, i, i, i, c, i)

        def codegen(context, builder, sig, args):
            address_, ta, tb, m_, n_, k_, a_, lda_, b_, ldb_, c_, ldc_ = args
            c_p = context.make_array(sig.args[10])(context, builder, c_).data
            element = c_p.type.pointee
            a_p, b_p = (builder.inttoptr(x, c_p.type) for x in (a_, b_))
            i32, i64 = ir.IntType(32), ir.IntType(64)
            function = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, element, c_p.type, i64,
                                                       c_p.type, i64, element, c_p.type, i64])
            builder.call(builder.inttoptr(address_, function.as_pointer()),
                         [ir.Constant(i32, ROW_MAJOR), builder.trunc(ta, i32), builder.trunc(tb, i32), m_, n_, k_,
                          ir.Constant(element, 1.0), a_p, lda_, b_p, ldb_, ir.Constant(element, beta), c_p, ldc_])
            return context.get_dummy_value()

        return signature, codegen

    return definition


_cblas_gemm = intrinsic(_gemm_definition(1.0))
# `c = a @ b` from compiled code (the fused LSTM cell's gate product: `tftk.kernels.lstm`)
cblas_product = intrinsic(_gemm_definition(0.0))


@njit(cache=True)
def matrix_product(address, a, b):  # pragma: no cover - compiled
    """a @ b for C-contiguous 2-D a, b, into a new matrix, from compiled code (`cblas_product`: numpy's
    matmul's call, its bits); `address` is `gemm_address` of their dtype."""
    rows, inner = a.shape
    columns = b.shape[1]
    out = np.empty((rows, columns), a.dtype)
    cblas_product(address, NO_TRANS, NO_TRANS, rows, columns, inner, a.ctypes.data, inner, b.ctypes.data, columns,
                  out, columns)
    return out


@njit(cache=True)
def side_by_side(x, h):  # pragma: no cover - compiled
    """[x, h]: the rows of x and h joined, C-contiguous (an RNN cell's operand of its weight product)."""
    depth = x.shape[1]
    joined = np.empty((x.shape[0], depth + h.shape[1]), x.dtype)
    joined[:, :depth] = x
    joined[:, depth:] = h
    return joined


@njit(cache=True)
def _gemm_into(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):  # pragma: no cover - compiled
    """`_cblas_gemm`, unless the bytes of `a` or `b` (addresses, laid out by rows with their leading
    dimensions) overlap c's: the gemm would read what it writes. Returns whether it ran. Checked here,
    inside the one call that lets go of Python's lock, rather than by np.may_share_memory, which lets
    go of it too: where another thread waits for the lock, each such call can hand it over."""
    size = c.itemsize
    low = c.ctypes.data
    high = low + ((m - 1) * ldc + n) * size
    a_rows, a_columns = (m, k) if trans_a == NO_TRANS else (k, m)
    b_rows, b_columns = (k, n) if trans_b == NO_TRANS else (n, k)
    if a < high and low < a + ((a_rows - 1) * lda + a_columns) * size:
        return False
    if b < high and low < b + ((b_rows - 1) * ldb + b_columns) * size:
        return False
    _cblas_gemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)
    return True


def numpy_openblas() -> str | None:
    """The path of the OpenBLAS library numpy's wheel bundles and has loaded (None: numpy uses another
    BLAS), as threadpoolctl finds it among the process's loaded libraries: numpy 2's
    `libscipy_openblas64_*`, numpy 1.26's `libopenblas64_p-*` (in `numpy.libs`, or `numpy/.dylibs`)."""
    from threadpoolctl import threadpool_info

    numpy_home = os.path.dirname(os.path.realpath(np.__file__))
    for library in threadpool_info():
        path = os.path.realpath(library.get("filepath") or "")
        bundled = path.startswith(numpy_home + os.sep) or os.path.basename(os.path.dirname(path)) == "numpy.libs"
        if library.get("internal_api") == "openblas" and bundled:
            return library["filepath"]
    return None


def gemm_address(dtype: np.dtype) -> int | None:
    """The address of numpy's OpenBLAS gemm for `dtype` (float32, float64), which the compiled kernels
    call (`_cblas_gemm`, `cblas_product`); None where numpy has another BLAS."""
    if not _loaded:
        with _lock:
            if not _loaded:
                path = numpy_openblas()
                try:
                    library = ctypes.CDLL(path) if path is not None else None
                    for kind, names in _GEMM.items():
                        function = next((getattr(library, name) for name in names
                                         if library is not None and hasattr(library, name)), None)
                        if function is not None:
                            _addresses[kind] = ctypes.cast(function, ctypes.c_void_p).value
                except OSError:
                    _addresses.clear()
                _loaded.append(True)
    return _addresses.get(dtype)


def _rows(x: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(C-contiguous array, CBLAS transpose flag) laying out 2-D `x`: `x` itself, or `x.T` of a
    column-major `x`; None for any other layout."""
    if not x.flags.aligned:
        return None
    if x.flags.c_contiguous:
        return x, NO_TRANS
    if x.flags.f_contiguous:
        return x.T, TRANS
    return None


def add_product(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`c += a @ b` for a C-contiguous, writable 2-D `c` and 2-D `a`, `b` of c's dtype; returns `c`.

    `a` and `b` stay referenced here while the kernel reads them by address. A `c` sharing memory
    with `a` or `b` goes through numpy (the product made first): the gemm would read what it writes
    (`_gemm_into` checks, and then leaves c as it was)."""
    address = gemm_address(c.dtype) if a.dtype == c.dtype and b.dtype == c.dtype else None
    (m, k), n = a.shape, b.shape[1]
    if address is not None and b.shape[0] == k and c.shape == (m, n) and c.flags.c_contiguous and c.flags.writeable \
            and m and n and k:
        a_rows, b_rows = _rows(a), _rows(b)
        if a_rows is not None and b_rows is not None \
                and _gemm_into(address, a_rows[1], b_rows[1], m, n, k, a_rows[0].ctypes.data, a_rows[0].shape[1],
                               b_rows[0].ctypes.data, b_rows[0].shape[1], c, n):  # (by address: read-only a, b too)
            return c
    return np.add(c, np.matmul(a, b), out=c)
