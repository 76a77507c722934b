"""SavedModelBuilder: write a SavedModel folder (TF's saved_model/builder_impl.py), atomically.

Everything is staged in a hidden folder beside `export_dir` and renamed into place by `save()`,
so a failure leaves no half-written SavedModel. Each MetaGraphDef keeps the nodes its
signatures, its Saver and its init op need (TF cannot import tftk's training-only helper ops,
and a served model never runs them).
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from typing import Any, Mapping, Sequence

from tftk.formats.saved_model import constants
from tftk.formats.saved_model.signature_def_utils import is_valid_signature
from tftk.proto.tensorflow import AssetFileDef, SavedModel, SignatureDef, TensorInfo, message_to_text

__all__ = ["SavedModelBuilder"]


class SavedModelBuilder:
    """Builds a SavedModel: one `add_meta_graph_and_variables`, any `add_meta_graph`, then `save`."""

    def __init__(self, export_dir: str | os.PathLike):
        self._export_dir = os.path.abspath(os.fspath(export_dir))
        if os.path.exists(self._export_dir) and (not os.path.isdir(self._export_dir) or os.listdir(self._export_dir)):
            raise AssertionError(f"Export directory already exists, and isn't empty. Please choose a different "
                                 f"export directory, or delete all the contents of the specified directory: "
                                 f"{self._export_dir}")
        parent = os.path.dirname(self._export_dir)
        os.makedirs(parent, exist_ok=True)
        self._staging = tempfile.mkdtemp(prefix=f".{os.path.basename(self._export_dir)}.", suffix=".tmp", dir=parent)
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._saver_def = None
        self._saved = False

    def add_meta_graph_and_variables(self, sess: Any, tags: Sequence[str],
                                     signature_def_map: Mapping[str, SignatureDef] | None = None,
                                     assets_collection: Any = None, legacy_init_op: Any = None,
                                     clear_devices: bool = False, main_op: Any = None,
                                     strip_default_attrs: bool = False, saver: Any = None) -> None:
        """Save `sess`'s variables (variables/variables, V2) and the graph's MetaGraphDef under `tags`."""
        from tftk.train.saver import Saver
        if self._saver_def is not None:
            raise AssertionError("Graph state including variables and assets has already been saved. Please "
                                 "invoke `add_meta_graph()` instead.")
        with sess.graph.as_default():
            saver = saver if saver is not None else Saver(allow_empty=True, write_version=2)
            folder = os.path.join(self._staging, constants.VARIABLES_DIRECTORY)
            os.makedirs(folder, exist_ok=True)
            saver.save(sess, os.path.join(folder, constants.VARIABLES_FILENAME), write_meta_graph=False,
                       write_state=False)
            self._saver_def = saver.saver_def
            self._add(sess.graph, tags, signature_def_map, main_op or legacy_init_op, clear_devices, assets_collection)

    def add_meta_graph(self, tags: Sequence[str], signature_def_map: Mapping[str, SignatureDef] | None = None,
                       assets_collection: Any = None, legacy_init_op: Any = None, clear_devices: bool = False,
                       main_op: Any = None, strip_default_attrs: bool = False, saver: Any = None) -> None:
        """Add the default graph's MetaGraphDef under `tags`, sharing the variables already saved."""
        from tftk.framework.ops import get_default_graph
        if self._saver_def is None:
            raise AssertionError("Graph state including variables and assets has not been saved yet. Please "
                                 "invoke `add_meta_graph_and_variables()` first.")
        graph = get_default_graph()
        if saver is not None:
            self._saver_def = saver.saver_def
        self._add(graph, tags, signature_def_map, main_op or legacy_init_op, clear_devices, assets_collection)

    def _add(self, graph: Any, tags: Sequence[str], signatures: Mapping[str, SignatureDef] | None,
             init_op: Any, clear_devices: bool, assets: Any) -> None:
        from tftk.formats.graph_util import extract_sub_graph
        from tftk.formats.meta_graph import export_meta_graph
        if isinstance(tags, str):
            tags = [tags]
        for key, signature in (signatures or {}).items():
            if not is_valid_signature(signature):
                raise AttributeError(f"signature_def_map[{key!r}] is not a valid SignatureDef")
        if init_op is not None:
            graph.add_to_collection(constants.MAIN_OP_KEY, getattr(init_op, "op", init_op))
        meta = export_meta_graph(graph=graph, saver_def=self._saver_def if self._saver_def.restore_op_name else None,
                                 clear_devices=clear_devices)
        roots = [info.name for s in (signatures or {}).values() for info in [*s.inputs.values(), *s.outputs.values()]]
        roots += [meta.saver_def.restore_op_name, meta.saver_def.save_tensor_name] if meta.saver_def.restore_op_name else []
        roots += [op.name for op in graph.get_collection(constants.MAIN_OP_KEY)]
        full = meta.graph_def
        kept = {n.name for n in extract_sub_graph(full, [r for r in roots if r]).node}
        roots += _variable_roots(meta, kept)  # TF's loader rebuilds each kept Variable from these
        meta.graph_def.CopyFrom(extract_sub_graph(full, [r for r in roots if r]))
        kept = {n.name for n in meta.graph_def.node}
        for key in list(meta.collection_def):
            _prune_collection(meta, key, kept)
        for tensor in assets or ():
            meta.asset_file_def.add().CopyFrom(self._copy_asset(tensor))
        meta.meta_info_def.tags.extend(tags)
        for key, signature in (signatures or {}).items():
            meta.signature_def[key].CopyFrom(signature)
        self._saved_model.meta_graphs.add().CopyFrom(meta)

    def _copy_asset(self, tensor: Any) -> AssetFileDef:
        """Copy the file a constant asset tensor names into assets/; the AssetFileDef the loader feeds
        the tensor from (its new path) when it runs the init op."""
        from tftk.framework.constant_value import constant_value
        value = constant_value(tensor)
        if value is None or value.shape != ():
            raise ValueError(f"Asset tensor {tensor.name} must be a constant string scalar naming a file")
        source = value.item().decode("utf-8") if isinstance(value.item(), bytes) else str(value.item())
        if not os.path.isfile(source):
            raise ValueError(f"Asset file {source} (tensor {tensor.name}) does not exist")
        folder = os.path.join(self._staging, constants.ASSETS_DIRECTORY)
        os.makedirs(folder, exist_ok=True)
        stem, extension = os.path.splitext(os.path.basename(source))
        name, k = stem + extension, 0
        while os.path.exists(os.path.join(folder, name)) and not filecmp.cmp(source, os.path.join(folder, name), False):
            k += 1  # another file of the same name (TF numbers them likewise)
            name = f"{stem}_{k}{extension}"
        shutil.copyfile(source, os.path.join(folder, name))
        return AssetFileDef(tensor_info=TensorInfo(name=tensor.name), filename=name)

    def save(self, as_text: bool = False) -> str:
        """Write saved_model.pb (or .pbtxt) and move the folder into place; returns its path."""
        if self._saved:
            raise AssertionError(f"SavedModel {self._export_dir} was already saved")
        name = constants.SAVED_MODEL_FILENAME_PBTXT if as_text else constants.SAVED_MODEL_FILENAME_PB
        data = message_to_text(self._saved_model).encode() if as_text \
            else self._saved_model.SerializeToString()
        with open(os.path.join(self._staging, name), "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.isdir(self._export_dir):
            os.rmdir(self._export_dir)  # empty, checked in __init__
        os.replace(self._staging, self._export_dir)
        self._saved = True
        return os.path.join(self._export_dir, name)

    def __del__(self):
        if not getattr(self, "_saved", True) and os.path.isdir(getattr(self, "_staging", "")):
            shutil.rmtree(self._staging, ignore_errors=True)


def _variable_roots(meta, kept: set[str]) -> list[str]:
    """Initializer, snapshot and initial-value names of the variables the pruned graph keeps."""
    from tftk.proto.tensorflow import VariableDef
    roots = []
    for raw in meta.collection_def["variables"].bytes_list.value if "variables" in meta.collection_def else []:
        proto = VariableDef.FromString(raw)
        if proto.variable_name.split(":")[0] in kept:
            roots += [proto.initializer_name, proto.snapshot_name, proto.initial_value_name]
    return roots


def _prune_collection(meta, key: str, kept: set[str]) -> None:
    """Drop collection entries naming nodes the pruned graph no longer has."""
    from tftk.proto.tensorflow import VariableDef
    collection = meta.collection_def[key]
    kind = collection.WhichOneof("kind")
    if kind == "node_list":
        values = [v for v in collection.node_list.value if v.split(":")[0].lstrip("^") in kept]
        del collection.node_list.value[:]
        collection.node_list.value.extend(values)
    elif kind == "bytes_list" and key in ("variables", "trainable_variables", "local_variables",
                                          "model_variables", "moving_average_variables"):
        values = [v for v in collection.bytes_list.value
                  if VariableDef.FromString(v).variable_name.split(":")[0] in kept]
        del collection.bytes_list.value[:]
        collection.bytes_list.value.extend(values)
