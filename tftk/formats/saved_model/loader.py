"""`tf.saved_model.loader.load`: a SavedModel's MetaGraphDef for a tag set, into a Session.

Works with a plain Session on any graph: the graph is imported into `sess.graph`, the variables
restored from `variables/variables`, and the main/legacy init op run, as TF1's loader does.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from tftk.formats.saved_model import constants
from tftk.proto.tensorflow import MetaGraphDef, SavedModel, parse_text

__all__ = ["load", "maybe_saved_model_directory", "read_saved_model"]


def maybe_saved_model_directory(export_dir: str | os.PathLike) -> bool:
    """True when `export_dir` holds saved_model.pb, .pbtxt or .cpb (TF's test: it may hold a SavedModel;
    nothing is read). Also `tf.saved_model.contains_saved_model`."""
    folder = os.fspath(export_dir)
    return any(os.path.exists(os.path.join(folder, n))
               for n in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT,
                         constants.SAVED_MODEL_FILENAME_CPB))


def read_saved_model(export_dir: str | os.PathLike) -> SavedModel:
    """The SavedModel proto of a folder; OSError when there is none, ValueError when it is corrupt."""
    from google.protobuf import message, text_format
    folder = os.fspath(export_dir)
    binary = os.path.join(folder, constants.SAVED_MODEL_FILENAME_PB)
    text = os.path.join(folder, constants.SAVED_MODEL_FILENAME_PBTXT)
    if os.path.isfile(binary):
        try:
            with open(binary, "rb") as handle:
                return SavedModel.FromString(handle.read())
        except message.DecodeError:
            raise ValueError(f"{binary} is not a SavedModel proto (truncated or corrupt)") from None
    if os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as handle:
                return parse_text(handle.read(), SavedModel)
        except (UnicodeDecodeError, text_format.ParseError) as exc:
            raise ValueError(f"{text} is not a SavedModel text proto: {exc}") from None
    if os.path.exists(os.path.join(folder, constants.SAVED_MODEL_FILENAME_CPB)):
        raise ValueError(f"{folder} holds {constants.SAVED_MODEL_FILENAME_CPB}, a chunked SavedModel (TF 2.14+ "
                         f"writes one above 2 GB) that tftk cannot read; re-export it as saved_model.pb")
    raise OSError(f"SavedModel file does not exist at: {folder}/{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                  f"{constants.SAVED_MODEL_FILENAME_PB}}}")


def load(sess: Any, tags: Sequence[str], export_dir: str | os.PathLike, import_scope: str | None = None,
         **saver_kwargs: Any) -> MetaGraphDef:
    """Load the MetaGraphDef tagged exactly `tags` into `sess.graph`, restore its variables, run its
    init op; returns the MetaGraphDef (its `signature_def` names the tensors to feed and fetch)."""
    from tftk.formats.meta_graph import import_meta_graph
    from tftk.train.checkpoint_io import checkpoint_exists
    saved_model = read_saved_model(export_dir)
    wanted = {tags} if isinstance(tags, str) else set(tags)
    found = [m for m in saved_model.meta_graphs if set(m.meta_info_def.tags) == wanted]
    if not found:
        available = [sorted(m.meta_info_def.tags) for m in saved_model.meta_graphs]
        raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)} could not be found in SavedModel "
                           f"{os.fspath(export_dir)}; available tag-sets: {available}")
    meta = found[0]
    with sess.graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope)
        variables = os.path.join(os.fspath(export_dir), constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)
        if saver is not None and checkpoint_exists(variables):
            saver.restore(sess, variables)
        init = sess.graph.get_collection(constants.MAIN_OP_KEY) or \
            sess.graph.get_collection(constants.LEGACY_INIT_OP_KEY) or _init_signature_op(meta, import_scope)
        if init:
            sess.run(init[0], feed_dict=_asset_feeds(meta, os.fspath(export_dir), import_scope))
    return meta


def _asset_feeds(meta: MetaGraphDef, export_dir: str, import_scope: str | None) -> dict[str, str]:
    """Each asset tensor -> its file in the SavedModel's assets/ folder, fed when the init op runs (the
    graph keeps the path the file had when it was saved). TF 1's builder listed the AssetFileDefs in a
    collection, later ones in the MetaGraphDef's own field; both are read."""
    from tftk.proto.tensorflow import AssetFileDef
    assets = list(meta.asset_file_def)
    if not assets and constants.ASSETS_KEY in meta.collection_def:
        assets = [AssetFileDef.FromString(item.value) for item in meta.collection_def[constants.ASSETS_KEY].any_list.value]
    prefix = f"{import_scope}/" if import_scope else ""
    folder = os.path.join(export_dir, constants.ASSETS_DIRECTORY)
    return {prefix + asset.tensor_info.name: os.path.join(folder, asset.filename) for asset in assets}


def _init_signature_op(meta: MetaGraphDef, import_scope: str | None) -> list[str]:
    """TF 2's init op (tables, assets), which `tf.saved_model.save` names in a signature of its own."""
    signature = meta.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if signature is None or constants.INIT_OP_SIGNATURE_KEY not in signature.outputs:
        return []
    name = signature.outputs[constants.INIT_OP_SIGNATURE_KEY].name.partition(":")[0]
    return [f"{import_scope}/{name}" if import_scope else name]
