"""float32 matrix products on the OpenBLAS kernels that are fastest for them on this CPU.

Why: numpy's wheels bundle one OpenBLAS built for many CPUs, which picks its kernels once, when
numpy loads. On AMD Zen 4 it picks its SkylakeX (AVX-512) kernels, but its Haswell/Zen (AVX2) sgemm
runs the products of dense layers and RNN cells 10-18% faster there (1 thread, same process
minute: an LSTM cell's 128x256 @ 256x512 359 -> 324 us, its gradient's 128x512 @ 512x256^T 387 ->
329 us, deep-MNIST's 50x3136 @ 3136x1024 4.56 -> 3.79 ms). The SkylakeX kernels stay better for the
Winograd convolutions' thin products (16-64 deep: ~45% slower on the AVX2 kernels), so switching
the whole process (`OPENBLAS_CORETYPE`, read only when numpy loads) is no answer. Here a second
copy of numpy's own OpenBLAS library is loaded with the AVX2 kernels and one thread, and `product`
sends 2-D float32 products to it; everything else stays on numpy's.

When: only where that was measured, an AMD family-25 CPU (Zen 3 and Zen 4) on which numpy's OpenBLAS
chose SkylakeX (Zen 3 has no AVX-512, so there it already runs the AVX2 kernels and nothing is
loaded), and only while numpy's BLAS runs on one thread: a step the thread policy runs on BLAS's two
threads (`tftk.client.threads`) keeps numpy's products, the second copy having no threads of its
own. `TFTK_GEMM=numpy` turns it off (every product through numpy).

How: numpy's library file is copied into an anonymous memory file (`memfd_create`, a kernel-side
copy, nothing written to disk) and loaded from there, so the dynamic loader sees another file and
maps a second, independent instance (its own kernel table and buffers); `RTLD_DEEPBIND` keeps that
instance's calls to its own functions inside it. The environment it reads while loading
(`OPENBLAS_CORETYPE`, `OPENBLAS_NUM_THREADS`) is set for the `dlopen` and restored after. Its
`cblas_sgemm` is called from a compiled kernel through its address (`_cblas_sgemm`), ~1 us a call,
as numpy's own call costs.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from typing import Any

import numpy as np

from tftk.kernels.jit import intrinsic, njit

__all__ = ["product", "active", "numpy_library"]

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS enums
_SGEMM = "scipy_cblas_sgemm64_"  # numpy >= 2 wheels: scipy-openblas, 64-bit integers, "scipy_" prefix
_THREADS = "scipy_openblas_get_num_threads64_"
_CORE_FOR_NUMPY_CORE = {b"SkylakeX": "Zen"}  # numpy's choice -> the core type loaded for dense products
# Smaller products stay with numpy: this path costs ~1.4 us more a call (the layout checks, numpy's
# thread count read), which a 10% faster kernel wins back from ~20 us of work (~1M multiply-adds) up.
MIN_MULTIPLY_ADDS = 1 << 20

_lock = threading.Lock()
_state: dict[str, Any] = {}  # "sgemm": the second copy's cblas_sgemm address, "threads": numpy's count getter


def _cblas_gemm_definition(typingctx, address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):
    """The intrinsic `cblas_?gemm(RowMajor, trans_a, trans_b, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)`
    through the function at `address` (64-bit integers, as scipy-openblas64 takes them)."""
    from llvmlite import ir
    from numba import types

    arrays = (a, b, c)
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in arrays) or len({x.dtype for x in arrays}) != 1 \
            or a.dtype not in (types.float32, types.float64):
        return None
    i = types.intp
    signature = types.void(i, i, i, i, i, i, a, i, b, i, c, i)

    def codegen(context, builder, sig, args):
        address_, ta, tb, m_, n_, k_, _, lda_, _, ldb_, _, ldc_ = args
        a_p, b_p, c_p = (context.make_array(t)(context, builder, v).data
                         for t, v in zip(sig.args, args) if isinstance(t, types.Array))
        element = a_p.type.pointee
        i32, i64 = ir.IntType(32), ir.IntType(64)
        function = ir.FunctionType(ir.VoidType(), [i32, i32, i32, i64, i64, i64, element, a_p.type, i64,
                                                   b_p.type, i64, element, c_p.type, i64])
        callee = builder.inttoptr(address_, function.as_pointer())
        builder.call(callee, [ir.Constant(i32, ROW_MAJOR), builder.trunc(ta, i32), builder.trunc(tb, i32), m_, n_,
                              k_, ir.Constant(element, 1.0), a_p, lda_, b_p, ldb_, ir.Constant(element, 0.0), c_p,
                              ldc_])
        return context.get_dummy_value()

    return signature, codegen


_cblas_gemm = intrinsic(_cblas_gemm_definition)


@njit(cache=True)
def _gemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc):  # pragma: no cover - compiled
    _cblas_gemm(address, trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc)


def numpy_library() -> str | None:
    """The path of the OpenBLAS library numpy's wheel bundles (None: numpy uses another BLAS)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    found = sorted(glob.glob(os.path.join(folder, "libscipy_openblas64_*.so")))
    return found[0] if found else None


def _amd_family() -> int | None:
    """The CPU family number of an AMD CPU (Linux's /proc/cpuinfo), else None."""
    vendor = family = None
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "vendor_id":
                    vendor = value.strip()
                elif key == "cpu family":
                    family = int(value)
                elif not line.strip() and vendor is not None:
                    break
    except (OSError, ValueError):
        return None
    return family if vendor == "AuthenticAMD" else None


def _corename(library: ctypes.CDLL) -> bytes:
    library.gotoblas_corename.restype = ctypes.c_char_p
    return library.gotoblas_corename() or b""


def _load_copy(path: str, coretype: str) -> ctypes.CDLL:
    """A second instance of the library at `path`, initialised with `coretype`'s kernels and one thread."""
    memory = os.memfd_create("tftk-openblas")
    try:
        with open(path, "rb") as source:
            size, done = os.fstat(source.fileno()).st_size, 0
            while done < size:
                done += os.sendfile(memory, source.fileno(), done, size - done)
        saved = {key: os.environ.get(key) for key in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS")}
        os.environ.update(OPENBLAS_CORETYPE=coretype, OPENBLAS_NUM_THREADS="1")
        try:
            return ctypes.CDLL(f"/proc/self/fd/{memory}", mode=os.RTLD_LOCAL | os.RTLD_NOW | os.RTLD_DEEPBIND)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    finally:
        os.close(memory)  # the mapping keeps the file alive


def _setup() -> dict[str, Any]:
    """What `product` needs: empty when the second copy does not apply here or cannot be loaded."""
    if os.environ.get("TFTK_GEMM", "").lower() == "numpy" or not hasattr(os, "memfd_create") \
            or _amd_family() != 25:
        return {}
    path = numpy_library()
    if path is None:
        return {}
    try:
        numpy_blas = ctypes.CDLL(path)  # already loaded by numpy: the same instance
        coretype = _CORE_FOR_NUMPY_CORE.get(_corename(numpy_blas))
        if coretype is None:
            return {}
        copy = _load_copy(path, coretype)
        if _corename(copy) not in (b"Haswell", b"Zen") or _corename(numpy_blas) != b"SkylakeX":
            return {}
        threads = getattr(numpy_blas, _THREADS)
        threads.restype, threads.argtypes = ctypes.c_int, []
        return {"sgemm": ctypes.cast(getattr(copy, _SGEMM), ctypes.c_void_p).value, "threads": threads,
                "library": copy}
    except (OSError, AttributeError):
        return {}


def _ready() -> dict[str, Any]:
    if "done" not in _state:
        with _lock:
            if "done" not in _state:
                _state.update(_setup())
                _state["done"] = True
    return _state


def active() -> bool:
    """Whether float32 products go to the second OpenBLAS copy in this process (while numpy's BLAS runs one thread)."""
    return "sgemm" in _ready()


def _operand(x: np.ndarray) -> tuple[np.ndarray, int] | None:
    """(C-contiguous array, CBLAS transpose flag) laying out 2-D `x`: `x` itself, or `x.T` of a
    column-major `x`; None for any other layout (a column slice: numpy multiplies it, as the
    ahead-of-time module has the kernel for C-contiguous arrays only)."""
    if not x.flags.aligned:
        return None
    if x.flags.c_contiguous:
        return x, NO_TRANS
    if x.flags.f_contiguous:
        return x.T, TRANS
    return None


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` for 2-D arrays: float32 ones laid out by rows or by columns on the second OpenBLAS copy where
    it applies (see the module docstring), anything else through numpy."""
    state = _state if "done" in _state else _ready()
    address = state.get("sgemm")
    if address is None or a.dtype != np.float32 or b.dtype != np.float32 or a.ndim != 2 or b.ndim != 2:
        return np.matmul(a, b)
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2 or m * n * k < MIN_MULTIPLY_ADDS or state["threads"]() != 1:
        return np.matmul(a, b)
    a_rows, b_rows = _operand(a), _operand(b)
    if a_rows is None or b_rows is None:
        return np.matmul(a, b)
    c = np.empty((m, n), np.float32)
    _gemm(address, a_rows[1], b_rows[1], m, n, k, a_rows[0], a_rows[0].shape[1], b_rows[0], b_rows[0].shape[1], c, n)
    return c
