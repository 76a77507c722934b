"""TF Serving's model layout: numbered version folders under a base path, each holding a SavedModel.

    base_path/1/saved_model.pb, base_path/1/variables/variables.{index,data-*}
    base_path/2/...

A folder counts as a version once its saved_model.pb (or .pbtxt) exists and, when it has a
variables folder, the variables' index too: writers (TF's SavedModelBuilder, tftk's, `tftk
export`) write the graph proto last, and tftk's builder renames a finished staging folder into
place. A proto caught mid-write fails to load and is retried at the next polls. The servable's
signatures are the MetaGraphDef's (tag set `serve`), run with one Session.run per request.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tftk.formats.saved_model.constants import INIT_OP_SIGNATURE_KEY
from tftk.user_input import UserInputError
from tftk.serving.servable import PlannedRuns, Servable, Signature, TensorSpec
from tftk.serving.tensors import ENUM_DTYPE

__all__ = ["SavedModelSource", "SERVING_TAGS"]

SERVING_TAGS = ("serve",)


class SavedModelSource:
    """Numbered SavedModel folders under `base_path`; the folder name is the version."""

    def __init__(self, base_path: str | Path, threads: int = 1, tags: tuple[str, ...] = SERVING_TAGS):
        self.base_path, self.threads, self.tags = Path(base_path), threads, tags
        if not self.base_path.is_dir():
            raise UserInputError(f"{self.base_path}: model base path not found")

    def versions(self) -> dict[int, str]:
        from tftk.formats.saved_model.loader import maybe_saved_model_directory

        found = {}
        for child in self.base_path.iterdir():
            if not (child.name.isdigit() and child.is_dir() and maybe_saved_model_directory(child)):
                continue
            variables = child / "variables"
            if variables.is_dir() and not (variables / "variables.index").is_file():
                continue
            found[int(child.name)] = str(child)
        return found

    def load(self, name: str, version: int, location: str) -> Servable:
        import tftk as tf
        from tftk.formats.saved_model.loader import load

        graph = tf.Graph()
        session = tf.Session(graph=graph, config=tf.ConfigProto(intra_op_parallelism_threads=self.threads,
                                                                inter_op_parallelism_threads=self.threads))
        try:
            meta = load(session, list(self.tags), location)
            signatures = {key: _signature(proto) for key, proto in meta.signature_def.items()
                          if key != INIT_OP_SIGNATURE_KEY}  # TF 2's init op, not a servable signature
        except BaseException:
            session.close()
            raise
        if not signatures:
            session.close()
            raise ValueError(f"{location}: the MetaGraphDef tagged {list(self.tags)} has no signatures")

        def tensor(signature_name: str, key: str, is_input: bool) -> str:
            signature = signatures[signature_name]
            return (signature.inputs if is_input else signature.outputs)[key].tensor_name

        return Servable(name, version, signatures, PlannedRuns(session, tensor), session.close)


def _signature(proto) -> Signature:
    def spec(info) -> TensorSpec:
        dtype = ENUM_DTYPE.get(info.dtype)
        if dtype is None:
            raise ValueError(f"tensor {info.name}: dtype {info.dtype} cannot be served")
        shape = None if info.tensor_shape.unknown_rank else tuple(
            None if d.size < 0 else int(d.size) for d in info.tensor_shape.dim)
        return TensorSpec(info.name, dtype, shape)

    return Signature(proto.method_name, {k: spec(v) for k, v in proto.inputs.items()},
                     {k: spec(v) for k, v in proto.outputs.items()})
