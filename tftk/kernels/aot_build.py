"""Build the ahead-of-time kernel module (`tftk.kernels.aot`): `python -m tftk.kernels.aot_build`.

Compiles every kernel of `aot.SIGNATURES` with Numba's `pycc` into one extension module in
`aot.kernel_dir()`, for the host CPU, each with the options its `njit` names (nogil, error model,
fastmath) so the module computes what the Numba-compiled kernel computes. `parallel=True` kernels
are compiled serial: their `prange` loops update each element on its own, which gives the same
values in any order. Needs Numba and a C compiler (pycc links the module); exit status 2 and one
line saying what is missing when either fails, and then nothing is written: tftk keeps compiling
its kernels with Numba on first use, as without this module. `pip install` runs this build too
(setup.py), into the package.

Numba marks `numba.pycc` pending deprecation; its announced successor is a new AOT toolchain built
on PIXIE libraries, not released yet. Should pycc go first, what it does here is small enough to
replace: Numba compiles each signature to native code (`CodeLibrary.emit_native_object`), and a
setuptools Extension of generated C wrappers (unbox the arrays, call the entry points) links it.
pycc's exported functions check no argument types: `aot.caller` does.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

from tftk.kernels import aot

__all__ = ["build", "warm_numba_cache", "main", "NoCompilerError"]


class NoCompilerError(RuntimeError):
    """The C compiler pycc links the module with is missing or does not work."""


def build(directory: Path | None = None, verbose: bool = False) -> Path:
    """Compile the module into `directory` (default `aot.kernel_dir()`); return the library's path."""
    import numba  # noqa: F401  (before numba.pycc, which warns on import)
    from numba.core.errors import NumbaPendingDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        from numba.pycc import CC
        from numba.pycc.platform import external_compiler_works

    if not external_compiler_works():  # what pycc checks first, with a message about conda
        raise NoCompilerError("no working C/C++ compiler: install gcc or clang, or set CC")

    directory = Path(directory or aot.kernel_dir())
    name = aot.module_name()
    functions: dict[Callable, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tftk-aot-") as scratch:
        module = CC(name)
        module.output_dir = scratch
        module.target_cpu = "host"
        module.verbose = verbose
        for kernel_name, signatures in aot.SIGNATURES.items():
            kernel = _kernel(kernel_name)
            functions[kernel.py_func] = kernel
            for index, signature in enumerate(signatures):
                _check_keys(signature)
                module.export(aot.export_name(kernel_name, index), signature)(kernel.py_func)
        with _kernel_options(functions), open(os.devnull, "w") as devnull, \
                contextlib.redirect_stdout(sys.stdout if verbose else devnull):
            module.compile()
        library = next(Path(scratch).glob(f"{name}*"))
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / library.name
        shutil.move(str(library), f"{target}.partial")
        os.replace(f"{target}.partial", target)
    return target


def warm_numba_cache() -> int:
    """Compile every `SIGNATURES` entry with Numba's JIT into its on-disk cache instead (no C
    compiler needed); return how many. With NUMBA_CACHE_DIR unset that cache is the `__pycache__`
    next to the kernel sources, keyed by their contents (Numba >= 0.59 hashes the source file), the
    Numba version, the bytecode and the CPU: a later process with the same files loads the kernels
    from it instead of compiling them. The key is the argument types alone, as a call makes it."""
    from numba.core import sigutils

    count = 0
    for kernel_name, signatures in aot.SIGNATURES.items():
        dispatcher = _kernel(kernel_name).dispatcher
        for signature in signatures:
            dispatcher.compile(tuple(sigutils.normalize_signature(signature)[0]))
            count += 1
    return count


def _kernel(kernel_name: str) -> Any:
    """The `Kernel` named "module:qualname" (and with it the function and its options)."""
    from tftk.kernels import jit

    importlib.import_module(kernel_name.split(":")[0])
    kernel = jit.registered(kernel_name)
    if kernel is None:
        raise LookupError(f"{kernel_name} (in tftk.kernels.aot.SIGNATURES) is not a tftk.kernels.jit kernel")
    return kernel


def _check_keys(signature: str) -> None:
    """Check that `aot.arg_keys` (which reads the signature without Numba, at run time) reads it as
    Numba does: C-contiguous, writable, aligned arrays of that dtype and rank; scalars of that dtype."""
    from numba.core import sigutils, types
    from numba.np.numpy_support import as_dtype

    args, _ = sigutils.normalize_signature(signature)
    numba_keys = []
    for arg in args:
        if isinstance(arg, types.Array):
            if not (arg.layout == "C" and arg.mutable and arg.aligned):
                raise ValueError(f"{signature}: aot.SIGNATURES lists C-contiguous arrays only")
            numba_keys.append((as_dtype(arg.dtype), arg.ndim))
        else:
            numba_keys.append(as_dtype(arg).str)
    if tuple(numba_keys) != aot.arg_keys(signature):
        raise ValueError(f"{signature}: aot.arg_keys reads {aot.arg_keys(signature)}, Numba {tuple(numba_keys)}")


@contextlib.contextmanager
def _kernel_options(functions: dict[Callable, Any]) -> Iterator[None]:
    """While pycc compiles, give each kernel the compiler flags its `njit` options give a Numba
    dispatcher (pycc itself uses one default set for all), `parallel` excepted (compiled serial)."""
    import numba.pycc.compiler as pycc_compiler
    from numba.core.compiler import Flags

    original = pycc_compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, locals, library):
        dispatcher = functions[func].dispatcher
        options = {k: v for k, v in dispatcher.targetoptions.items() if k != "parallel"}
        kernel_flags = dispatcher.targetdescr.options.parse_as_flags(Flags(), options)
        kernel_flags.no_compile, kernel_flags.nrt = flags.no_compile, flags.nrt
        return original(typingctx, targetctx, func, args, return_type, kernel_flags, locals=locals,
                        library=library)

    pycc_compiler.compile_extra = compile_extra
    try:
        yield
    finally:
        pycc_compiler.compile_extra = original


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tftk.kernels.aot_build", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help=f"output folder (default: {aot.kernel_dir()})")
    parser.add_argument("--verbose", action="store_true", help="show the compiler's commands")
    parser.add_argument("--numba-cache-fallback", action="store_true",
                        help="without a C compiler, compile the kernels into Numba's on-disk cache instead")
    args = parser.parse_args(argv)
    try:
        path = build(args.dir, args.verbose)
    except NoCompilerError as exc:
        if args.numba_cache_fallback:
            count = warm_numba_cache()
            print(f"tftk: {exc}; compiled the training kernels ({count} signatures) into Numba's cache "
                  "instead of an extension module", file=sys.stderr)
            return 2
        print(f"tftk: could not build the ahead-of-time kernels ({exc}); "
              "tftk compiles them with Numba on first use instead", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line for the user; kernels still work through Numba
        reason = (str(exc).strip().splitlines() or [""])[0]
        print(f"tftk: could not build the ahead-of-time kernels ({type(exc).__name__}: {reason}); "
              "tftk compiles them with Numba on first use instead", file=sys.stderr)
        return 2
    print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
