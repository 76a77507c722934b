"""tftk's build step: the ahead-of-time kernel module, compiled by `pip install` when a C compiler is there.

pyproject.toml holds the project's metadata; this file only adds the kernel module as an extension
of the package (`tftk/kernels/tftk_kernels_<build id><ABI suffix>`, where `tftk.kernels.aot` looks
first). It is built as an ordinary extension so the standard PEP 517 path does the rest: `pip
install .`, `pip wheel .` (a platform wheel, compiled for this CPU) and `pip install -e .` (built in
place in the source tree) all carry it, with no command for the user to run afterwards.

The module is compiled by `python -m tftk.kernels.aot_build` from this source tree, in a child
process, with Numba's pycc (numba and numpy are build requirements in pyproject.toml). Without a
C compiler the child compiles the same kernels with Numba's JIT into Numba's cache beside the
installed kernel sources instead (found there by a later process when NUMBA_CACHE_DIR is unset,
the package folder is writable and Numba's version is the build's), and says so in one line;
when anything else fails it says why in one line, and the install goes on without either: tftk
then compiles its kernels with Numba on first use.
`TFTK_BUILD_KERNELS=0` skips the step.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class KernelModule(Extension):
    """The kernel module: built by `tftk.kernels.aot_build` (Numba's pycc), not from listed sources;
    optional, so an install without it goes on."""

    def __init__(self, name: str):
        super().__init__(name, sources=[], optional=True)


class BuildExt(build_ext):
    """`build_ext` that builds a `KernelModule` with aot_build and lets the install go on without it."""

    def build_extension(self, ext: Extension) -> None:
        if not isinstance(ext, KernelModule):
            super().build_extension(ext)
            return
        target = Path(self.get_ext_fullpath(ext.name)).resolve()  # the child runs elsewhere
        _remove_kernel_modules(target.parent)  # a build folder kept from an earlier build may hold one
        if os.environ.get("TFTK_BUILD_KERNELS", "1") == "0":
            print("tftk: TFTK_BUILD_KERNELS=0: ahead-of-time kernels not built", file=sys.stderr)
            return
        # The child compiles the kernel files that get installed: this tree's in place (pip install -e),
        # else the build folder's copies (build_py has run), beside which the Numba fallback writes
        # its cache. NUMBA_CACHE_DIR would send that cache elsewhere.
        sources = ROOT if self.editable_mode else Path(self.build_lib).resolve()
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=os.pathsep.join([str(sources), os.environ.get("PYTHONPATH", "")]),
                   PYTHONDONTWRITEBYTECODE="1")  # no .pyc files of the build's own imports in the wheel
        done = subprocess.run([sys.executable, "-m", "tftk.kernels.aot_build", "--dir", str(target.parent),
                               "--numba-cache-fallback"], cwd=sources, env=env)
        if done.returncode == 0 and not self.editable_mode:
            # pycc compiles a kernel's callees through their Numba dispatchers, which cache them
            # beside the sources: of no use to the module, they stay out of the wheel
            for cached in (sources / "tftk" / "kernels" / "__pycache__").glob("*.nb[ic]"):
                cached.unlink()
        if done.returncode not in (0, 2):  # 2: aot_build has said why in one line
            print("tftk: installing without the ahead-of-time kernels: kernels compile with Numba on first use",
                  file=sys.stderr)

    def copy_extensions_to_source(self) -> None:
        """In place (`pip install -e .`): drop the modules earlier builds left in the source tree, then
        copy the new one (an optional extension that was not built is not copied)."""
        _remove_kernel_modules(ROOT / "tftk" / "kernels")
        super().copy_extensions_to_source()


def _remove_kernel_modules(folder: Path) -> None:
    """Remove the kernel modules an earlier build left in `folder` (stale ones are never loaded)."""
    for stale in folder.glob("tftk_kernels_*"):
        stale.unlink()


def kernel_module() -> KernelModule:
    """The extension, named as `tftk.kernels.aot` will look for it (its build id hashes this tree's
    kernel sources, the Python ABI and this CPU)."""
    # this tree's aot.py by its path, whatever tftk the build's Python may have (numpy and the
    # standard library are all it imports)
    spec = importlib.util.spec_from_file_location("_tftk_kernels_aot", ROOT / "tftk" / "kernels" / "aot.py")
    aot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(aot)
    return KernelModule(f"tftk.kernels.{aot.module_name()}")


setup(ext_modules=[kernel_module()], cmdclass={"build_ext": BuildExt})
