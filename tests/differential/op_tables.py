"""Differential rows with hand-picked inputs (SPD matrices, sorted indices, ...), run as one batch.

A row's `body` is TF1 code that builds a graph from `inputs` and sets `fetch`, a dict of tensors;
`op_row` writes that body for an expression `y` and the gradients of sum(z * sin(z + 0.5)) (z: y,
or its real and imaginary parts) with respect to every float input: a non-polynomial loss, since
with sum(y * y) the output gradient 2y is so structured that some wrong matrix rules still agree. `batch_source` joins many rows into one
snippet that builds each in its own variable scope, initialises the variables, and runs each
row's fetch, recording a row's error class instead of its values when it raises; one session
serves a whole table, and one TensorFlow process all registered tables (`register`).
`row_result` cuts one row's result back out, for tests/differential/table.py's `compare`.
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any, Mapping, Sequence

import numpy as np

from tests.tf_oracle import OracleResult

SEP = "__"


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    body: str
    inputs: Mapping[str, Any] = dataclasses.field(default_factory=dict)


def op_row(name: str, build: str, inputs: Mapping[str, Any], grad: bool = True) -> Row:
    """`y = build` over constants named like `inputs`, fetched with its float inputs' gradients."""
    arrays = {k: np.asarray(v) for k, v in inputs.items()}
    lines = [f"{k} = tf.constant(inputs[{k!r}])" for k in arrays]
    lines += [f"y = {build}", "fetch = {'y': y}"]
    floats = [k for k, v in arrays.items() if v.dtype.kind == "f"]
    if grad and floats:
        lines.append("z = tf.concat([tf.reshape(tf.real(y), [-1]), tf.reshape(tf.imag(y), [-1])], 0) "
                     "if y.dtype.is_complex else y")
        lines.append(f"grads = tf.gradients(tf.reduce_sum(z * tf.sin(z + 0.5)), [{', '.join(floats)}])")
        lines.append(f"fetch.update({{'d_' + k: tf.convert_to_tensor(g) for k, g in zip({floats!r}, grads) "
                     f"if g is not None}})")
    return Row(name, "\n".join(lines) + "\n", arrays)


_BATCH = '''
def _plain(value):  # strings come back as bytes (object arrays npz cannot hold): decoded, latin-1
    value = np.asarray(value)
    if value.dtype != object and value.dtype.kind != "S":
        return value
    return np.array([v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in value.reshape(-1)],
                    dtype=str).reshape(value.shape)
results = {{}}
built = {{}}
for name, build in ROWS:
    try:
        with tf.variable_scope(name):
            built[name] = build({{k[len(name) + {sep_len}:]: v for k, v in inputs.items() if k.startswith(name + {sep!r})}})
    except Exception as e:
        results[name + {sep!r} + "error"] = np.array(type(e).__name__)
        results[name + {sep!r} + "message"] = np.array(str(e)[:300])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for name, fetch in built.items():
        try:
            results.update({{name + {sep!r} + k: _plain(v) for k, v in sess.run(fetch).items()}})
        except Exception as e:
            results[name + {sep!r} + "error"] = np.array(type(e).__name__)
            results[name + {sep!r} + "message"] = np.array(str(e)[:300])
outputs = results
'''


def batch_source(rows: Sequence[Row]) -> tuple[str, dict[str, np.ndarray]]:
    """One snippet (and its inputs) that runs every row, as tests/tf_oracle.py runs snippets."""
    names = [r.name for r in rows]
    assert len(set(names)) == len(names) and not any(SEP in n for n in names), names
    parts, inputs = [], {}
    for k, row in enumerate(rows):
        parts.append(f"def _row{k}(inputs):\n{textwrap.indent(row.body, '    ')}    return fetch\n")
        inputs.update({row.name + SEP + key: np.asarray(v) for key, v in row.inputs.items()})
    table = "ROWS = [" + ", ".join(f"({r.name!r}, _row{k})" for k, r in enumerate(rows)) + "]\n"
    return "\n".join(parts) + table + _BATCH.format(sep=SEP, sep_len=len(SEP)), inputs


def row_result(batch: OracleResult, name: str) -> OracleResult:
    """One row's outputs, or its error class, out of a batch result."""
    if batch.outputs is None:  # the batch itself failed: every row reports that
        return batch
    prefix = name + SEP
    mine = {k[len(prefix):]: v for k, v in batch.outputs.items() if k.startswith(prefix)}
    if "error" in mine:
        return OracleResult(None, str(mine["error"]), str(mine["message"]))
    return OracleResult(mine, None)



_REGISTERED: dict[str, tuple[str, dict[str, np.ndarray]]] = {}
_TF_RESULTS: dict[str, OracleResult] = {}


def register(table: str, rows: Sequence[Row]) -> None:
    """Declare a table's rows (at import): the first `run_batch` runs every declared table in one
    TensorFlow process, since starting TensorFlow costs more than most tables' snippets."""
    _REGISTERED[table] = batch_source(rows)


def run_batch(table: str) -> tuple[OracleResult, OracleResult]:
    """(TensorFlow's result, tftk's result) of a registered table's batch snippet."""
    from tests.tf_oracle import run_in_tf, run_in_tftk
    if table not in _TF_RESULTS:
        _TF_RESULTS.update(run_in_tf({k: v for k, v in _REGISTERED.items() if k not in _TF_RESULTS}))
    return _TF_RESULTS[table], run_in_tftk(*_REGISTERED[table])


def table_tests(table: str, rows: Sequence[Row]):
    """Register a table and make its module fixture and test, one case per row; a test module binds
    them: `results, test_tftk_agrees_with_tensorflow = table_tests("linalg", ROWS)`."""
    import pytest

    from tests.differential.table import compare
    register(table, rows)

    @pytest.fixture(scope="module")
    def results():
        return run_batch(table)

    @pytest.mark.parametrize("name", [row.name for row in rows])
    def test_tftk_agrees_with_tensorflow(results, name):
        expected, got = results
        compare(row_result(got, name), row_result(expected, name))

    return results, test_tftk_agrees_with_tensorflow
