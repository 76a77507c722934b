"""`tf.train.Saver`: save a session's variables to checkpoints and restore them, TF1's way.

A Saver adds two ops to the graph once, when it is built: `save/SaveV2` (reads the variables and
writes one atomic checkpoint: TF's V2 `.index` + `.data-00000-of-00001` by default, tftk's older
`.npz` with write_version=1, see `checkpoint_io`) and `save/RestoreV2` (checks the file
against the variables, then writes their values). Both take the checkpoint prefix through the
`save/Const` filename tensor, so every later `save`/`restore` reuses the same cached plan and adds
nothing to the graph. A restore checks every key, shape and dtype before touching any variable:
a bad checkpoint leaves the session as it was.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Mapping, Sequence

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import GraphKeys, Operation, Tensor, get_default_graph, guard_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.op_builder import make_op
from tftk.train.checkpoint_io import (checkpoint_exists, list_variables, load_arrays, save_arrays,
                                      save_bundle)
from tftk.train.checkpoint_state import (CheckpointRetention, get_checkpoint_state,
                                         latest_checkpoint, update_checkpoint_state)
from tftk.ops.constant_op import constant, placeholder_with_default
from tftk.proto.tensorflow import SaverDef
from tftk.formats.meta_graph import export_meta_graph

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists"]


def _prefix_of(filename: np.ndarray) -> str:
    """The checkpoint prefix a string tensor holds (bytes or str)."""
    value = filename[()] if isinstance(filename, np.ndarray) else filename
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def parse_slice_spec(spec: str) -> tuple[list[int], list[tuple[int, int]]]:
    """TF's shape-and-slice string "10 3 0,4:-" as (full shape, [(start, length or -1)])."""
    *dims, extents = spec.split(" ")
    full = [int(d) for d in dims]
    parsed = [(0, -1) if e == "-" else tuple(int(v) for v in e.split(",")) for e in extents.split(":")]
    if len(parsed) != len(full):
        raise ValueError(f"slice spec {spec!r}: {len(parsed)} extents for a rank-{len(full)} shape")
    return full, parsed


def _region(extents: list[tuple[int, int]]) -> tuple:
    return tuple(slice(start, None if length < 0 else start + length) for start, length in extents)


def _bind_save(op: Operation, ctx: Any):
    names = op.get_attr("tensor_names")
    specs = op.get_attr("shape_and_slices") or ("",) * len(names)
    npz = op.get_attr("_tftk_npz")

    def kernel(filename, *values):
        whole: dict[str, np.ndarray] = {}
        sliced: dict[str, tuple[list[int], list]] = {}
        for name, spec, value in zip(names, specs, values):
            if not spec:
                whole[name] = value
                continue
            full, extents = parse_slice_spec(spec)
            sliced.setdefault(name, (full, []))[1].append((extents, value))
        if npz:  # tftk's own format stores whole arrays: put the parts together
            for name, (full, parts) in sliced.items():
                array = np.zeros(full, dtype=parts[0][1].dtype)
                for extents, value in parts:
                    array[_region(extents)] = value
                whole[name] = array
            save_arrays(_prefix_of(filename), whole)
        else:
            save_bundle(_prefix_of(filename), whole, sliced)
        return filename
    return kernel


def _bind_restore(op: Operation, ctx: Any):
    names = op.get_attr("tensor_names")
    specs = op.get_attr("shape_and_slices") or ("",) * len(names)
    variables = op.get_attr("variable_ops")
    boxes = [ctx.box(v) for v in variables]
    wanted = [(v.outputs[0].shape, v.outputs[0].dtype) for v in variables]
    parsed = [parse_slice_spec(spec) if spec else (None, None) for spec in specs]

    def kernel(filename):
        prefix = _prefix_of(filename)
        stored = {name: (shape, dtype) for name, shape, dtype in list_variables(prefix)}
        for name, variable, (shape, dtype), (full, _) in zip(names, variables, wanted, parsed):
            _check_entry(prefix, name, variable.name, stored, shape if full is None else TensorShape(full), dtype)
        arrays = load_arrays(prefix, list(dict.fromkeys(names)))
        for name, box, (_, dtype), (_, extents) in zip(names, boxes, wanted, parsed):
            value = arrays[name] if extents is None else arrays[name][_region(extents)]
            _write(box, value, dtype.as_numpy_dtype)
        return filename
    return kernel


def _check_entry(prefix: str, key: str, variable: str, stored: dict, shape: Any, dtype: dtypes.DType) -> None:
    """Raise naming the checkpoint and the variable when `key` is missing or does not fit."""
    if key not in stored:
        shown = ", ".join(sorted(stored)[:10]) + (", ..." if len(stored) > 10 else "")
        raise errors.NotFoundError(
            None, None, f"Key {key!r} (for variable {variable}) not found in checkpoint {prefix!r}; it "
            f"holds: {shown or 'no variables'}. Pass a var_list dict mapping checkpoint keys to variables "
            "to restore under other names")
    stored_shape, stored_dtype = stored[key]
    if shape.ndims is not None and not shape.is_compatible_with(stored_shape):
        raise errors.InvalidArgumentError(
            None, None, f"Shape mismatch restoring variable {variable} from key {key!r} of checkpoint "
            f"{prefix!r}: the variable has shape {shape}, the checkpoint holds {list(stored_shape)}")
    if not _castable(stored_dtype, dtype):
        raise errors.InvalidArgumentError(
            None, None, f"Dtype mismatch restoring variable {variable} from key {key!r} of checkpoint "
            f"{prefix!r}: the variable is {dtype.name}, the checkpoint holds {stored_dtype}")


def _castable(stored: np.dtype, dtype: dtypes.DType) -> bool:
    """Same kind of data: numbers into numbers (TF1 requires equal dtypes; we allow float32 <-> 64)."""
    if dtype is dtypes.string:
        return stored.kind in "SUO"
    target = np.dtype(dtype.as_numpy_dtype)
    return stored.kind == target.kind or (stored.kind in "iu" and target.kind in "iu")


def _write(box: Any, array: np.ndarray, npdtype: Any) -> None:
    """Store `array` as the variable's value, in place when the buffer fits (no new allocation)."""
    current = box.value
    if current is not None and current.shape == array.shape and current.dtype == array.dtype \
            and current.flags.writeable:
        np.copyto(current, array)
    else:
        box.value = np.array(array, dtype=npdtype, copy=True)


registry.register_op("SaveV2", _bind_save, stateful=True)
registry.register_op("RestoreV2", _bind_restore, stateful=True)
registry.not_differentiable("SaveV2", "RestoreV2")


def _variable_op(value: Any) -> Operation:
    """The VariableV2 op behind a Variable, its reference tensor or its read."""
    tensor = value._ref() if hasattr(value, "_ref") else value
    op = tensor.op if isinstance(tensor, Tensor) else None
    while op is not None and registry.lookup(op.type).inline is registry.Inline.ALIAS and op.inputs:
        op = op.inputs[0].op
    if op is None or registry.lookup(op.type).inline is not registry.Inline.VARIABLE:
        raise TypeError(f"Saver: {value!r} is not a variable; var_list takes Variables or a dict "
                        "{checkpoint_key: Variable}")
    return op


def _parts(value: Any) -> list[tuple[str, str | None, Operation]]:
    """(slice spec, full name, variable op) of each part of a variable ("" and None when whole)."""
    parts = value._get_variable_list() if hasattr(value, "_get_variable_list") else [value]
    out = []
    for part in parts:
        info = getattr(part, "_save_slice_info", None)
        out.append(("", None, _variable_op(part)) if info is None else (info.spec, info.full_name, _variable_op(part)))
    return out


def _named_variables(var_list: Any) -> list[tuple[str, str, Operation]]:
    """(checkpoint key, slice spec, variable op) from None (all global variables), a list or a dict.

    A part of a partitioned variable is saved under its full variable's name with TF's slice spec
    ("10 3 0,4:0,3"); every other variable under its op name (or its dict key) with spec "".
    """
    if var_list is None:
        var_list = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES) + \
            get_default_graph().get_collection("saveable_objects")
    if isinstance(var_list, Mapping):
        # a dict key names a whole or a PartitionedVariable; a single part keeps its full name
        items = [(full if full and not hasattr(value, "_get_variable_list") else str(key), spec, op)
                 for key, value in var_list.items() for spec, full, op in _parts(value)]
    else:
        items = [(full or op.name, spec, op) for value in var_list for spec, full, op in _parts(value)]
    seen: dict[str, set[str]] = {}
    for key, spec, _ in items:
        specs = seen.setdefault(key, set())
        if spec in specs or (specs and (not spec or "" in specs)):
            raise ValueError(f"At least two variables have the same name: {key}")
        specs.add(spec)
    return items


class Saver:
    """Saves and restores variables (TF1's `tf.train.Saver`).

    Args:
      var_list: None (every global variable), a list of variables (stored under their op names),
        or a dict {checkpoint key: variable} — the key says where a value is saved and, on
        restore, which stored value goes into the variable.
      write_version: 2 (`tf.train.SaverDef.V2`, the default) writes TF's V2 checkpoints, which
        TensorFlow reads; 1 writes tftk's older `.npz` format (TF's own V1 format is not written).
        Restore reads either format.
      reshape, sharded, restore_sequentially, builder, pad_step_number, save_relative_paths,
        filename: accepted for TF1 compatibility; tftk writes one unsharded checkpoint and stores
        state-file paths relative to their directory.
      max_to_keep: how many recent checkpoints to keep (None or 0: keep all, track none).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      name: the name scope of the save/restore ops (default "save").
      allow_empty: with no variables at all, build nothing (save/restore become no-ops) instead of
        raising ValueError.
      defer_build: build the ops on the first `build()`/`save()`/`restore()` call.
    """

    def __init__(self, var_list: Sequence[Any] | Mapping[str, Any] | None = None, reshape: bool = False,
                 sharded: bool = False, max_to_keep: int | None = 5,
                 keep_checkpoint_every_n_hours: float = 10000.0, name: str | None = None,
                 restore_sequentially: bool = False, saver_def: Any = None, builder: Any = None,
                 defer_build: bool = False, allow_empty: bool = False, write_version: int = 2,
                 pad_step_number: bool = False, save_relative_paths: bool = False,
                 filename: str | None = None):
        if saver_def is not None:
            raise errors.UnimplementedError(None, None, "Saver(saver_def=...) is not supported by tftk; "
                                            "build a Saver from var_list instead")
        self._var_list = var_list
        self._name = name or "save"
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._default_filename = filename or "model"
        if write_version not in (1, 2):
            raise ValueError(f"write_version must be 1 or 2 (tf.train.SaverDef.V1 / V2), got {write_version!r}")
        self._write_version = write_version
        self._retention = CheckpointRetention(max_to_keep, keep_checkpoint_every_n_hours)
        self._built = False
        self._is_empty = False
        self._save_lock = threading.Lock()  # a Supervisor's checkpoint thread may save alongside the caller
        if not defer_build:
            self.build()

    # ---- graph ---------------------------------------------------------------------------------
    def build(self) -> None:
        """Add the save and restore ops (once)."""
        if self._built:
            return
        named = _named_variables(self._var_list)
        if not named:
            if not self._allow_empty:
                raise ValueError("No variables to save")
            self._is_empty, self._built = True, True
            return
        graph = named[0][2].graph
        names = [key for key, _, _ in named]
        specs = [spec for _, spec, _ in named]
        variable_ops = [op for _, _, op in named]
        with graph.as_default(), graph.control_dependencies(None), guard_scope(graph, ()):
            with graph.name_scope(self._name):
                self._filename = placeholder_with_default(
                    constant(self._default_filename, dtypes.string, name="filename"), [], name="Const")
                self._save = make_op("SaveV2", [self._filename] + [op.outputs[0] for op in variable_ops],
                                     dtypes.string, [], "SaveV2",
                                     {"tensor_names": names, "shape_and_slices": specs,
                                      "_tftk_npz": self._write_version == 1})
                self._restore = make_op("RestoreV2", [self._filename], dtypes.string, [], "restore_all",
                                        {"tensor_names": names, "shape_and_slices": specs,
                                         "variable_ops": variable_ops})
        self._graph = graph
        self._built = True

    @property
    def last_checkpoints(self) -> list[str]:
        """Prefixes of the checkpoints this Saver still keeps, oldest first."""
        return self._retention.last_checkpoints

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: Sequence[tuple[str, float]]) -> None:
        """Replace the list of kept checkpoints (prefix, timestamp), e.g. after a restart."""
        self._retention.set_last_checkpoints_with_time(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: Sequence[str]) -> None:
        """Track the existing checkpoints among `checkpoint_paths` (so they get pruned in turn)."""
        self._retention.recover_last_checkpoints(checkpoint_paths)

    # ---- save / restore ------------------------------------------------------------------------
    def save(self, sess: Any, save_path: str | os.PathLike | None = None, global_step: Any = None,
             latest_filename: str | None = None, meta_graph_suffix: str = "meta",
             write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False, *,
             logdir: str | os.PathLike | None = None) -> str | None:
        """Write the variables' values to checkpoint `save_path[-global_step]`; returns that prefix.

        Args:
          sess: the session whose variable values are saved.
          save_path: the checkpoint prefix, e.g. "train/model.ckpt" (its folder is created).
          global_step: an int or a tensor/variable holding it; appended as `-STEP`.
          latest_filename: name of the state file (default "checkpoint").
          write_state: update the state file and prune checkpoints beyond max_to_keep.
          logdir: an alias of `save_path` (the spelling seed 000's Supervisor example uses).
          write_meta_graph: also write `<prefix>.<meta_graph_suffix>` (a MetaGraphDef: graph,
            SaverDef, collections), as TF1 does, so `tf.train.import_meta_graph` can rebuild it.
          strip_default_attrs, save_debug_info: accepted for TF1 compatibility.

        Raises:
          FailedPreconditionError: a variable is not initialised (named in the message).
        """
        if save_path is None:
            save_path = logdir
        if save_path is None:
            raise ValueError("Saver.save needs a save_path (a checkpoint prefix such as 'train/model.ckpt')")
        self.build()
        save_path = os.fspath(save_path)
        prefix = save_path
        if global_step is not None:
            step = _step_value(sess, global_step)
            prefix = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        if self._is_empty:
            return None
        folder = os.path.dirname(os.path.abspath(prefix))  # not of save_path: 'dir/' + '-STEP' lives in dir
        os.makedirs(folder, exist_ok=True)
        with self._save_lock:
            sess.run(self._save, {self._filename: prefix})
            if write_meta_graph:
                self.export_meta_graph(f"{prefix}.{meta_graph_suffix}")
            if write_state:
                self._retention.record(os.path.abspath(prefix), time.time())
                update_checkpoint_state(folder, prefix, self._retention.last_checkpoints or [prefix],
                                        latest_filename,
                                        all_model_checkpoint_timestamps=self._retention.timestamps or None,
                                        last_preserved_timestamp=self._retention.last_preserved_timestamp)
                self._retention.delete_expired()
        return prefix

    @property
    def saver_def(self):
        """This Saver as TF's SaverDef proto (tensor and op names, retention, format V2)."""
        self.build()
        if self._is_empty:
            return SaverDef()
        # Names as the exported graph has them (see formats/op_export.expanded_nodes): TF's loaders run these.
        scope = self._save.op.name.rpartition("/")[0]
        return SaverDef(filename_tensor_name=self._filename.name, save_tensor_name=f"{scope}/control_dependency:0",
                        restore_op_name=self._restore.op.name, max_to_keep=self._retention.max_to_keep or 0,
                        keep_checkpoint_every_n_hours=self._retention.keep_checkpoint_every_n_hours,
                        version=SaverDef.V2 if self._write_version == 2 else SaverDef.V1)

    def as_saver_def(self):
        return self.saver_def

    def export_meta_graph(self, filename: str | os.PathLike | None = None, collection_list=None,
                          as_text: bool = False, clear_devices: bool = False, **kwargs):
        """Write (and return) the MetaGraphDef of this Saver's graph with its SaverDef."""
        self.build()
        return export_meta_graph(filename, saver_def=self.saver_def, collection_list=collection_list,
                                 as_text=as_text, graph=getattr(self, "_graph", None),
                                 clear_devices=clear_devices)

    def restore(self, sess: Any, save_path: str | os.PathLike | None) -> None:
        """Load the variables' values from checkpoint `save_path` (a prefix, as `save` returns).

        Raises:
          ValueError: save_path is None.
          NotFoundError: the checkpoint or one of the keys is missing (names file and variable).
          DataLossError: the file is truncated or corrupted.
          InvalidArgumentError: a stored shape or dtype does not fit its variable.
        """
        if save_path is None:
            raise ValueError("Can't load save_path when it is None: pass a checkpoint prefix, e.g. "
                             "tf.train.latest_checkpoint(<dir>)")
        self.build()
        if self._is_empty:
            return
        prefix = os.fspath(save_path)
        if not checkpoint_exists(prefix) and os.path.isfile(prefix):
            raise errors.InvalidArgumentError(
                None, None, f"{prefix} is a single file, as TensorFlow's V1 checkpoints are; tftk reads V2 "
                "checkpoints (.index + .data) and its own .npz: re-save it with TensorFlow's "
                "tf.train.Saver(write_version=tf.train.SaverDef.V2)")
        if not checkpoint_exists(prefix):
            raise errors.NotFoundError(
                None, None, f"The passed save_path is not a valid checkpoint: {prefix} (no {prefix}.index or {prefix}.npz); "
                "use tf.train.latest_checkpoint(<dir>) to find the newest checkpoint of a directory")
        sess.run(self._restore, {self._filename: prefix})


def _step_value(sess: Any, global_step: Any) -> int:
    """An int global step from an int, a numpy scalar, a Variable or a tensor."""
    if isinstance(global_step, (int, np.integer)):
        return int(global_step)
    if isinstance(global_step, Tensor) or hasattr(global_step, "_ref"):
        return int(sess.run(global_step))
    raise TypeError(f"global_step must be an int, a Variable or a Tensor, got {global_step!r}")
