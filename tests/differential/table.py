"""Differential tables: one row per op, expanded to snippets run in tftk and in real TensorFlow.

A row (``OpRow``) names a TF1 expression in the inputs ``x``, ``y``, ``z`` and the shapes and dtypes
to try. Each (shapes, dtype, static/dynamic) combination becomes one snippet that, in both
libraries, feeds the inputs through placeholders (fully known shapes, or all dimensions ``None``)
and records: the forward values, the static shape, the dynamic shape (``tf.shape``), the op
name, and for float dtypes the gradients of ``sum(out * w)`` with respect to every input
(``tf.gradients``; ``w`` a fixed cotangent made from the output's shape). A row may instead be a
whole snippet (``SnippetRow``): error classes, collections, names. ``compare`` checks a tftk
result against TensorFlow's with per-dtype tolerances; adding an op is adding one row.

Use::

    CASES = expand(ROWS)                      # name -> (source, inputs)
    oracle = oracle_fixture(CASES)            # one TensorFlow process for all of them
    compare(run_in_tftk(*CASES[name]), oracle[name])
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Mapping, Sequence

import numpy as np
import pytest

from tests.tf_oracle import OracleResult, run_in_tf

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")

# (rtol, atol) per dtype of the compared array; exact for everything not listed.
# float64 is looser than its epsilon: TF's Eigen transcendental functions differ from numpy's
# by up to ~1e-8 relative.
TOLERANCE = {"float16": (1e-2, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-7, 1e-10),
             "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-10)}


@dataclasses.dataclass(frozen=True)
class OpRow:
    """One op: ``expr`` over ``x``, ``y``, ``z`` (as many as each shape tuple has entries).

    ``shapes`` lists shape tuples, one shape per input. ``fixed`` gives inputs that stay the same
    whatever the dtype (indices, axes): name -> array, fed through a placeholder of its own dtype
    and never differentiated. ``domain`` bounds the random float inputs (ints draw from it too).
    ``grad`` turns the gradient check off for ops TF does not differentiate. ``dynamic`` runs every
    shape variant a second time with all dimensions unknown.
    """

    name: str
    expr: str
    shapes: Sequence[tuple]
    dtypes: Sequence[str] = FLOATS
    domain: tuple[float, float] = (-2.0, 2.0)
    fixed: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    grad: bool = True
    dynamic: bool = True


@dataclasses.dataclass(frozen=True)
class SnippetRow:
    """A whole TF1 snippet (see tests/tf_oracle.py) whose ``outputs`` or error class must match."""

    name: str
    source: str
    inputs: Mapping[str, Any] = dataclasses.field(default_factory=dict)


_OP_SNIPPET = '''\
args = [tf.placeholder(getattr(tf, d), None if r is None else [None] * r if {dynamic} else s, name=n)
        for n, d, s, r in {placeholders}]
{names} = args
out = {expr}
outs = list(out) if isinstance(out, (list, tuple)) else [out]
feed = {{a: inputs[a.op.name] for a in args}}
outputs = {{}}
with tf.Session() as sess:
    for i, o in enumerate(outs):
        value, dyn = sess.run([o, tf.shape(o)], feed)
        outputs["value%d" % i] = value
        outputs["dynamic_shape%d" % i] = dyn
        st = o.shape
        outputs["static_shape%d" % i] = np.array(-2 if st.ndims is None else [-1 if d is None else d for d in st.as_list()])
        outputs["name%d" % i] = np.array(o.op.name)
    if {grad}:
        o = outs[0]
        w = tf.cos(tf.cast(tf.reshape(tf.range(tf.size(o)), tf.shape(o)), o.dtype) * 0.7 + 0.3)
        wrt = [a for a in args if a.op.name in {differentiable}]
        grads = tf.gradients(tf.reduce_sum(o * w), wrt)
        for a, g in zip(wrt, grads):
            outputs["grad_" + a.op.name] = np.array("None") if g is None else sess.run(tf.convert_to_tensor(g), feed)
'''


def _inputs_for(row: OpRow, shapes: tuple, dtype: str, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo, hi = row.domain
    arrays = {}
    for name, shape in zip("xyz", shapes):
        if name in row.fixed:
            arrays[name] = np.asarray(row.fixed[name])
        elif np.dtype(dtype).kind in "iu":
            arrays[name] = rng.integers(int(lo), int(hi) + 1, size=shape).astype(dtype)
        elif np.dtype(dtype).kind == "b":
            arrays[name] = rng.random(size=shape) < 0.5
        else:
            arrays[name] = rng.uniform(lo, hi, size=shape).astype(dtype)
    return arrays


def expand_row(row: OpRow) -> dict[str, tuple[str, dict[str, np.ndarray]]]:
    """The row's snippets: name ``<row>-<shape#>-<dtype>[-dyn]`` -> (source, inputs)."""
    cases = {}
    for k, shapes in enumerate(row.shapes):
        for dtype in row.dtypes:
            seed = zlib.crc32(f"{row.name}-{k}-{dtype}".encode())
            inputs = _inputs_for(row, shapes, dtype, seed)
            names = list("xyz"[:len(shapes)])
            placeholders = [(n, str(inputs[n].dtype), list(inputs[n].shape), inputs[n].ndim) for n in names]
            grad = row.grad and np.dtype(dtype).kind == "f"
            differentiable = [n for n in names if n not in row.fixed]
            for dynamic in (False, True) if row.dynamic else (False,):
                source = _OP_SNIPPET.format(dynamic=dynamic, placeholders=placeholders,
                                            names=", ".join(names) + ",", expr=row.expr, grad=grad,
                                            differentiable=differentiable)
                cases[f"{row.name}-{k}-{dtype}" + ("-dyn" if dynamic else "")] = (source, inputs)
    return cases


def first_cases(rows: Sequence[OpRow | SnippetRow]) -> list[str]:
    """One case per row (first shapes, first dtype, static): the quick tier of a table."""
    return [row.name if isinstance(row, SnippetRow) else next(iter(expand_row(row))) for row in rows]


def expand(rows: Sequence[OpRow | SnippetRow]) -> dict[str, tuple[str, dict[str, np.ndarray]]]:
    """All rows' snippets, by case name (row names must be unique)."""
    cases: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
    for row in rows:
        new = expand_row(row) if isinstance(row, OpRow) else {row.name: (row.source, dict(row.inputs))}
        clash = set(new) & set(cases)
        assert not clash, f"duplicate differential case names: {sorted(clash)}"
        cases.update(new)
    return cases


def compare(got: OracleResult, expected: OracleResult, names: bool = True) -> None:
    """Assert tftk's result is TensorFlow's: the same error class, or the same outputs.

    ``names=False`` leaves out the op-name outputs (``name<i>``), which a separate test compares.
    """
    assert got.error == expected.error, (
        f"tftk: {got.error}: {got.message[:300]}\nTensorFlow: {expected.error}: {expected.message[:300]}")
    if expected.outputs is None:
        return
    assert sorted(got.outputs) == sorted(expected.outputs), (sorted(got.outputs), sorted(expected.outputs))
    for key, want in expected.outputs.items():
        if not names and key.startswith("name"):
            continue
        have = np.asarray(got.outputs[key])
        assert have.shape == want.shape, f"{key}: shape {have.shape}, TensorFlow {want.shape}"
        if want.dtype.kind in "US":
            assert have.dtype.kind == want.dtype.kind and have.tolist() == want.tolist(), f"{key}: {have} vs {want}"
            continue
        assert have.dtype == want.dtype, f"{key}: dtype {have.dtype}, TensorFlow {want.dtype}"
        rtol, atol = TOLERANCE.get(want.dtype.name, (0, 0))
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=key)


def oracle_fixture(cases: Mapping[str, tuple[str, Mapping[str, Any]]], names: Sequence[str] | None = None):
    """A module-scoped fixture: TensorFlow's results for `cases` (or those `names`), one process."""
    @pytest.fixture(scope="module")
    def oracle() -> dict[str, OracleResult]:
        return run_in_tf({name: cases[name] for name in (cases if names is None else names)})
    return oracle
