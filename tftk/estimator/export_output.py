"""`tf.estimator.export.{PredictOutput, ClassificationOutput, RegressionOutput}`: what an exported
SavedModel answers, each turned into a SignatureDef over the serving input receiver's tensors."""

from __future__ import annotations

from typing import Any, Mapping

from tftk.formats.saved_model import signature_def_utils
from tftk.formats.saved_model.signature_constants import DEFAULT_SERVING_SIGNATURE_DEF_KEY
from tftk.framework.ops import Tensor
from tftk.proto.tensorflow import SignatureDef

__all__ = ["ExportOutput", "PredictOutput", "ClassificationOutput", "RegressionOutput",
           "export_outputs_for_spec"]


class ExportOutput:
    """One output of a served model; `as_signature_def(receiver_tensors)` gives its signature."""

    def as_signature_def(self, receiver_tensors: Mapping[str, Tensor]) -> SignatureDef:
        raise NotImplementedError


def _single_string_input(receiver_tensors: Mapping[str, Tensor], kind: str) -> Tensor:
    values = list(receiver_tensors.values())
    if len(values) != 1 or values[0].dtype.name != "string":
        raise ValueError(f"{kind} input must be a single string Tensor (serialized tf.Example); got {receiver_tensors}")
    return values[0]


class ClassificationOutput(ExportOutput):
    """Class scores (float, [batch, classes]) and/or class names (string), for the Classify API."""

    def __init__(self, scores: Tensor | None = None, classes: Tensor | None = None):
        if scores is not None and not (isinstance(scores, Tensor) and scores.dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores}")
        if classes is not None and not (isinstance(classes, Tensor) and classes.dtype.name == "string"):
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors: Mapping[str, Tensor]) -> SignatureDef:
        examples = _single_string_input(receiver_tensors, "Classification")
        return signature_def_utils.classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """One float value per example, for the Regress API."""

    def __init__(self, value: Tensor):
        if not (isinstance(value, Tensor) and value.dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self.value = value

    def as_signature_def(self, receiver_tensors: Mapping[str, Tensor]) -> SignatureDef:
        examples = _single_string_input(receiver_tensors, "Regression")
        return signature_def_utils.regression_signature_def(examples, self.value)


class PredictOutput(ExportOutput):
    """Any named tensors (a single Tensor is named 'output'), for the Predict API."""

    def __init__(self, outputs: Tensor | Mapping[str, Tensor]):
        outputs = dict(outputs) if isinstance(outputs, Mapping) else {"output": outputs}
        for key, value in outputs.items():
            if not isinstance(key, str):
                raise ValueError(f"Prediction output key must be a string; got {key!r}")
            if not isinstance(value, Tensor):
                raise ValueError(f"Prediction output value must be a Tensor; got {value!r} for key {key!r}")
        self.outputs = outputs

    def as_signature_def(self, receiver_tensors: Mapping[str, Tensor]) -> SignatureDef:
        return signature_def_utils.predict_signature_def(receiver_tensors, self.outputs)


def export_outputs_for_spec(export_outputs: Mapping[str, ExportOutput] | None, predictions: Any
                            ) -> dict[str, ExportOutput]:
    """The spec's export outputs, with TF's default: PredictOutput(predictions) as 'serving_default', and a
    single output also serving as the default."""
    outputs = dict(export_outputs) if export_outputs is not None else {
        DEFAULT_SERVING_SIGNATURE_DEF_KEY: PredictOutput(predictions)}
    if len(outputs) == 1:
        outputs.setdefault(DEFAULT_SERVING_SIGNATURE_DEF_KEY, next(iter(outputs.values())))
    if DEFAULT_SERVING_SIGNATURE_DEF_KEY not in outputs:
        raise ValueError(f"Multiple export_outputs were provided ({sorted(outputs)}), but none of them is the "
                         f"default: name one {DEFAULT_SERVING_SIGNATURE_DEF_KEY!r}")
    return outputs
