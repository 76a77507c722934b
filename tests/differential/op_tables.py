"""Rows of differential tables: TF1 snippets built from short specs, compared per dtype tolerance.

`op_case(build, inputs)` makes a snippet that evaluates `build` (an expression over tensors named
after `inputs`) and, unless `grad=False`, the gradients of sum(y * sin(y + 0.5)) with respect to
every floating input (a non-polynomial loss: with sum(y * y) the output gradient 2y is so
structured that some wrong matrix rules still agree). `compare` checks tftk's result against TensorFlow's: the same error class, or the
same outputs within tolerance (float32 looser than float64).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from tests.tf_oracle import OracleResult

TOLERANCE = {np.dtype(np.float16): (1e-2, 1e-2), np.dtype(np.float32): (2e-4, 2e-5),
             np.dtype(np.complex64): (2e-4, 2e-5)}
DEFAULT_TOLERANCE = (1e-7, 1e-9)


def op_case(build: str, inputs: Mapping[str, Any], grad: bool = True,
            outputs: str = "y") -> tuple[str, dict[str, np.ndarray]]:
    """A snippet computing `y = build` (and its gradients) over constants named like `inputs`."""
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    lines = [f"{k} = tf.constant(inputs[{k!r}])" for k in arrays]
    lines.append(f"y = {build}")
    lines.append(f"fetch = {{'y': {outputs}}}")
    floats = [k for k, v in arrays.items() if v.dtype.kind == "f"]
    if grad and floats:
        lines.append(f"grads = tf.gradients(tf.reduce_sum(y * tf.sin(y + 0.5)), [{', '.join(floats)}])")
        lines.extend(f"fetch['d_{k}'] = grads[{i}]" for i, k in enumerate(floats))
    lines.append("with tf.Session() as sess:")
    lines.append("    outputs = sess.run(fetch)")
    return "\n".join(lines) + "\n", arrays


def compare(expected: OracleResult, got: OracleResult) -> None:
    """Assert tftk agrees with TensorFlow: same error class, else the same values and dtypes."""
    assert got.error == expected.error, f"tftk: {got.error}: {got.message}\nTF: {expected.error}: {expected.message}"
    for key, want in (expected.outputs or {}).items():
        have = np.asarray(got.outputs[key])
        assert (have.shape, have.dtype) == (want.shape, want.dtype), \
            f"{key}: {have.dtype}{list(have.shape)} != TF's {want.dtype}{list(want.shape)}"
        if want.dtype.kind in "fc":
            rtol, atol = TOLERANCE.get(want.dtype, DEFAULT_TOLERANCE)
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=key)
        else:
            np.testing.assert_array_equal(have, want, err_msg=key)
