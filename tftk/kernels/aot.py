"""The ahead-of-time compiled kernels: which ones, where the module lives, and loading it without Numba.

A fresh process that calls a Numba kernel pays Numba's import and per-process set-up (~0.5 s on
the reference machine) before the first kernel runs, even with every kernel in Numba's cache; a
fresh install also compiles each kernel on its first call (seconds for a ConvNet). The kernels a
training step of the common models needs (`SIGNATURES`) are therefore also compiled once into one
extension module (`python -m tftk.kernels.aot_build`, which needs Numba and a C compiler), and
`tftk.kernels.jit.Kernel` calls them from there: importing that module takes a millisecond and
imports no Numba. Without the module (no compiler, never built, built from other sources), every
kernel is Numba-compiled as before: same code, same options, the same bits.

The module's name carries a hash of everything it was compiled from (`build_id`): the kernel
sources, this table, the Python ABI and the CPU (it is compiled for the host CPU), so an edited
kernel or a copied home directory never runs stale or foreign code; such a module is just not
found. A call runs there only when its argument types are exactly those it was built for
(`signature_key`: dtype, rank, C-contiguous, writable and aligned arrays; the scalar types),
otherwise Numba compiles the version for those types, as it always did. TFTK_AOT_KERNELS=0 leaves
the module unused (every kernel through Numba).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

__all__ = ["SIGNATURES", "kernel_dir", "build_id", "module_name", "load", "exports", "signature_key"]

_F4_1, _F4_2, _F4_3, _F4_4 = "f4[::1]", "f4[:, ::1]", "f4[:, :, ::1]", "f4[:, :, :, ::1]"
_I8_1, _I8_4 = "i8[::1]", "i8[:, :, :, ::1]"
_SIZES = ", ".join(["i8"] * 10)  # kh, kw, sh, sw, dh, dw, oh, ow (and the batch range) of a conv kernel

# "module:qualname" -> the Numba signatures compiled ahead of time: the float32 training steps of
# the MLP, the LeNet and deep-MNIST ConvNets (SGD and Adam), TF's truncated and plain normal initialisers and dropout's uniform mask.
SIGNATURES: dict[str, tuple[str, ...]] = {
    "tftk.kernels.conv:_patch_rows": (f"void({_F4_4}, {_SIZES}, {_F4_2}, b1)",),
    "tftk.kernels.conv:_tap_im2col": (f"void({_F4_3}, {_SIZES}, {_F4_2})",),
    "tftk.kernels.conv_one_channel:_gradient_planes": (f"void({_F4_4}, i8, {_F4_3})",),
    "tftk.kernels.conv_one_channel:_filter_sums": (f"void({_F4_2}, {_F4_3}, i8, i8, i8, i8, i8, {_F4_3})",),
    "tftk.kernels.winograd:_tile_transform": (f"void({_F4_2}, {_F4_2}, i8[:, ::1], {_I8_1}, i8, i8, i8, i8, {_F4_3}, "
                                              f"{_F4_2})",),
    "tftk.kernels.winograd:_pad_to_hwnc": (f"void({_F4_4}, i8, i8, i8, {_F4_4})",),
    "tftk.kernels.winograd:_output_transform": (f"void({_F4_2}, {_F4_2}, i8[:, ::1], {_I8_1}, i8, i8, i8, i8, i8, "
                                                f"{_F4_4}, {_F4_2}, {_F4_2})",),
    "tftk.kernels.pool:_max_pool": (f"void({_F4_4}, {', '.join(['i8'] * 6)}, {_F4_4}, {_I8_4})",),
    "tftk.kernels.pool:_max_pool_relu_grad": (f"void({_F4_4}, {_I8_4}, {_F4_4}, {_F4_4})",),
    "tftk.kernels.elementwise:_relu_grad": (f"void({_F4_2}, {_F4_2}, {_F4_2})",),
    "tftk.kernels.elementwise:bias_relu_rows_in_place": (f"void({_F4_2}, {_F4_1})",),
    "tftk.kernels.softmax_xent:_xent": (f"void({_F4_2}, {_F4_2}, {_F4_1}, {_F4_2})",),
    "tftk.kernels.softmax_xent:_sparse_xent": (f"void({_F4_2}, {_I8_1}, {_F4_1}, {_F4_2})",),
    "tftk.kernels.optim:_gradient_descent_dense": (f"void(b1, {_F4_1}, {_F4_1}, f4)",),
    "tftk.kernels.optim:_adam_dense": (f"void(b1, {_F4_1}, {_F4_1}, {_F4_1}, {_F4_1}, f4, f4, f4, f4)",),
    "tftk.kernels.philox_fill:uniform_float32": (f"void(u8[::1], {_F4_1})",),
    "tftk.kernels.philox_fill:truncated_float32": (f"void(u8[::1], {_F4_1})",),
    "tftk.kernels.philox_fill:normal_float32": (f"void(u8[::1], {_F4_1})",),
}

_lock = threading.Lock()
_SCALAR_KEYS = {bool: "|b1", np.bool_: "|b1", int: "<i8", np.int64: "<i8", np.int32: "<i4",
                float: "<f8", np.float64: "<f8", np.float32: "<f4"}


def kernel_dir() -> Path:
    """Where the module is built and looked for: $TFTK_KERNEL_DIR, else the user's cache folder."""
    explicit = os.environ.get("TFTK_KERNEL_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "tftk" / "kernels"


def build_id() -> str:
    """Hash of what the module is compiled from: kernel sources, Python ABI, machine and CPU features."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    digest.update(f"{sys.implementation.cache_tag} {platform.machine()} {_cpu_features()}".encode())
    return digest.hexdigest()[:20]


def module_name() -> str:
    return f"tftk_kernels_{build_id()}"


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
def _loaded() -> dict[str, dict[tuple, Callable]]:
    """The module's functions by kernel name and signature key, found once per process; empty
    without a module (or with TFTK_AOT_KERNELS=0, which makes every kernel go through Numba)."""
    if os.environ.get("TFTK_AOT_KERNELS", "1") == "0":
        return {}
    with _lock:  # the sessions of a model server may all make their first kernel call at once
        return load(kernel_dir(), module_name())


@functools.cache
def load(directory: Path, name: str) -> dict[str, dict[tuple, Callable]]:
    """The functions of module `name` in `directory` by kernel name and signature key ({} if absent)."""
    manifest_path = Path(directory) / f"{name}.json"
    library = Path(directory) / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    if not (manifest_path.is_file() and library.is_file()):
        return {}
    spec = importlib.util.spec_from_file_location(name, library)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table: dict[str, dict[tuple, Callable]] = {}
    for export, kernel, key in json.loads(manifest_path.read_text())["exports"]:
        key = tuple((np.dtype(k[0]), k[1]) if isinstance(k, list) else k for k in key)
        table.setdefault(kernel, {})[key] = getattr(module, export)
    return table


def exports(kernel: str) -> dict[tuple, Callable] | None:
    """The compiled versions of `kernel` ("module:qualname") by signature key, or None."""
    return _loaded().get(kernel)
