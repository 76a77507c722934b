"""Layers import downward only (docs/architecture.md): no module of tftk imports a higher layer.

Every import is checked, at module level and inside functions alike (a lazy import is still a
dependency). Layers, lowest first; a module belongs to the layer of its longest matching prefix.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tftk"

LAYERS = [
    # Graph, Operation, Tensor, dtypes, shapes, scopes, the op registry, errors, nest; and the
    # serialisation of those (TF's protos, GraphDef, TensorProto, event and TFRecord framing with
    # its checksum); the toolkit's leaf error class, which imports nothing.
    ("framework", ["tftk.framework", "tftk.atomic", "tftk.platform", "tftk.summary.graph_def",
                   "tftk.summary.tensor_proto", "tftk.summary.events", "tftk.summary.protos",
                   "tftk.summary.run_metadata", "tftk.proto",
                   "tftk.data.tfrecord", "tftk.kernels.crc32c", "tftk.kernels.record_scan", "tftk.user_input",
                   "tftk.formats.op_export", "tftk.formats.op_signatures",
                   "tftk.formats.gradient_export", "tftk.formats.functions", "tftk.formats.while_export",
                   "tftk.formats.cond_export"]),
    ("kernels", ["tftk.kernels"]),
    ("ops", ["tftk.ops"]),
    # Session, plans and their back ends, and the remote kernel context / task server.
    ("client", ["tftk.client", "tftk.distributed"]),
    # ... and TF's file formats that hold graphs and variables (meta graphs, SavedModels).
    # ... and feature columns, which build ops and variables from a features dict.
    ("training", ["tftk.train", "tftk.summary", "tftk.debug", "tftk.debug_cli", "tftk.data",
                  "tftk.formats", "tftk.feature_column"]),
    ("toolkit", ["tftk.cli", "tftk.config", "tftk.runs", "tftk.search", "tftk.training_loop",
                 "tftk.inference", "tftk.datasets", "tftk.train_progress", "tftk.seeding", "tftk.compat",
                 "tftk.api", "tftk.examples", "tftk.errors", "tftk.serving", "tftk",
                 "tftk.formats.export_run",
                 # tf.estimator: drives tf.train, tf.data and SavedModels, premade models over feature columns
                 "tftk.estimator"]),
]

# Known upward imports, each with its reason; the list only shrinks.
EXCEPTIONS: set[tuple[str, str]] = set()


def layer_of(module: str) -> int:
    best, length = len(LAYERS) - 1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (PACKAGE.parent / relative).with_suffix(".py").exists() or (PACKAGE.parent / relative).is_dir()


def imports_of(path: Path) -> list[tuple[str, int]]:
    """(imported tftk module, line) for every import statement in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.startswith("tftk")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tftk"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.append((sub if _is_module(sub) else node.module, node.lineno))
    return found


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = layer_of(module)
        for imported, line in imports_of(path):
            theirs = layer_of(imported)
            if theirs > mine and (module, imported) not in EXCEPTIONS:
                found.append(f"{module} ({LAYERS[mine][0]}) imports {imported} ({LAYERS[theirs][0]}) "
                             f"at line {line}")
    return found


def test_no_module_imports_a_higher_layer():
    assert violations() == []


@pytest.mark.parametrize("module, layer", [
    ("tftk.framework.ops", "framework"), ("tftk.summary.graph_def", "framework"),
    ("tftk.kernels.conv", "kernels"), ("tftk.ops.while_loop", "ops"), ("tftk.client.plan", "client"),
    ("tftk.distributed.server", "client"), ("tftk.summary", "training"), ("tftk.train.saver", "training"),
    ("tftk.cli", "toolkit"), ("tftk", "toolkit"),
])
def test_layer_table(module, layer):
    assert LAYERS[layer_of(module)][0] == layer


def test_the_checker_sees_a_lazy_upward_import(tmp_path, monkeypatch):
    """A function-level import of a higher layer is found (the check cannot pass vacuously)."""
    fake = tmp_path / "tftk" / "framework"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("def f():\n    from tftk.client import session\n")
    (tmp_path / "tftk" / "client").mkdir()
    (tmp_path / "tftk" / "client" / "session.py").write_text("")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", tmp_path / "tftk")
    assert violations() == ["tftk.framework.bad (framework) imports tftk.client.session (client) at line 2"]
