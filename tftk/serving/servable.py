"""One loaded model version: its signatures (TF Serving's SignatureDefs) and how to run them.

A `Servable` is what a model source loads. Requests name a signature and feed its inputs by
their signature keys; the servable checks dtypes and shapes against the signature (a wrong one is
the client's fault: `RequestError`) and runs one Session.run for the requested outputs.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

__all__ = ["PREDICT", "CLASSIFY", "REGRESS", "DEFAULT_SIGNATURE", "RequestError", "NotFound", "TensorSpec",
           "Signature", "Servable", "PlannedRuns"]

PREDICT = "tensorflow/serving/predict"
CLASSIFY = "tensorflow/serving/classify"
REGRESS = "tensorflow/serving/regress"
DEFAULT_SIGNATURE = "serving_default"


class RequestError(ValueError):
    """The request is wrong (shape, dtype, unknown key): the client's fault, HTTP 400 / INVALID_ARGUMENT."""


class NotFound(LookupError):
    """The model, version, label or signature the request names is not served: HTTP 404 / NOT_FOUND."""


@dataclass(frozen=True)
class TensorSpec:
    """A signature entry: the graph tensor it binds, its dtype and shape (None for an unknown dim)."""

    tensor_name: str
    dtype: np.dtype
    shape: tuple[int | None, ...] | None
    reshapes: bool = False  # any shape with the same batch and values per example fits (flat or 8x8x1 images)

    def check(self, key: str, value: np.ndarray) -> np.ndarray:
        """`value` converted to this dtype, or RequestError naming `key` when it cannot fit."""
        if value.dtype != self.dtype:
            same_kind = value.dtype.kind == self.dtype.kind or (value.dtype.kind in "iub" and self.dtype.kind in "iuf")
            if not same_kind or value.dtype.kind in "SUO" or self.dtype.kind in "SUO":
                raise RequestError(f"input '{key}': expected {self.dtype.name}, got {_kind_name(value.dtype)}")
            value = value.astype(self.dtype)
        shape = self.shape
        if shape and value.shape[1:] == shape[1:] and value.ndim == len(shape) and \
                shape[0] in (None, len(value)):  # the usual case, in one comparison (tails without None)
            return value
        if self.reshapes and self.shape and value.ndim >= 1 and value.shape[1:] != self.shape[1:] and \
                None not in self.shape[1:] and math.prod(value.shape[1:]) == math.prod(self.shape[1:]):
            value = value.reshape((len(value), *self.shape[1:]))
        if self.shape is not None:
            fits = len(value.shape) == len(self.shape) and all(
                want is None or want == got for want, got in zip(self.shape, value.shape))
            if not fits:
                want = "[" + ", ".join("-1" if d is None else str(d) for d in self.shape) + "]"
                raise RequestError(f"input '{key}': expected shape {want}, got {list(value.shape)}")
        return value


def _kind_name(dtype: np.dtype) -> str:
    return "string" if dtype.kind in "SUO" else dtype.name


@dataclass(frozen=True)
class Signature:
    """TF's SignatureDef: a method name and named inputs and outputs."""

    method_name: str
    inputs: Mapping[str, TensorSpec]
    outputs: Mapping[str, TensorSpec]


# Runs a signature: (signature name, checked inputs by key, output keys) -> outputs by key.
Runner = Callable[[str, dict[str, np.ndarray], list[str]], dict[str, np.ndarray]]


class PlannedRuns:
    """A Runner over one session: a Session.make_callable per (signature, outputs, inputs), made on first use.

    A request's run then skips Session.run's look-ups of fetches, feeds and plan (~20 us of the
    MLP's ~65 us run) and keeps its feed checks. `tensor(signature, key, is_input)` names the graph
    tensor of a signature entry. Calls are serialised by the Servable's lock.
    """

    MAX_CALLABLES = 64  # output filters are the client's choice: keep a bounded number of planned combinations

    def __init__(self, session, tensor: Callable[[str, str, bool], object]):
        self.session, self.tensor = session, tensor
        self._calls: dict[tuple, Callable] = {}

    def __call__(self, signature_name: str, inputs: dict[str, np.ndarray], outputs: list[str]) -> dict[str, np.ndarray]:
        key = (signature_name, tuple(outputs), tuple(inputs))
        call = self._calls.get(key)
        if call is None:
            call = self.session.make_callable({name: self.tensor(signature_name, name, False) for name in outputs},
                                              [self.tensor(signature_name, name, True) for name in inputs])
            if len(self._calls) < self.MAX_CALLABLES:
                self._calls[key] = call
        return call(*inputs.values())


@dataclass
class Servable:
    """A loaded version. `run` serialises Session.run calls on one version (sessions are not thread-safe)."""

    name: str
    version: int
    signatures: dict[str, Signature]
    runner: Runner
    closer: Callable[[], None] = lambda: None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def signature(self, name: str | None) -> tuple[str, Signature]:
        """(name, Signature) for `name` (serving_default when empty); NotFound naming the served ones."""
        name = name or DEFAULT_SIGNATURE
        if name not in self.signatures:
            raise NotFound(f"Serving signature name: \"{name}\" not found in signature def "
                           f"(available: {', '.join(sorted(self.signatures))})")
        return name, self.signatures[name]

    def check_inputs(self, signature: Signature, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Inputs converted to the signature's dtypes; RequestError for a missing, extra or misshapen one."""
        if inputs.keys() != signature.inputs.keys():
            missing = sorted(set(signature.inputs) - set(inputs))
            extra = sorted(set(inputs) - set(signature.inputs))
            raise RequestError(f"signature inputs are {sorted(signature.inputs)}; "
                               + (f"missing {missing}" if missing else f"unknown {extra}"))
        return {key: spec.check(key, np.asarray(inputs[key])) for key, spec in signature.inputs.items()}

    def output_keys(self, signature: Signature, output_filter: list[str] | None) -> list[str]:
        """The requested outputs (all when the filter is empty); RequestError for an unknown one."""
        if not output_filter:
            return list(signature.outputs)
        unknown = [key for key in output_filter if key not in signature.outputs]
        if unknown:
            raise RequestError(f"output_filter names {unknown}, not outputs of the signature "
                               f"({', '.join(signature.outputs)})")
        return list(dict.fromkeys(output_filter))

    def run(self, signature_name: str, inputs: dict[str, np.ndarray], outputs: list[str]) -> dict[str, np.ndarray]:
        """One Session.run of already-checked inputs."""
        with self._lock:
            return self.runner(signature_name, inputs, outputs)

    def try_run(self, signature_name: str, inputs: dict[str, np.ndarray],
                outputs: list[str]) -> dict[str, np.ndarray] | None:
        """`run`, or None at once when another run holds this version (the caller then queues it)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self.runner(signature_name, inputs, outputs)
        finally:
            self._lock.release()

    def close(self) -> None:
        self.closer()

