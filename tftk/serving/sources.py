"""Where model versions come from: a `ModelSource` lists the complete versions it holds and loads one.

- `RunFolderSource`: a `tftk train` run folder; each checkpoint step is a version. The run's model
  class gives the signatures: `serving_default` takes what `tftk infer` takes (images as floats in
  [0, 1], flat or as height x width x channels) and returns class ids and probabilities;
  `classification` (TF Serving's classify method) takes serialized tf.Examples with an `images`
  feature and returns every class label with its score.
- `SavedModelSource` (tftk.serving.saved_model_source): TF Serving's layout, numbered version
  folders holding SavedModels.

A version is listed only once complete: a checkpoint when the run's `checkpoint` state file (which
the Saver rewrites atomically after the data file) names it and its data file exists.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

import numpy as np

from tftk.user_input import UserInputError
from tftk.serving.servable import (CLASSIFY, DEFAULT_SIGNATURE, PREDICT, PlannedRuns, RequestError, Servable, Signature,
                                   TensorSpec)

__all__ = ["ModelSource", "RunFolderSource", "CLASSIFICATION_SIGNATURE"]

CLASSIFICATION_SIGNATURE = "classification"
_STEP = re.compile(r"-(\d+)$")


class ModelSource(Protocol):
    """A model's versions: `versions()` maps each complete version number to what `load` takes."""

    def versions(self) -> dict[int, str]: ...

    def load(self, name: str, version: int, location: str) -> Servable: ...


class RunFolderSource:
    """A run folder's checkpoints as versions (the step number is the version)."""

    def __init__(self, run_dir: str | Path, threads: int = 1):
        """`threads`: intra-op threads of each version's Session (0: the run's own setting)."""
        from tftk.runs import CONFIG_FILE

        self.run_dir, self.threads = Path(run_dir), threads
        if not (self.run_dir / CONFIG_FILE).is_file():
            raise UserInputError(f"{self.run_dir}: not a run folder (no {CONFIG_FILE}); "
                                 "give a folder `tftk train` wrote, or --model-base-path for SavedModels")

    def versions(self) -> dict[int, str]:
        from tftk.train.checkpoint_io import checkpoint_exists
        from tftk.train.checkpoint_state import get_checkpoint_state

        try:
            state = get_checkpoint_state(self.run_dir)
        except Exception:  # a state file being replaced or damaged: try again at the next poll
            return {}
        if state is None:
            return {}
        found = {}
        for prefix in dict.fromkeys([*state.all_model_checkpoint_paths, state.model_checkpoint_path]):
            match = _STEP.search(prefix)
            if match and checkpoint_exists(prefix):
                found[int(match.group(1))] = prefix
        return found

    def load(self, name: str, version: int, location: str) -> Servable:
        from models import make_model, model_schema
        from tftk.runs import load_run_config

        config = load_run_config(self.run_dir, model_schema).model_copy(
            update={"best": False, "debug": False, "result_dir": str(self.run_dir)})
        if self.threads:
            config = config.model_copy(update={"threads": self.threads})
        model = make_model(config, for_inference=True)
        try:
            model.saver.restore(model.sess, location)
            servable = _classifier_servable(name, version, model)
            # Warm-up (TF Serving's model warmup): the first Session.run plans and compiles; do it before serving.
            servable.run(DEFAULT_SIGNATURE, {"images": np.zeros((1, *model.input_shape), np.float32)},
                         ["classes", "probabilities"])
            return servable
        except BaseException:
            model.close()
            raise


def _classifier_servable(name: str, version: int, model) -> Servable:
    """Signatures of an image classifier (models.image_classifier.ImageClassifier) and their runner."""
    import tftk as tf

    with model.graph.as_default():
        probabilities = tf.nn.softmax(model.logits, name="serving_probabilities")
    classes = model.num_classes
    images = TensorSpec(model.images_placeholder.name, np.dtype(np.float32), (None, *model.input_shape),
                        reshapes=True)
    predict = Signature(PREDICT, {"images": images}, {
        "classes": TensorSpec(model.predictions.name, np.dtype(np.int64), (None,)),
        "probabilities": TensorSpec(probabilities.name, np.dtype(np.float32), (None, classes))})
    classify = Signature(CLASSIFY, {"inputs": TensorSpec("tf_example:0", np.dtype(object), (None,))}, {
        "classes": TensorSpec("classes:0", np.dtype(object), (None, classes)),
        "scores": TensorSpec(probabilities.name, np.dtype(np.float32), (None, classes))})
    fetches = {"classes": model.predictions, "probabilities": probabilities}
    labels = np.array([str(c).encode() for c in range(classes)], dtype=object)
    size = int(np.prod(model.input_shape))
    predict_runs = PlannedRuns(model.sess, lambda signature, key, is_input:
                               model.images_placeholder if is_input else fetches[key])

    def run(signature: str, inputs: dict[str, np.ndarray], outputs: list[str]) -> dict[str, np.ndarray]:
        if signature == CLASSIFICATION_SIGNATURE:
            pixels = _example_features(inputs["inputs"], "images", size)
            scores = model.sess.run(probabilities, {model.images_placeholder: pixels.reshape(-1, *model.input_shape)})
            found = {"scores": scores, "classes": np.tile(labels, (len(scores), 1))}
            return {key: found[key] for key in outputs}
        return predict_runs(signature, inputs, outputs)

    return Servable(name, version, {DEFAULT_SIGNATURE: predict, CLASSIFICATION_SIGNATURE: classify}, run, model.close)


def _example_features(serialized: np.ndarray, key: str, size: int) -> np.ndarray:
    """[n, size] float32 from feature `key` (a float or int64 list) of n serialized tf.Examples."""
    from google.protobuf.message import DecodeError

    from tftk.proto.example import Example

    rows = []
    for index, data in enumerate(serialized.reshape(-1)):
        try:
            example = Example.FromString(bytes(data))
        except DecodeError:
            raise RequestError(f"example {index}: not a serialized tf.Example") from None
        if key not in example.features.feature:
            raise RequestError(f"example {index}: no feature '{key}' (features: "
                               f"{', '.join(sorted(example.features.feature)) or 'none'})")
        feature = example.features.feature[key]
        values = feature.float_list.value if feature.HasField("float_list") else feature.int64_list.value
        if len(values) != size:
            raise RequestError(f"example {index}: feature '{key}' has {len(values)} values, expected {size}")
        rows.append(np.asarray(values, np.float32))
    return np.stack(rows) if rows else np.zeros((0, size), np.float32)
