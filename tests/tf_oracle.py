"""Real TensorFlow (TF 2.x's ``tf.compat.v1``) as the test oracle, run in its own virtual env.

TensorFlow needs its own numpy, so it never shares a process with tftk: snippets run in a
subprocess of the interpreter named by ``TFTK_TF_PYTHON`` (``.ci/run`` builds that venv with
``pip install tensorflow-cpu``). Where it is unset or cannot import TensorFlow, tests that need
the oracle skip with that reason; they never pass silently.

``TF_USE_LEGACY_KERAS=1`` makes ``tf.compat.v1.layers`` the TF1 layers of the ``tf-keras`` package
(Keras 3 dropped them); without that package the layer tables skip.

A snippet is TF1 source run with ``tf`` (``tensorflow.compat.v1``, v2 behaviour disabled), ``np``
and ``inputs`` (a dict of arrays) in scope, in a fresh default graph; it assigns ``outputs``, a
dict of name -> array-like. The same source can be run in tftk with ``tf = tftk``, which is how a
differential table compares the two. Many snippets go to one TensorFlow process, since importing
TensorFlow takes seconds.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pytest

TF_PYTHON_ENV = "TFTK_TF_PYTHON"

_RUNNER = r'''
import json, sys, traceback
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
tf.get_logger().setLevel("ERROR")

work = sys.argv[1]
with open(work + "/cases.json") as f:
    cases = json.load(f)
results = {}
for name, source in cases.items():
    with np.load(work + "/in-" + name + ".npz", allow_pickle=False) as z:
        inputs = {k: z[k] for k in z.files}
    scope = {"tf": tf, "np": np, "inputs": inputs}
    try:
        with tf.Graph().as_default():
            exec(compile(source, name, "exec"), scope)
        outputs = {k: np.asarray(v) for k, v in scope["outputs"].items()}
        np.savez(work + "/out-" + name + ".npz", **outputs)
        results[name] = {"ok": True}
    except Exception as e:  # the oracle's error class is itself a result to compare
        results[name] = {"ok": False, "error": type(e).__name__, "message": str(e)[:500]}
with open(work + "/results.json", "w") as f:
    json.dump(results, f)
'''


class OracleResult:
    """One snippet's outcome in TensorFlow: its outputs, or the error class it raised."""

    def __init__(self, outputs: dict[str, np.ndarray] | None, error: str | None, message: str = ""):
        self.outputs = outputs
        self.error = error
        self.message = message

    def __repr__(self) -> str:
        return f"OracleResult(error={self.error!r}, outputs={sorted(self.outputs or {})})"


@functools.lru_cache(maxsize=1)
def tf_python() -> str | None:
    """The TensorFlow venv's interpreter, or None when there is none that imports TensorFlow."""
    path = os.environ.get(TF_PYTHON_ENV)
    if not path or not Path(path).exists():
        return None
    probe = subprocess.run([path, "-c", "import tensorflow"], capture_output=True, timeout=300)
    return path if probe.returncode == 0 else None


def require_tf() -> str:
    """Skip the calling test, saying why, when real TensorFlow is not available."""
    path = tf_python()
    if path is None:
        pytest.skip(f"real TensorFlow not available: set {TF_PYTHON_ENV} to a python with "
                    "tensorflow-cpu installed (.ci/run builds one)")
    return path


def run_in_tf(cases: Mapping[str, tuple[str, Mapping[str, Any]]]) -> dict[str, OracleResult]:
    """Run each named (source, inputs) snippet in real TensorFlow; all in one process."""
    python = require_tf()
    with tempfile.TemporaryDirectory(prefix="tftk-oracle-") as work:
        for name, (_, inputs) in cases.items():
            np.savez(f"{work}/in-{name}.npz", **{k: np.asarray(v) for k, v in inputs.items()})
        Path(work, "cases.json").write_text(json.dumps({n: src for n, (src, _) in cases.items()}))
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", TF_USE_LEGACY_KERAS="1")
        proc = subprocess.run([python, "-c", _RUNNER, work], capture_output=True, text=True,
                              env=env, timeout=1800)
        if proc.returncode != 0:
            raise RuntimeError(f"TensorFlow oracle process failed:\n{proc.stderr[-3000:]}")
        results = json.loads(Path(work, "results.json").read_text())
        out: dict[str, OracleResult] = {}
        for name, result in results.items():
            if result["ok"]:
                with np.load(f"{work}/out-{name}.npz", allow_pickle=False) as z:
                    out[name] = OracleResult({k: z[k] for k in z.files}, None)
            else:
                out[name] = OracleResult(None, result["error"], result["message"])
        return out


def run_in_tftk(source: str, inputs: Mapping[str, Any]) -> OracleResult:
    """Run one snippet in tftk exactly as ``run_in_tf`` runs it in TensorFlow."""
    import tftk

    scope = {"tf": tftk, "np": np, "inputs": {k: np.asarray(v) for k, v in inputs.items()}}
    try:
        with tftk.Graph().as_default():
            exec(compile(source, "<snippet>", "exec"), scope)
    except Exception as e:
        return OracleResult(None, type(e).__name__, str(e))
    return OracleResult({k: np.asarray(v) for k, v in scope["outputs"].items()}, None)


def both_succeeded(oracle: Mapping[str, OracleResult], cases: Mapping[str, tuple[str, Mapping[str, Any]]],
                   name: str) -> tuple[OracleResult, OracleResult]:
    """(TensorFlow's, tftk's) outcome of snippet `name`, asserting that neither raised."""
    expected, got = oracle[name], run_in_tftk(*cases[name])
    assert expected.error is None, expected.message
    assert got.error is None, got.message
    return expected, got



def assert_same_outputs(expected: OracleResult, got: OracleResult) -> None:
    """Both runs produced the same output names with exactly equal values (dtype included)."""
    assert sorted(got.outputs) == sorted(expected.outputs)
    for key, value in expected.outputs.items():
        assert got.outputs[key].dtype == value.dtype, f"{key}: {got.outputs[key].dtype} != {value.dtype}"
        np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)


def assert_close_outputs(expected: OracleResult, got: OracleResult, rtol: float = 1e-5, atol: float = 1e-5,
                         context: str = "") -> None:
    """Both runs produced the same output names; text outputs (variable names) equal, numbers within
    rtol/atol."""
    assert sorted(got.outputs) == sorted(expected.outputs)
    for key, value in expected.outputs.items():
        if value.dtype.kind in "USO":
            np.testing.assert_array_equal(got.outputs[key], value, err_msg=f"{context}: {key}")
        else:
            np.testing.assert_allclose(got.outputs[key], value, rtol=rtol, atol=atol, err_msg=f"{context}: {key}")


def run_script_in_tf(script: str, *args: str, cwd: str | os.PathLike | None = None) -> str:
    """Run a whole Python script in the TensorFlow venv (fixture generators); return its stdout."""
    python = require_tf()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", TF_USE_LEGACY_KERAS="1")
    proc = subprocess.run([python, script, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} failed in TensorFlow:\n{proc.stderr[-3000:]}")
    return proc.stdout


if __name__ == "__main__":  # pragma: no cover - a manual check of the venv
    print(tf_python() or f"no TensorFlow: set {TF_PYTHON_ENV}", file=sys.stderr)
