"""What `tftk export` does: a run's latest checkpoint as a SavedModel with a serving signature.

The `serving_default` Predict signature takes the model's input placeholder (for image models:
`images`, float32 pixels scaled as `tftk infer` scales them, shape [None, height, width,
channels]) and returns `predictions` (class ids) and `logits`. A model class may define
`serving_signature()` -> (inputs dict, outputs dict) to choose its own.
"""

from __future__ import annotations

import os
from pathlib import Path

from tftk.user_input import UserInputError

__all__ = ["export_saved_model"]


def _signature(model) -> tuple[dict, dict]:
    if hasattr(model, "serving_signature"):
        return model.serving_signature()
    if all(hasattr(model, a) for a in ("images_placeholder", "predictions")):
        outputs = {"predictions": model.predictions}
        if getattr(model, "logits", None) is not None:
            outputs["logits"] = model.logits
        return {"images": model.images_placeholder}, outputs
    raise UserInputError(f"model {type(model).__name__} has no serving signature (it needs images_placeholder "
                         "and predictions, or a serving_signature() method)")


def export_saved_model(result_dir: str | os.PathLike, out: str | os.PathLike) -> Path:
    """Write run `result_dir`'s model with its latest checkpoint as a SavedModel folder `out`."""
    from models import make_model, model_schema
    from tftk.formats.saved_model import SavedModelBuilder, predict_signature_def
    from tftk.formats.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY
    from tftk.formats.saved_model.tag_constants import SERVING
    from tftk.runs import load_run_config
    from tftk.train.checkpoint_state import latest_checkpoint

    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserInputError(f"{out}: already exists and is not empty; choose a new --out folder")
    if latest_checkpoint(result_dir) is None:
        raise UserInputError(f"{result_dir}: no checkpoint in this run folder; train it first")
    config = load_run_config(result_dir, model_schema).model_copy(update={"best": False, "debug": False,
                                                                          "result_dir": str(result_dir)})
    model = make_model(config, for_inference=True)
    try:
        inputs, outputs = _signature(model)
        builder = SavedModelBuilder(out)
        builder.add_meta_graph_and_variables(model.sess, [SERVING], saver=model.saver, signature_def_map={
            DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)})
        builder.save()
    finally:
        model.close()
    return out
