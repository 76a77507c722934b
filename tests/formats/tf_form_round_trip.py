"""Graphs of every differential row, exported as TensorFlow would write them, imported back.

A case builds a differential row (tests/differential: `OpRow` expressions with their gradients,
`op_tables.Row` bodies) in tftk over constant inputs, runs its fetches, and exports the graph.
Every node written in TF's form loses the `_tftk_*` attrs export adds for tftk's own importer
(`_tftk_attrs`, `_tftk_inputs`, `_tftk_output_types`, `_tftk_none_attrs`), so the node is what
TensorFlow writes; nodes of tftk-only op types keep them (TF cannot write those). The GraphDef
is imported into a new graph, the same fetches run, and the values must be the original's.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Iterator

import numpy as np

import tests.differential
from tests.differential.op_tables import Row
from tests.differential.table import OpRow, expand_row

_GRADIENT = """
floats = [t for t in (x, y, z)[:{n}] if t.dtype.is_floating]
if {grad} and floats and outs[0].dtype.is_floating:
    w = tf.cos(tf.cast(tf.reshape(tf.range(tf.size(outs[0])), tf.shape(outs[0])), outs[0].dtype) * 0.7 + 0.3)
    for k, g in enumerate(tf.gradients(tf.reduce_sum(outs[0] * w), floats)):
        if g is not None:
            fetch["grad%d" % k] = tf.convert_to_tensor(g)
"""


def _op_row_body(row: OpRow) -> tuple[str, dict]:
    """An OpRow as a Row body over constants: its first shapes and dtype, outputs and gradients."""
    _, (_, inputs) = next(iter(expand_row(row).items()))
    names = [n for n in "xyz" if n in inputs]
    lines = [f"{n} = tf.constant(inputs[{n!r}])" for n in names] + ["z = y = x" if len(names) == 1 else
                                                                      "z = y" if len(names) == 2 else ""]
    lines += [f"out = {row.expr}", "outs = list(out) if isinstance(out, (list, tuple)) else [out]",
              "fetch = {'out%d' % k: o for k, o in enumerate(outs)}"]
    return "\n".join(lines) + _GRADIENT.format(n=len(names), grad=row.grad) + "\n", inputs


def differential_cases() -> Iterator[tuple[str, str, dict]]:
    """(case name, Row-style body, inputs) of every OpRow and Row in tests/differential."""
    for info in pkgutil.iter_modules(tests.differential.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"tests.differential.{info.name}")
        seen: set[str] = set()
        for value in vars(module).values():
            if not isinstance(value, (list, tuple)) or not value or \
                    not all(isinstance(r, (OpRow, Row)) for r in value):
                continue
            for row in value:
                name = f"{info.name.removeprefix('test_')}:{row.name}"
                if name in seen:
                    continue
                seen.add(name)
                body, inputs = _op_row_body(row) if isinstance(row, OpRow) else (row.body, dict(row.inputs))
                yield name, body, {k: np.asarray(v) for k, v in inputs.items()}


def _tensors(fetch: dict) -> dict[str, Any]:
    """The fetch dict's tensors by key; a SparseTensor gives its three."""
    out = {}
    for key, value in fetch.items():
        if hasattr(value, "indices") and hasattr(value, "dense_shape"):
            out.update({f"{key}.indices": value.indices, f"{key}.values": value.values,
                        f"{key}.dense_shape": value.dense_shape})
        elif hasattr(value, "op") and hasattr(value, "value_index"):
            out[key] = value
    return out


def build_and_run(body: str, inputs: dict) -> tuple[Any, dict[str, str], dict[str, np.ndarray]]:
    """(the graph, fetch key -> tensor name, fetch key -> value) of a body run in tftk."""
    import tftk
    graph = tftk.Graph()
    scope = {"tf": tftk, "np": np, "inputs": inputs}
    with graph.as_default():
        exec(compile(body, "<row>", "exec"), scope)
        fetch = {k: tftk.identity(t, name=f"fetch_{i}") for i, (k, t) in enumerate(_tensors(scope["fetch"]).items())}
        with tftk.Session() as sess:
            sess.run(tftk.global_variables_initializer())
            values = sess.run(fetch)
    return graph, {k: t.name for k, t in fetch.items()}, values


def as_tensorflow_wrote_it(graph_def) -> tuple[Any, set[str]]:
    """The GraphDef without the `_tftk_*` attrs of nodes in TF's form, and those nodes' op types."""
    types = set()
    for node in graph_def.node:
        if "_tftk_attrs" in node.attr:
            types.add(node.op)
            for key in [k for k in node.attr if k.startswith("_tftk_")]:
                del node.attr[key]
    return graph_def, types


def import_and_run(graph_def, names: dict[str, str]) -> dict[str, np.ndarray]:
    """Import `graph_def` into a new tftk graph and run the named tensors."""
    import tftk
    with tftk.Graph().as_default() as graph:
        tftk.import_graph_def(graph_def, name="")
        fetch = {k: graph.get_tensor_by_name(n) for k, n in names.items()}
        with tftk.Session() as sess:
            sess.run(graph.get_operation_by_name("init"))  # the variables' initializer build_and_run made
            return sess.run(fetch)


def stateful(graph_def) -> bool:
    """Whether the graph draws unseeded random numbers (its values differ run to run)."""
    from tftk.framework import registry
    return any(node.op.startswith(("Random", "Multinomial", "Truncated", "Parameterized"))
               and not (node.attr["seed"].i or node.attr["seed2"].i) for node in graph_def.node
               if registry.find(node.op) is not None)
