"""`import tftk` stays cheap: no Numba, tensorboardX or scipy, and nothing compiled."""

import json
import subprocess
import sys

HEAVY = ["numba", "tensorboardX", "scipy", "google.protobuf", "pydantic", "typer"]


def test_import_tftk_pulls_in_no_heavy_module():
    code = ("import json, sys\n"
            "import tftk as tf\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_importing_tftk_and_its_kernels_compiles_nothing():
    code = ("import gc, importlib, json, pkgutil\n"
            "from tftk.kernels.jit import Kernel\n"
            "import tftk as tf\n"
            "import tftk.kernels\n"
            "for m in pkgutil.iter_modules(tftk.kernels.__path__):\n"
            "    importlib.import_module('tftk.kernels.' + m.name)\n"
            "found = [k for k in gc.get_objects() if isinstance(k, Kernel)]\n"
            "print(json.dumps({'kernels': len(found),\n"
            "                  'dispatched': [k.__qualname__ for k in found if k._dispatcher is not None]}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["kernels"] > 0  # the kernels are there, just not compiled (no Numba dispatcher yet)
    assert out["dispatched"] == []
