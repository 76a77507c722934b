"""`njit` for tftk's kernels: Numba's, releasing the GIL, with an on-disk cache when one can be written.

Kernels are compiled `nogil`: they touch only the arrays they are given, so the sessions of one
process (the model server runs many, each in its own thread) and the tile threads of
`tftk.kernels.parallel` run them side by side instead of one at a time.

Numba raises "cannot cache function ...: no locator available" when no cache location is
writable (a read-only NUMBA_CACHE_DIR, a read-only install without a writable home), which would
make every kernel unusable; then the kernel is compiled in memory instead, once per process.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from numba import njit as _numba_njit

__all__ = ["njit"]

_warned = False


def njit(*args: Any, **options: Any) -> Any:
    """`numba.njit(cache=True, nogil=True, ...)` that falls back to `cache=False` when caching is impossible."""
    if args and callable(args[0]):
        return njit(**options)(args[0])
    options.setdefault("cache", True)
    options.setdefault("nogil", True)

    def decorate(fn: Callable) -> Any:
        try:
            return _numba_njit(**options)(fn)
        except RuntimeError as exc:
            if "no locator available" not in str(exc):
                raise
            _warn_once(exc)
            return _numba_njit(**{**options, "cache": False})(fn)

    return decorate


def _warn_once(exc: RuntimeError) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"tftk: Numba cannot write its kernel cache ({exc}); kernels are compiled in "
                      "memory for this process. Set NUMBA_CACHE_DIR to a writable folder to keep them.",
                      RuntimeWarning, stacklevel=3)
