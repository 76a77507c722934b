"""Gradients of reads: zeros of the input's shape with the output gradient written back where it was read.

Numpy only (no Numba), so op modules import it at module level.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["scatter_into_zeros", "along_last_axis"]


def scatter_into_zeros(shape: tuple, grad: np.ndarray, key: Any) -> np.ndarray:
    """Zeros of `shape` (in grad's dtype) with `grad` written at `key`: the gradient of reading `x[key]`."""
    out = np.zeros(shape, dtype=grad.dtype)
    out[key] = grad
    return out


def along_last_axis(indices: np.ndarray) -> tuple:
    """The fancy-index key that picks `indices` along the last axis (np.take_along_axis's key)."""
    lead = np.indices(indices.shape, sparse=True)[:-1]
    return tuple(lead) + (indices.astype(np.int64, copy=False),)
