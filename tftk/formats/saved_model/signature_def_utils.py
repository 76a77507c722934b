"""SignatureDef builders (TF's saved_model/signature_def_utils_impl.py)."""

from __future__ import annotations

from typing import Any, Mapping

from tftk.formats.saved_model import signature_constants as sc
from tftk.formats.saved_model.utils import build_tensor_info
from tftk.proto.tensorflow import SignatureDef, TensorInfo

__all__ = ["build_signature_def", "predict_signature_def", "classification_signature_def",
           "regression_signature_def", "is_valid_signature"]


def build_signature_def(inputs: Mapping[str, TensorInfo] | None = None,
                        outputs: Mapping[str, TensorInfo] | None = None, method_name: str | None = None) -> SignatureDef:
    """A SignatureDef from TensorInfo maps and a method name."""
    signature = SignatureDef(method_name=method_name or "")
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    return signature


def predict_signature_def(inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> SignatureDef:
    """A Predict signature: named input tensors to named output tensors."""
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(v) for k, v in inputs.items()},
                               {k: build_tensor_info(v) for k, v in outputs.items()}, sc.PREDICT_METHOD_NAME)


def classification_signature_def(examples: Any, classes: Any, scores: Any) -> SignatureDef:
    """A Classify signature: serialized tf.Example strings in, class names and/or scores out."""
    if examples is None or examples.dtype.name != "string":
        raise ValueError("Classification examples must be a string Tensor.")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        if classes.dtype.name != "string":
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = build_tensor_info(classes)
    if scores is not None:
        if not scores.dtype.is_floating:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = build_tensor_info(scores)
    return build_signature_def({sc.CLASSIFY_INPUTS: build_tensor_info(examples)}, outputs,
                               sc.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Any, predictions: Any) -> SignatureDef:
    """A Regress signature: serialized tf.Example strings in, float predictions out."""
    if examples is None or examples.dtype.name != "string":
        raise ValueError("Regression examples must be a string Tensor.")
    if predictions is None or not predictions.dtype.is_floating:
        raise ValueError("Regression output must be a float Tensor.")
    return build_signature_def({sc.REGRESS_INPUTS: build_tensor_info(examples)},
                               {sc.REGRESS_OUTPUTS: build_tensor_info(predictions)}, sc.REGRESS_METHOD_NAME)


def is_valid_signature(signature_def: SignatureDef) -> bool:
    """True for a Predict signature with inputs and outputs, or a well-formed Classify/Regress one."""
    if signature_def is None or not signature_def.method_name:
        return False
    method = signature_def.method_name
    if method == sc.PREDICT_METHOD_NAME:
        return bool(signature_def.inputs) and bool(signature_def.outputs)
    if method == sc.CLASSIFY_METHOD_NAME:
        return set(signature_def.inputs) == {sc.CLASSIFY_INPUTS} and bool(signature_def.outputs) and \
            set(signature_def.outputs) <= {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}
    if method == sc.REGRESS_METHOD_NAME:
        return set(signature_def.inputs) == {sc.REGRESS_INPUTS} and set(signature_def.outputs) == {sc.REGRESS_OUTPUTS}
    return False
