"""`tf.saved_model.simple_save`: a serving SavedModel with one Predict signature."""

from __future__ import annotations

import os
from typing import Any, Mapping

from tftk.formats.saved_model import signature_constants, tag_constants
from tftk.framework.graph_keys import GraphKeys
from tftk.formats.saved_model.builder import SavedModelBuilder
from tftk.formats.saved_model.signature_def_utils import predict_signature_def

__all__ = ["simple_save"]


def simple_save(session: Any, export_dir: str | os.PathLike, inputs: Mapping[str, Any],
                outputs: Mapping[str, Any], legacy_init_op: Any = None) -> None:
    """Save `session`'s graph and variables under the "serve" tag with a `serving_default`
    Predict signature from `inputs` to `outputs` (dicts of name -> tensor)."""
    signature = predict_signature_def(inputs, outputs)
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING], legacy_init_op=legacy_init_op,
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS))
    builder.save()
