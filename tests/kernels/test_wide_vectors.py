"""`wide_vectors()`: a kernel calling it asks LLVM for 512-bit vectors, and computes the same bits."""

import numpy as np
import pytest

from tftk.kernels.jit import PREFER_512_BIT, njit, wide_vectors


@njit(cache=False, error_model="numpy")
def _wide_gate(x, out):  # pragma: no cover - compiled
    wide_vectors()
    for k in range(x.size):
        out[k] = x[k] * x[k] / (np.float32(1.0) + abs(x[k])) + np.float32(0.5)


@njit(cache=False, error_model="numpy")
def _plain_gate(x, out):  # pragma: no cover - compiled
    for k in range(x.size):
        out[k] = x[k] * x[k] / (np.float32(1.0) + abs(x[k])) + np.float32(0.5)


def _llvm(kernel) -> str:
    dispatcher = getattr(kernel, "dispatcher", kernel)  # after its first call the name is Numba's dispatcher
    return dispatcher.inspect_llvm(dispatcher.signatures[0])


@pytest.mark.parametrize("size", [1, 15, 16, 17, 1000])  # below, at and past one 512-bit vector of float32
def test_wide_vectors_keeps_an_elementwise_kernels_bits(size):
    x = np.random.default_rng(size).standard_normal(size).astype(np.float32) * 4
    wide, plain = np.empty_like(x), np.empty_like(x)
    _wide_gate(x, wide)
    _plain_gate(x, plain)
    np.testing.assert_array_equal(wide, plain)


def test_wide_vectors_marks_only_the_kernel_calling_it():
    x = np.ones(4, np.float32)
    _wide_gate(x, np.empty_like(x))
    _plain_gate(x, np.empty_like(x))
    assert PREFER_512_BIT in _llvm(_wide_gate)
    assert PREFER_512_BIT not in _llvm(_plain_gate)
