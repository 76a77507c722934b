"""`pip wheel .` (the PEP 517 build `pip install .` runs) carries the ahead-of-time kernel module
when a C compiler is there, and without one builds the same wheel minus the module, saying so in
one line. Slow: each build installs numba in pip's isolated build environment and compiles."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tftk.kernels import aot

ROOT = Path(__file__).resolve().parents[2]


def _source_copy(folder: Path) -> Path:
    """The project's files (what an sdist holds), without venvs, caches, build folders or built modules."""
    target = folder / "src"
    ignore = shutil.ignore_patterns(".venv*", ".numba-cache*", ".tftk-kernels", "build", "dist", "__pycache__",
                                    "*.egg-info", "tftk_kernels_*", ".git", "results", "data", "tests")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def _wheel(tmp_path: Path, **env: str) -> tuple[list[str], str]:
    """Build the wheel; its file names and the build's lines that start with "tftk:"."""
    source = _source_copy(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "wheel"),
                           str(source)], capture_output=True, text=True, env={**os.environ, **env}, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = (tmp_path / "wheel").glob("tftk-*.whl")
    said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip().startswith("tftk:")]
    return zipfile.ZipFile(wheel).namelist(), "\n".join(said)


@pytest.mark.slow
def test_the_wheel_carries_the_kernel_module_built_for_these_sources(tmp_path):
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler: the ahead-of-time module cannot be built here")
    names, said = _wheel(tmp_path)
    modules = [name for name in names if name.startswith("tftk/kernels/tftk_kernels_")]
    assert modules == [f"tftk/kernels/{aot.module_name()}{aot.importlib.machinery.EXTENSION_SUFFIXES[0]}"]
    assert said == ""


@pytest.mark.slow
def test_without_a_compiler_the_wheel_carries_numbas_cache_instead_and_says_so_in_one_line(tmp_path):
    names, said = _wheel(tmp_path, CC="/bin/false")
    assert "tftk/kernels/aot.py" in names
    assert not [name for name in names if name.startswith("tftk/kernels/tftk_kernels_")]
    assert said.count("\n") == 0 and "no working C/C++ compiler" in said and "into Numba's cache" in said
    indexes = {name.rsplit("/", 1)[1].split("-")[0] for name in names if name.endswith(".nbi")}
    listed = {name.replace("tftk.kernels.", "").replace(":", ".") for name in aot.SIGNATURES}
    assert listed <= indexes  # each listed kernel's index (its callees' too)
    assert not [name for name in names if name.endswith(".pyc")]


def test_the_build_step_says_so_in_one_line_when_the_module_fails_for_another_reason(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TFTK_KERNEL_DIR": str(tmp_path)}
    script = ("import sys; from tftk.kernels import aot_build\n"
              "def broken(*args): raise OSError('disk full')\n"
              "aot_build.build = broken\n"
              "sys.exit(aot_build.main(['--numba-cache-fallback']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2
    assert done.stderr == ("tftk: could not build the ahead-of-time kernels (OSError: disk full); "
                           "tftk compiles them with Numba on first use instead\n")
