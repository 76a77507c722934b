"""`njit` for tftk's kernels: compiled on first call, from the ahead-of-time module when it has them.

A decorated kernel is a `Kernel`: nothing is imported or compiled when its module is imported.
Its first call looks the kernel up in the ahead-of-time compiled module (`tftk.kernels.aot`, built
by `pip install` or `python -m tftk.kernels.aot_build`); a call whose argument types that module was
built for runs there, without Numba ever being imported (Numba's import and its per-process set-up cost ~0.5 s,
more than a training step). Any other call goes to the Numba dispatcher, made on first need, which
compiles (or loads from Numba's on-disk cache) a version for those types, as `numba.njit` does. The
first call then puts what later calls go through (the dispatcher, or `aot.caller`'s function that
tests the argument types and runs the compiled version) in the kernel's module in its own place, so
calls by name pay no more than a call through Numba's dispatcher.

Kernels are compiled `nogil`: they touch only the arrays they are given, so the sessions of one
process (the model server runs many, each in its own thread) and the tile threads of
`tftk.kernels.parallel` run them side by side instead of one at a time. The ahead-of-time module is
built with the same options (`nogil`, the error model), so both give the same bits.

Numba raises "cannot cache function ...: no locator available" when no cache location is
writable (a read-only NUMBA_CACHE_DIR, a read-only install without a writable home), which would
make every kernel unusable; then the kernel is compiled in memory instead, once per process.

`prange` here stands for `numba.prange` in kernel modules that must not import Numba: the first
time one of that module's kernels is compiled by Numba, the module's `prange` is bound to Numba's.
`intrinsic` does the same for `numba.extending.intrinsic` (LLVM IR written by hand, e.g. explicit
vector code): the module holds a `LazyIntrinsic` until one of its kernels is compiled.

`wide_vectors()`, called first in a kernel, lets LLVM vectorise its loops with the widest vectors the
CPU has: on an AVX-512 CPU LLVM's cost model otherwise prefers 256-bit vectors for every function
(`prefer-256-bit`, a tuning of Intel's AVX-512 cores), and Numba can only change that for the whole
process, the user's kernels included. An element-wise loop gives the same bits at any width; a loop
adding into a sum would not, so only element-wise kernels take it (the LSTM cell's forward loop:
75 -> 53 us on a [128, 512] gate block, Xeon Emerald Rapids). Where the CPU has no 512-bit vectors
it changes nothing.
"""

from __future__ import annotations

import sys
import threading
import warnings
from typing import Any, Callable

from tftk.kernels import aot

__all__ = ["njit", "prange", "intrinsic", "LazyIntrinsic", "wide_vectors", "Kernel", "registered"]

_warned = False
_lock = threading.Lock()
_registry: dict[str, "Kernel"] = {}  # "module:qualname" -> its Kernel (what the AOT build compiles)


def prange(*args: int) -> range:
    """`numba.prange` in a module that has not imported Numba yet (a plain `range` when run as Python)."""
    return range(*args)


class LazyIntrinsic:
    """`numba.extending.intrinsic(definition)`, made when a kernel of the defining module is first compiled."""

    def __init__(self, definition: Callable):
        self.definition = definition
        self.__name__ = definition.__name__
        self.__doc__ = definition.__doc__

    def __repr__(self) -> str:
        return f"<tftk lazy intrinsic {self.__name__}>"


def intrinsic(definition: Callable) -> LazyIntrinsic:
    """`numba.extending.intrinsic` in a kernel module that must not import Numba (see the module docstring)."""
    return LazyIntrinsic(definition)


# LLVM's function attribute asking its vectorisers for 512-bit vectors where the target has them
PREFER_512_BIT = '"prefer-vector-width"="512"'


def _wide_vectors(typingctx: Any) -> Any:  # pragma: no cover - runs inside Numba's compiler
    """The intrinsic `wide_vectors()` (module docstring): marks the function calling it `PREFER_512_BIT`."""
    from numba import types

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        # llvmlite's FunctionAttributes admits only LLVM's keyword attributes; a string attribute is
        # written into the function's IR as given, so it goes in through the set's own add
        set.add(builder.function.attributes, PREFER_512_BIT)
        return context.get_dummy_value()

    return types.none(), codegen


wide_vectors = intrinsic(_wide_vectors)


class Kernel:
    """A jitted function: the ahead-of-time version for the types it was built for, else Numba's dispatcher."""

    def __init__(self, py_func: Callable, options: dict):
        self.py_func = py_func
        self.options = options
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.name = f"{py_func.__module__}:{py_func.__qualname__}"
        self._dispatcher: Any = None
        self._call: Callable = self._first_call
        _registry[self.name] = self

    def __call__(self, *args: Any) -> Any:
        return self._call(*args)

    def __repr__(self) -> str:
        return f"<tftk kernel {self.__module__}.{self.__qualname__}>"

    def __reduce__(self) -> str:  # pickled by name, as functions are
        return self.__qualname__

    def _first_call(self, *args: Any) -> Any:
        versions = aot.exports(self.name)
        compiled = aot.caller(self.py_func, versions, self._numba_call) if versions else None
        self._call = self.dispatcher if compiled is None else compiled
        module = sys.modules.get(self.__module__)
        if module is not None and getattr(module, self.__name__, None) is self \
                and (compiled is None or not self._called_by_kernels(module)):
            setattr(module, self.__name__, self._call)  # callers by name skip this object's call
        return self._call(*args)

    def _numba_call(self, *args: Any) -> Any:
        return self.dispatcher(*args)

    def _called_by_kernels(self, module: Any) -> bool:
        """Whether a kernel of `module` calls this one by name: Numba compiles such a call only to a
        kernel or a dispatcher, not to the plain function `aot.caller` makes, so the name stays."""
        return any(kernel.py_func.__globals__ is module.__dict__ and self.__name__ in kernel.py_func.__code__.co_names
                   for kernel in list(_registry.values()) if kernel is not self)

    @property
    def dispatcher(self) -> Any:
        """Numba's dispatcher for this kernel (Numba is imported and the dispatcher made on first use)."""
        if self._dispatcher is None:
            with _lock:
                if self._dispatcher is None:
                    self._dispatcher = _numba_dispatcher(self.py_func, self.options)
        return self._dispatcher

    # What Numba asks of a global it finds in another kernel's body (a call to this kernel).
    @property
    def _numba_type_(self) -> Any:
        return self.dispatcher._numba_type_

    @property
    def targetoptions(self) -> dict:
        return self.dispatcher.targetoptions

    def __getattr__(self, name: str) -> Any:  # signatures, overloads, stats, inspect_types, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)


def registered(name: str) -> Kernel | None:
    """The kernel named "module:qualname" (its module imported), even once its module name points
    at Numba's dispatcher."""
    return _registry.get(name)


def njit(*args: Any, **options: Any) -> Any:
    """`numba.njit(cache=True, nogil=True, ...)`, lazily: returns a `Kernel` (see the module docstring)."""
    if args and callable(args[0]):
        return njit(**options)(args[0])
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    return lambda fn: Kernel(fn, dict(options))


def _numba_dispatcher(fn: Callable, options: dict) -> Any:
    """Numba's dispatcher for `fn`, falling back to `cache=False` when no cache can be written."""
    import numba
    from numba.extending import intrinsic as numba_intrinsic

    if fn.__globals__.get("prange") is prange:
        fn.__globals__["prange"] = numba.prange
    for name, value in list(fn.__globals__.items()):
        if isinstance(value, LazyIntrinsic):
            fn.__globals__[name] = numba_intrinsic(value.definition)
    try:
        return numba.njit(**options)(fn)
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
        _warn_once(exc)
        return numba.njit(**{**options, "cache": False})(fn)


def _warn_once(exc: RuntimeError) -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"tftk: Numba cannot write its kernel cache ({exc}); kernels are compiled in "
                      "memory for this process. Set NUMBA_CACHE_DIR to a writable folder to keep them.",
                      RuntimeWarning, stacklevel=4)
