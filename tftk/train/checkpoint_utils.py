"""TF1's checkpoint inspection API: NewCheckpointReader, load_checkpoint, list_variables, ...

Each function takes a checkpoint prefix or a folder (then its latest checkpoint), in TF's V2
format or tftk's `.npz`, and returns what TF1 returns (shapes as lists, dtypes as tf.DTypes).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import NotFoundError
from tftk.train import checkpoint_io
from tftk.train.checkpoint_state import latest_checkpoint
from tftk.framework.ops import GraphKeys, get_default_graph
from tftk.ops import state_ops
from tftk.ops.op_builder import make_op

__all__ = ["CheckpointReader", "NewCheckpointReader", "load_checkpoint", "list_variables", "load_variable",
           "checkpoint_exists", "init_from_checkpoint"]


def _prefix(ckpt_dir_or_file: str | os.PathLike) -> str:
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return found
    if not checkpoint_io.checkpoint_exists(path):
        raise NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                            f"matching files for {path} (no {path}.index or {path}.npz)")
    return path


class CheckpointReader:
    """Reads the tensors of one checkpoint (TF's `pywrap_tensorflow.CheckpointReader`)."""

    def __init__(self, prefix: str | os.PathLike):
        self._prefix = _prefix(prefix)
        self._variables = {name: (list(shape), dtype)
                           for name, shape, dtype in checkpoint_io.list_variables(self._prefix)}

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: shape for name, (shape, _) in self._variables.items()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: dtypes.string if dtype.kind in "OSU" else dtypes.as_dtype(dtype)
                for name, (_, dtype) in self._variables.items()}

    def has_tensor(self, name: str) -> bool:
        return name in self._variables

    def get_tensor(self, name: str) -> np.ndarray:
        """The stored value of `name` (NotFoundError naming the checkpoint when it is absent)."""
        return checkpoint_io.load_variable(self._prefix, name)

    def debug_string(self) -> bytes:
        return "".join(f"{name} ({dtype}) {shape}\n"
                       for name, (shape, dtype) in sorted(self._variables.items())).encode()


def NewCheckpointReader(filepattern: str | os.PathLike) -> CheckpointReader:  # noqa: N802 - TF's name
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file: str | os.PathLike) -> CheckpointReader:
    """A CheckpointReader of a checkpoint prefix, or of a folder's latest checkpoint."""
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file: str | os.PathLike) -> list[tuple[str, list[int]]]:
    """[(name, shape)] of every tensor in the checkpoint, sorted by name."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str | os.PathLike, name: str) -> np.ndarray:
    """The value of tensor `name` (a trailing ':0' is ignored, as in TF)."""
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name[:-2] if name.endswith(":0") else name)


def checkpoint_exists(checkpoint_prefix: str | os.PathLike) -> bool:
    """True when a checkpoint (V2 index or tftk .npz) exists under this prefix."""
    return checkpoint_io.checkpoint_exists(checkpoint_prefix)


def _bind_restore_one(op, ctx):
    prefix, name = op.get_attr("checkpoint"), op.get_attr("tensor_name")
    return lambda: checkpoint_io.load_variable(prefix, name)


registry.register_op("RestoreFromCheckpoint", _bind_restore_one, stateful=True)
registry.not_differentiable("RestoreFromCheckpoint")


def init_from_checkpoint(ckpt_dir_or_file: str | os.PathLike, assignment_map: Mapping[str, Any]) -> None:
    """Make variables initialise from a checkpoint instead of their initializers (TF1's semantics).

    `assignment_map` maps checkpoint names to variables: `{"old/w": "new/w"}` or a Variable value,
    and `{"old_scope/": "new_scope/"}` for every variable of a scope (`"/"` for all). The values
    are read when the initializer runs, not now.
    """

    reader = load_checkpoint(ckpt_dir_or_file)
    stored = reader.get_variable_to_shape_map()
    graph = get_default_graph()
    variables = {v.op.name: v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
    pairs: list[tuple[str, Any]] = []
    for source, target in assignment_map.items():
        if not isinstance(target, str):
            pairs.append((source, target))
        elif source.endswith("/") or source == "/":
            scope_in = "" if source == "/" else source
            scope_out = "" if target == "/" else target
            matched = [(scope_in + n[len(scope_out):], v) for n, v in variables.items()
                       if n.startswith(scope_out) and scope_in + n[len(scope_out):] in stored]
            if not matched:
                raise ValueError(f"init_from_checkpoint: no variable in scope {target!r} has a value "
                                 f"under {source!r} in {reader._prefix}")
            pairs.extend(matched)
        elif target in variables:
            pairs.append((source, variables[target]))
        else:
            raise ValueError(f"init_from_checkpoint: no variable named {target!r} in the graph")
    for source, variable in pairs:
        if source not in stored:
            raise ValueError(f"Tensor {source} is not found in {reader._prefix} checkpoint")
        if variable.shape.is_fully_defined() and variable.shape.as_list() != stored[source]:
            raise ValueError(f"Shape of variable {variable.op.name} ({variable.shape.as_list()}) doesn't "
                             f"match with shape of tensor {source} ({stored[source]}) from checkpoint reader.")
        with graph.as_default(), graph.name_scope(variable.op.name + "/"):
            value = make_op("RestoreFromCheckpoint", [], variable.dtype, variable.shape, "restore",
                            {"checkpoint": reader._prefix, "tensor_name": source})
            variable._initializer_op = state_ops.assign(variable._variable, value).op
