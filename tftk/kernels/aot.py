"""The ahead-of-time compiled kernels: which ones, where the module lives, and calling it without Numba.

A fresh process that calls a Numba kernel pays Numba's import and per-process set-up (~0.5 s on
the reference machine) before the first kernel runs, even with every kernel in Numba's cache; a
fresh install also compiles each kernel on its first call (seconds for a ConvNet). The kernels a
training step of the common models needs (`SIGNATURES`) are therefore also compiled once into one
extension module (`tftk.kernels.aot_build`, which needs Numba and a C compiler), and
`tftk.kernels.jit.Kernel` calls them from there: importing that module takes a millisecond and
imports no Numba. `pip install` builds it into the package, next to these sources (setup.py);
`python -m tftk.kernels.aot_build` builds it into the user's cache folder (`kernel_dir`). Without
the module (no compiler, never built, built from other sources), every kernel is Numba-compiled
as before: same code, same options, the same bits.

The module's name carries a hash of everything it was compiled from (`build_id`): the kernel
sources, this table, the Python ABI and the CPU (it is compiled for the host CPU), so an edited kernel or a copied home directory never runs stale or foreign code; such a
module is just not found. A call runs there only when its argument types are exactly those it was built for
(`signature_key`: dtype, rank, C-contiguous, writable and aligned arrays; the scalar types),
otherwise Numba compiles the version for those types, as it always did. That check is a function
generated per kernel (`caller`): a few attribute tests per argument, so a call costs about what a
call through Numba's dispatcher does. TFTK_AOT_KERNELS=0 leaves the module unused (every kernel
through Numba).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import platform
import re
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["SIGNATURES", "kernel_dir", "search_path", "build_id", "module_name", "export_name", "arg_keys", "load",
           "location", "exports", "caller", "signature_key"]

_F4_1, _F4_2, _F4_3, _F4_4 = "f4[::1]", "f4[:, ::1]", "f4[:, :, ::1]", "f4[:, :, :, ::1]"
_I8_1, _I8_4 = "i8[::1]", "i8[:, :, :, ::1]"
_SIZES = ", ".join(["i8"] * 10)  # kh, kw, sh, sw, dh, dw, oh, ow (and the batch range) of a conv kernel

# "module:qualname" -> the Numba signatures compiled ahead of time: the float32 training steps of
# the MLP, the LeNet and deep-MNIST ConvNets (SGD and Adam), TF's truncated and plain normal initialisers and dropout's uniform mask,
# the transposed weight copies of the RNNs' backward passes, and the gemm adding a static RNN's weight
# gradient products into their running sum.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "tftk.kernels.conv:_patch_rows": (f"void({_F4_4}, {_SIZES}, {_F4_2}, b1)",),
    "tftk.kernels.conv:_tap_im2col": (f"void({_F4_3}, {_SIZES}, {_F4_2})",),
    "tftk.kernels.conv_one_channel:_forward": (f"void({_F4_3}, {_F4_3}, i8, {_F4_1}, i8, i8, i8, i8, b1, {_F4_4})",),
    "tftk.kernels.conv_one_channel:_filter_sums": (f"void({_F4_3}, {_F4_4}, i8, i8, i8, i8, {_F4_3})",),
    "tftk.kernels.winograd:_tile_transforms": (f"void({_F4_2}, {_F4_2}, {_I8_1}, i8, i8, i8, i8, i8, {_F4_2}, "
                                               f"{_F4_2})",),
    "tftk.kernels.winograd:_pad_to_hwnc": (f"void({_F4_4}, i8, i8, i8, {_F4_4})",),
    "tftk.kernels.winograd:_output_transforms": (f"void({_F4_2}, {_F4_2}, {_I8_1}, i8, i8, i8, i8, {_F4_4}, {_F4_2}, "
                                                 f"{_F4_2})",),
    "tftk.kernels.pool:_max_pool_2x2": (f"void({_F4_4}, i8, i8, {_F4_4}, {_I8_4})",),
    "tftk.kernels.pool:_max_pool_relu_grad": (f"void({_F4_4}, {_I8_4}, {_F4_4}, {_F4_4})",),
    "tftk.kernels.pool:_tiled_2x2_grad": (f"void({_F4_4}, {_F4_4}, {_F4_4}, b1, {_F4_4})",),
    "tftk.kernels.elementwise:_relu_grad": (f"void({_F4_2}, {_F4_2}, {_F4_2})",),
    "tftk.kernels.elementwise:bias_relu_rows": (f"void({_F4_2}, {_F4_1}, {_F4_2})",),
    "tftk.kernels.elementwise:bias_relu_rows_in_place": (f"void({_F4_2}, {_F4_1})",),
    "tftk.kernels.softmax_xent:_xent": (f"void({_F4_2}, {_F4_2}, {_F4_1}, {_F4_2})",),
    "tftk.kernels.softmax_xent:_sparse_xent": (f"void({_F4_2}, {_I8_1}, {_F4_1}, {_F4_2})",),
    "tftk.kernels.optim:_gradient_descent_dense": (f"void({_F4_1}, {_F4_1}, f4)",),
    "tftk.kernels.optim:_adam_dense": (f"void({_F4_1}, {_F4_1}, {_F4_1}, {_F4_1}, f4, f4, f4, f4)",),
    "tftk.kernels.philox_fill:uniform_float32": (f"void(u8[::1], {_F4_1})",),
    "tftk.kernels.philox_fill:truncated_float32": (f"void(u8[::1], {_F4_1})",),
    "tftk.kernels.philox_fill:normal_float32": (f"void(u8[::1], {_F4_1})",),
    "tftk.kernels.transpose:_transpose_tiles": (f"void({_F4_2}, {_F4_2})",),
    "tftk.kernels.blas:_gemm_into": (f"b1({', '.join(['i8'] * 10)}, {_F4_2}, i8)",),
}

_lock = threading.Lock()
_SCALAR_KEYS = {bool: "|b1", np.bool_: "|b1", int: "<i8", np.int64: "<i8", np.int32: "<i4",
                float: "<f8", np.float64: "<f8", np.float32: "<f4"}
_SCALAR_TYPES = {key: tuple(t for t, k in _SCALAR_KEYS.items() if k == key) for key in set(_SCALAR_KEYS.values())}
PACKAGE_DIR = Path(__file__).parent  # where `pip install` puts the module (setup.py)


def kernel_dir() -> Path:
    """Where `python -m tftk.kernels.aot_build` puts the module: $TFTK_KERNEL_DIR, else the user's cache folder."""
    explicit = os.environ.get("TFTK_KERNEL_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "tftk" / "kernels"


def search_path() -> list[Path]:
    """Where the module is looked for, in order: only $TFTK_KERNEL_DIR when it is set; else the
    package (built by `pip install`), then the user's cache folder."""
    if os.environ.get("TFTK_KERNEL_DIR"):
        return [kernel_dir()]
    return [PACKAGE_DIR, kernel_dir()]


def build_id() -> str:
    """Hash of what the module is compiled from: kernel sources, Python ABI, machine and CPU features.
    Not numpy's version: `pip install` builds with the newest numpy, whose modules also run on
    older ones; a module numpy cannot run refuses to import, and `load` then finds nothing."""
    digest = hashlib.sha256()
    for source in sorted(PACKAGE_DIR.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    digest.update(f"{sys.implementation.cache_tag} {platform.machine()} {_cpu_features()}".encode())
    return digest.hexdigest()[:20]


def module_name() -> str:
    return f"tftk_kernels_{build_id()}"


def export_name(kernel: str, index: int) -> str:
    """The module's name for version `index` of `kernel` ("module:qualname") in `SIGNATURES`."""
    return f"{kernel.replace('.', '_').replace(':', '__')}_{index}"


def _cpu_features() -> str:
    """The CPU's feature flags (Linux), else the processor's name: code built for one host CPU may
    use instructions another lacks."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith(("flags", "Features")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def arg_keys(signature: str) -> tuple:
    """`signature_key` of the arguments a `SIGNATURES` entry takes, read without Numba: "f4[:, ::1]"
    is (float32, 2) (the table lists C-contiguous arrays only), "i8" is "<i8"."""
    inside = signature[signature.index("(") + 1:signature.rindex(")")]
    keys = []
    for dtype, dims in re.findall(r"(\w+)\s*(\[[^\]]*\])?", inside):
        keys.append((np.dtype(dtype), dims.count(",") + 1) if dims else np.dtype(dtype).str)
    return tuple(keys)


def signature_key(args: tuple) -> tuple:
    """What decides which compiled version a call can run: per argument the dtype and rank of a
    C-contiguous, writable, aligned array (a dtype in foreign byte order never matches), or the
    scalar's type; None for anything else."""
    return tuple(map(_arg_key, args))


def _arg_key(value: Any) -> Any:
    if type(value) is np.ndarray:
        return (value.dtype, value.ndim) if value.flags.carray else None
    return _SCALAR_KEYS.get(type(value))


@functools.cache
def _found() -> tuple[Path | None, dict[str, dict[tuple, Callable]]]:
    """The module's file and its functions by kernel name and signature key, found once per process;
    (None, {}) without a module (or with TFTK_AOT_KERNELS=0, which makes every kernel go through Numba)."""
    if os.environ.get("TFTK_AOT_KERNELS", "1") == "0":
        return None, {}
    with _lock:  # the sessions of a model server may all make their first kernel call at once
        name = module_name()
        for directory in search_path():
            table = load(directory, name)
            if table:
                return Path(directory) / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}", table
        return None, {}


def location() -> Path | None:
    """The module file this process runs its kernels from; None when every kernel goes through Numba."""
    return _found()[0]


@functools.cache
def load(directory: Path, name: str) -> dict[str, dict[tuple, Callable]]:
    """The functions of module `name` in `directory` by kernel name and signature key ({} if absent)."""
    library = Path(directory) / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    if not library.is_file():
        return {}
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:  # e.g. built against a numpy whose C API this one lacks
        return {}
    return {kernel: {arg_keys(signature): getattr(module, export_name(kernel, index))
                     for index, signature in enumerate(signatures)}
            for kernel, signatures in SIGNATURES.items()}


def exports(kernel: str) -> dict[tuple, Callable] | None:
    """The compiled versions of `kernel` ("module:qualname") by signature key, or None."""
    return _found()[1].get(kernel)


def caller(py_func: Callable, versions: dict[tuple, Callable], fallback: Callable) -> Callable:
    """A function taking `py_func`'s arguments that runs the version (of `exports`: compiled
    functions by signature key) their types match, else `fallback` (Numba's dispatcher).

    The generated body tests each argument as `signature_key` reads it (an ndarray of that exact
    dtype object, rank, and C-contiguous, writable, aligned; a scalar of one of the key's types),
    which costs a fraction of building the key and hashing it. A dtype equal to the key's but not
    the same object (rare: numpy reuses one object per built-in dtype) takes the keyed lookup."""
    code = py_func.__code__
    if py_func.__defaults__ or py_func.__kwdefaults__ or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) \
            or code.co_kwonlyargcount:
        def keyed(*args: Any) -> Any:
            function = versions.get(signature_key(args))
            return fallback(*args) if function is None else function(*args)
        return keyed
    params = code.co_varnames[:code.co_argcount]
    arguments = ", ".join(params)
    namespace: dict[str, Any] = {"__type": type, "__ndarray": np.ndarray, "__fallback": fallback,
                                 "__versions": versions, "__signature_key": signature_key}
    lines = [f"def {py_func.__name__}({arguments}):"]
    for index, (key, function) in enumerate(versions.items()):
        tests = []
        for position, (param, arg) in enumerate(zip(params, key)):
            if isinstance(arg, tuple):
                namespace[f"__dtype_{index}_{position}"] = arg[0]
                tests.append(f"__type({param}) is __ndarray and {param}.dtype is __dtype_{index}_{position} "
                             f"and {param}.ndim == {arg[1]} and {param}.flags.carray")
            else:
                namespace[f"__types_{index}_{position}"] = _SCALAR_TYPES.get(arg, ())
                tests.append(f"__type({param}) in __types_{index}_{position}")
        namespace[f"__version_{index}"] = function
        if len(key) == len(params):
            lines.append(f"    if {' and '.join(tests) or 'True'}:\n        return __version_{index}({arguments})")
    lines.append(f"    __function = __versions.get(__signature_key(({''.join(p + ', ' for p in params)})))")
    lines.append(f"    return __fallback({arguments}) if __function is None else __function({arguments})")
    exec("\n".join(lines), namespace)  # noqa: S102 - code built above from the signature table only
    generated = namespace[py_func.__name__]
    # named as the kernel, in its module (where jit.Kernel puts it): pickled by reference as the kernel is
    generated.__module__, generated.__qualname__, generated.__doc__ = py_func.__module__, py_func.__qualname__, \
        py_func.__doc__
    return generated
