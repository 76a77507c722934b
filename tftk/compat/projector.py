"""`tf.contrib.tensorboard.plugins.projector`: ProjectorConfig and `visualize_embeddings`.

TensorBoard's projector reads `projector_config.pbtxt` (text format of projector_config.proto)
from the log directory, and the embedding variables named by `tensor_name` from the checkpoint
there (save one with a Saver into the same folder). tensorboardX ships no class for this proto,
so it is declared here with TensorBoard's field numbers.
"""

from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format

from tftk.atomic import atomic_write_text
from tftk.proto.declare import declare_file

__all__ = ["ProjectorConfig", "EmbeddingInfo", "SpriteMetadata", "visualize_embeddings", "PROJECTOR_FILENAME"]

PROJECTOR_FILENAME = "projector_config.pbtxt"

_MESSAGES = {  # tensorboard/plugins/projector/projector_config.proto
    "SpriteMetadata": [("image_path", 1, "string"), ("single_image_dim", 2, "uint32", "repeated")],
    "EmbeddingInfo": [("tensor_name", 1, "string"), ("metadata_path", 2, "string"),
                      ("bookmarks_path", 3, "string"), ("tensor_shape", 4, "uint32", "repeated"),
                      ("sprite", 5, "SpriteMetadata"), ("tensor_path", 6, "string")],
    "ProjectorConfig": [("model_checkpoint_path", 1, "string"),
                        ("embeddings", 2, "EmbeddingInfo", "repeated"),
                        ("model_checkpoint_dir", 3, "string")],
}


_CLASSES = declare_file("tftk/projector_config.proto", "tftk.projector", _MESSAGES)
ProjectorConfig = _CLASSES["ProjectorConfig"]
EmbeddingInfo = _CLASSES["EmbeddingInfo"]
SpriteMetadata = _CLASSES["SpriteMetadata"]


def visualize_embeddings(summary_writer: Any, config: Any) -> str:
    """Write `config` as `projector_config.pbtxt` in the writer's log directory; return its path."""
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("visualize_embeddings: the summary writer has no log directory")
    path = os.path.join(logdir, PROJECTOR_FILENAME)
    atomic_write_text(path, text_format.MessageToString(config))
    return path
