"""TF Serving's operations, independent of the wire: predict, classify, regress, metadata, status.

REST and gRPC translate their requests into these calls and the answers back; batching plugs in
here (`ServingApi(batcher=...)`), so both front ends share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from tftk.serving.manager import ModelManager, VersionStatus
from tftk.serving.servable import CLASSIFY, PREDICT, REGRESS, NotFound, RequestError, Servable, Signature

__all__ = ["ModelRef", "Prediction", "Call", "ServingApi"]


@dataclass(slots=True)  # made per request: not frozen, which costs ~0.6 us an instance
class ModelRef:
    """What a request names: a model, optionally a version or a label, and a signature."""

    name: str
    version: int | None = None
    label: str | None = None
    signature_name: str = ""


@dataclass(frozen=True)
class Prediction:
    """Outputs by key, with the version and signature that computed them."""

    version: int
    signature_name: str
    outputs: dict[str, np.ndarray]


@dataclass(slots=True)
class Call:
    """A checked request: the signature, its inputs converted to the signature's dtypes, the outputs."""

    signature_name: str
    inputs: dict[str, np.ndarray]
    keys: list[str]
    batchable: bool


class ServingApi:
    """The served models' operations; `batcher` (tftk.serving.batching.Batcher) batches Session.runs."""

    def __init__(self, manager: ModelManager, batcher=None):
        self.manager, self.batcher = manager, batcher

    def predict(self, ref: ModelRef, inputs: Mapping[str, np.ndarray], output_filter: list[str] | None = None,
                method: str | None = None, arrival: list[bool] | None = None) -> Prediction:
        """Run `ref`'s signature on `inputs`; `method` (CLASSIFY/REGRESS) requires that kind of signature.

        `arrival`: the batcher's token counting this request (Batcher.arrival), if any.
        """
        with self.manager.get(ref.name).acquire(ref.version, ref.label) as servable:
            call = self.prepare(servable, ref.signature_name, inputs, output_filter, method)
            if self.batcher is not None and call.batchable:
                outputs = self.batcher.run(servable, call.signature_name, call.inputs, call.keys, arrival)
            else:
                outputs = servable.run(call.signature_name, call.inputs, call.keys)
            return Prediction(servable.version, call.signature_name, outputs)

    @staticmethod
    def prepare(servable: Servable, signature_name: str, inputs: Mapping[str, np.ndarray],
                output_filter: list[str] | None = None, method: str | None = None) -> "Call":
        """The checked Session.run a request asks of `servable` (RequestError / NotFound when it cannot)."""
        name, signature = servable.signature(signature_name)
        if method is not None and signature.method_name != method:
            kind = "classification" if method == CLASSIFY else "regression"
            raise RequestError(f"Expected {kind} signature method_name to be {method}. Was: {signature.method_name}")
        checked = servable.check_inputs(signature, inputs)
        return Call(name, checked, servable.output_keys(signature, output_filter), _batchable(signature, checked))

    def classify(self, ref: ModelRef, examples: list) -> tuple[Prediction, list[list[tuple[str, float]]]]:
        """Classify serialized tf.Examples: per example, (label, score) for every class."""
        prediction = self.predict(ref, {_single_input(self, ref): _serialized(examples)}, method=CLASSIFY)
        scores, labels = prediction.outputs.get("scores"), prediction.outputs.get("classes")
        if scores is None and labels is None:
            raise RequestError("classification signature has neither 'classes' nor 'scores' outputs")
        labels, scores = (None if value is None else np.asarray(value).reshape(len(examples), -1)
                          for value in (labels, scores))
        scores = np.zeros(labels.shape, np.float32) if scores is None else scores  # TF Serving: missing ones empty
        labels = np.full(scores.shape, b"", object) if labels is None else labels
        return prediction, [[(_text(label), float(score)) for label, score in zip(label_row, score_row)]
                            for label_row, score_row in zip(labels, scores)]

    def regress(self, ref: ModelRef, examples: list) -> tuple[Prediction, list[float]]:
        """Regress serialized tf.Examples: one value per example (the signature's `outputs`)."""
        prediction = self.predict(ref, {_single_input(self, ref): _serialized(examples)}, method=REGRESS)
        values = prediction.outputs.get("outputs")
        if values is None:
            raise RequestError("regression signature has no 'outputs' output")
        return prediction, [float(v) for v in np.asarray(values).reshape(-1)]

    def metadata(self, ref: ModelRef) -> tuple[int, dict[str, Signature]]:
        """(version, signatures) of `ref`."""
        with self.manager.get(ref.name).acquire(ref.version, ref.label) as servable:
            return servable.version, dict(servable.signatures)

    def status(self, ref: ModelRef) -> list[VersionStatus]:
        model = self.manager.get(ref.name)
        version = model.labels.get(ref.label) if ref.label else ref.version
        if ref.label and version is None:
            raise NotFound(f"Unrecognized servable version label: {ref.label}")
        return model.status(version)


def _single_input(api: ServingApi, ref: ModelRef) -> str:
    """The input key of `ref`'s classify/regress signature (it takes one tensor of serialized Examples)."""
    with api.manager.get(ref.name).acquire(ref.version, ref.label) as servable:
        _, signature = servable.signature(ref.signature_name)
        if len(signature.inputs) != 1:
            raise RequestError(f"signature takes {len(signature.inputs)} inputs; Classify/Regress need one")
        return next(iter(signature.inputs))


def _serialized(examples: list) -> np.ndarray:
    if not examples:
        raise RequestError("Input is empty")
    array = np.empty(len(examples), object)
    array[:] = [e if isinstance(e, bytes) else e.SerializeToString() for e in examples]
    return array


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _batchable(signature: Signature, inputs: dict[str, np.ndarray]) -> bool:
    """Requests merge when every input is batched along axis 0 with one common size."""
    sizes = {value.shape[0] if value.ndim else -1 for value in inputs.values()}
    return len(sizes) == 1 and -1 not in sizes and signature.method_name == PREDICT
