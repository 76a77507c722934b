"""`Estimator.export_saved_model`: the PREDICT graph of a model_fn, fed by a serving input receiver,
with a checkpoint's variables, written as a SavedModel to export_dir_base/<timestamp>.

The folder name is a Unix timestamp, so export_dir_base is a model base path `tftk serve` (and TF
Serving) watches: each export is a new version. SavedModelBuilder stages and renames, so a failed
export leaves no folder behind.
"""

from __future__ import annotations

import os
import shutil
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping

from tftk.estimator.export import ServingInputReceiver, TensorServingInputReceiver
from tftk.estimator.export_output import export_outputs_for_spec
from tftk.estimator.mode_keys import ModeKeys
from tftk.platform import tf_logging

if TYPE_CHECKING:
    from tftk.estimator.estimator import Estimator

__all__ = ["export_saved_model", "build_all_signature_defs", "timestamped_export_dir"]


def timestamped_export_dir(export_dir_base: str) -> str:
    """export_dir_base/<seconds since the epoch>, waiting a second when that folder exists already."""
    for _ in range(10):
        path = os.path.join(export_dir_base, str(int(time.time())))
        if not os.path.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError(f"Failed to obtain a unique export directory name under {export_dir_base} after 10 attempts")


def build_all_signature_defs(receiver_tensors: Mapping[str, Any], export_outputs: Mapping[str, Any],
                             receiver_tensors_alternatives: Mapping[str, Mapping[str, Any]] | None = None
                             ) -> dict[str, Any]:
    """One signature per export output (and per alternative receiver, named 'receiver:output'); outputs
    that cannot apply to the receiver (Classify/Regress need one string input) are left out, as in TF."""
    from tftk.formats.saved_model.signature_def_utils import is_valid_signature
    signatures, excluded = {}, {}
    receivers = [(None, receiver_tensors)] + list((receiver_tensors_alternatives or {}).items())
    for receiver_name, tensors in receivers:
        for output_name, output in export_outputs.items():
            name = output_name if receiver_name is None else f"{receiver_name}:{output_name}"
            try:
                signatures[name] = output.as_signature_def(tensors)
            except ValueError as error:
                excluded[name] = str(error)
    for name, reason in sorted(excluded.items()):
        tf_logging.info("Signature %s is not exported: %s", name, reason)
    return {name: signature for name, signature in signatures.items() if is_valid_signature(signature)}


def export_saved_model(estimator: "Estimator", export_dir_base: str | os.PathLike,
                       serving_input_receiver_fn: Callable[[], Any], assets_extra: Mapping[str, str] | None = None,
                       as_text: bool = False, checkpoint_path: str | None = None,
                       mode: str = ModeKeys.PREDICT) -> bytes:
    """Write the SavedModel (tag 'serve'); returns its folder as bytes, as TF 1.x does."""
    from tftk.client.session import Session
    from tftk.formats.saved_model.builder import SavedModelBuilder
    from tftk.formats.saved_model.tag_constants import SERVING
    from tftk.ops.control_flow_ops import group
    from tftk.ops.variables import local_variables_initializer
    from tftk.train.saver import Saver

    if mode != ModeKeys.PREDICT:
        raise ValueError(f"export_saved_model: only experimental_mode=ModeKeys.PREDICT is supported, given {mode!r}")
    if serving_input_receiver_fn is None or not callable(serving_input_receiver_fn):
        raise ValueError("export_saved_model: serving_input_receiver_fn must be a function returning a "
                         "ServingInputReceiver (e.g. build_raw_serving_input_receiver_fn(...))")
    checkpoint_path = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint_path:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir} (train before exporting)")
    graph = estimator._new_graph()
    with graph.as_default():
        receiver = serving_input_receiver_fn()
        if not isinstance(receiver, (ServingInputReceiver, TensorServingInputReceiver)):
            raise ValueError(f"serving_input_receiver_fn must return a ServingInputReceiver, it returned "
                             f"{type(receiver).__name__}")
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT)
        outputs = export_outputs_for_spec(spec.export_outputs, spec.predictions)
        signatures = build_all_signature_defs(receiver.receiver_tensors, outputs,
                                              receiver.receiver_tensors_alternatives)
        local_init_op = spec.scaffold.local_init_op or group(local_variables_initializer())
        saver = spec.scaffold.saver or Saver(sharded=True)
        export_dir = timestamped_export_dir(os.fspath(export_dir_base))
        with Session(graph=graph, config=estimator.config.session_config) as session:
            saver.restore(session, checkpoint_path)
            builder = SavedModelBuilder(export_dir)
            builder.add_meta_graph_and_variables(session, [SERVING], signature_def_map=signatures,
                                                 main_op=local_init_op, saver=saver)
            builder.save(as_text)
    if assets_extra:
        try:
            for destination, source in assets_extra.items():
                target = os.path.join(export_dir, "assets.extra", destination)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(source, target)
        except BaseException:
            shutil.rmtree(export_dir, ignore_errors=True)
            raise
    tf_logging.info("SavedModel written to: %s", export_dir)
    return os.fsencode(export_dir)
