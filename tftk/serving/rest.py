"""TF Serving's REST API: the request handler behind `tftk.serving.http`'s HTTP/1.1 server.

    GET  /v1/models/NAME[/versions/V | /labels/L]            version status
    GET  /v1/models/NAME[/versions/V | /labels/L]/metadata   signatures
    POST /v1/models/NAME[/versions/V | /labels/L]:predict    {"instances": ...} or {"inputs": ...}
    POST ...:classify / ...:regress                          {"examples": [{feature: values}, ...]}
    GET  /metrics                                            Prometheus text format

Errors are `{"error": "..."}`: 400 bad request, 404 unknown model/version/signature, 405, 408 a
client too slow to send its request, 413 a body over the limit, 503 when `max_queue` requests are
already waiting. Each request writes one JSON line to the `tftk.serving.access` logger.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from concurrent.futures import Executor, Future
from typing import Any

from tftk.serving import json_codec, stage_times
from tftk.serving.api import ModelRef, ServingApi
from tftk.serving.batching import INLINE_ROWS, QueueFull
from tftk.serving.http import Pending, Request, Response, error_response
from tftk.serving.metrics import Metrics
from tftk.serving.servable import NotFound, RequestError, Signature
from tftk.serving.tensors import DTYPE_NAME, example_from_json, json_inputs, json_outputs

__all__ = ["RestApp", "signature_json", "status_json"]

_ROUTE = re.compile(r"/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+)|/labels/(?P<label>[^/:]+))?"
                    r"(?P<verb>/metadata|:predict|:classify|:regress)?")
_METRICS_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
_access = logging.getLogger("tftk.serving.access")
_log = logging.getLogger("tftk.serving")


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class RestApp:
    """The request handler of `tftk.serving.http`: each request answered at once or as a `Pending`.

    Runs on the event loop; `executor` runs what may take long (status, metadata, classify, large
    unbatched predicts), the batcher runs batched predicts.
    """

    def __init__(self, api: ServingApi, metrics: Metrics, executor: Executor):
        self.api, self.metrics, self.executor = api, metrics, executor

    def __call__(self, request: Request) -> Response | Pending:
        started = time.perf_counter()
        route = ["", ""]  # model and verb, as far as the request got
        try:
            answer = self._dispatch(request, route)
        except Exception as error:
            answer = self._error(error, request)
        if isinstance(answer, Pending):
            return Pending(answer.future,
                           lambda future: self._done(request, started, route, self._settle(answer, request)))
        return self._done(request, started, route, answer)

    def _dispatch(self, request: Request, route: list[str]) -> Response | Pending:
        path, method = request.path, request.method
        if path == "/metrics":
            return Response(200, self.metrics.render().encode(), _METRICS_TYPE)
        match = _ROUTE.fullmatch(path)
        if match is None:
            raise HttpError(404, f"Malformed request: {method} {path}")
        model, verb = match["name"], (match["verb"] or "status").lstrip("/:")
        route[:] = model, verb
        want = "POST" if verb in ("predict", "classify", "regress") else "GET"
        if method != want:
            raise HttpError(405, f"{method} not allowed on {path}; use {want}")
        ref = ModelRef(model, _version(match["version"]), match["label"])
        if verb == "predict":
            stage_times.switch("json_decode")
            return self._predict(ref, _json_object(request.body))
        body = _json_object(request.body) if want == "POST" else {}
        return Pending(self.executor.submit(self._answer, verb, ref, body),
                       lambda future: _json_response(future.result()))

    def _settle(self, pending: Pending, request: Request) -> Response:
        try:
            return pending.finish(pending.future)
        except Exception as error:
            return self._error(error, request)

    def _error(self, error: Exception, request: Request) -> Response:
        """The answer to a failed request: 4xx for the client's faults, 503 when full, 500 for the rest."""
        if isinstance(error, HttpError):
            return error_response(error.status, str(error))
        if isinstance(error, RequestError):
            return error_response(400, str(error))
        if isinstance(error, NotFound):
            return error_response(404, str(error))
        if isinstance(error, QueueFull):
            self.metrics.rejected("rest", "batch_queue_full")
            return error_response(503, str(error))
        # a bug or a failed Session.run: the server answers and stays up
        _log.error("%s %s failed", request.method, request.path, exc_info=error)
        return error_response(500, f"{type(error).__name__}: {error}")

    def _done(self, request: Request, started: float, route: list[str], answer: Response) -> Response:
        """Count and log an answered request."""
        stage_times.switch("bookkeeping")
        elapsed = time.perf_counter() - started
        model, verb = route
        # labels from the served names only, so made-up URLs cannot grow the metrics without bound
        served = model if model in self.api.manager.models else ""
        self.metrics.request("rest", verb or "unknown", served, answer.status, elapsed)
        if _access.isEnabledFor(logging.INFO):
            _access.info(json.dumps({"ts": round(time.time(), 3), "api": "rest", "client": request.client,
                                     "method": request.method, "path": request.path, "status": answer.status,
                                     "bytes": len(answer.body), "ms": round(elapsed * 1000, 3)}))
        return answer

    def _answer(self, verb: str, ref: ModelRef, request: dict) -> dict[str, Any]:
        """The JSON answer to one request (runs on the executor)."""
        signature_name = request.get("signature_name", "")
        if not isinstance(signature_name, str):
            raise RequestError('"signature_name" must be a string')
        ref = ModelRef(ref.name, ref.version, ref.label, signature_name)
        if verb == "status":
            return status_json(self.api.status(ref))
        if verb == "metadata":
            version, signatures = self.api.metadata(ref)
            return {"model_spec": _spec_json(ref, version),
                    "metadata": {"signature_def": {"signature_def": {
                        key: signature_json(sig) for key, sig in signatures.items()}}}}
        examples = request.get("examples")
        if not isinstance(examples, list) or not examples:
            raise RequestError('"examples" must be a non-empty list of objects')
        context = request.get("context", {})
        rows = [example_from_json({**context, **example} if isinstance(example, dict) else example, index)
                for index, example in enumerate(examples)]
        if verb == "classify":
            prediction, results = self.api.classify(ref, rows)
            answer: dict[str, Any] = {"results": [[[label, score] for label, score in row] for row in results]}
        else:
            prediction, values = self.api.regress(ref, rows)
            answer = {"results": values}
        answer["model_spec"] = _spec_json(ref, prediction.version, prediction.signature_name)
        return answer

    def _predict(self, ref: ModelRef, request: dict) -> Response | Pending:
        """A batched request waits for its batch; a small unbatched one runs here; others on the executor.

        The version stays acquired (not unloaded) until its outputs are in.
        """
        stage_times.switch("prepare")
        output_filter = request.get("output_filter")
        if output_filter is not None and not (isinstance(output_filter, list)
                                              and all(isinstance(k, str) for k in output_filter)):
            raise RequestError('"output_filter" must be a list of output names')
        signature_name = request.get("signature_name", "")
        if not isinstance(signature_name, str):
            raise RequestError('"signature_name" must be a string')
        model = self.api.manager.get(ref.name)
        held = model.checkout(ref.version, ref.label)
        try:
            servable = held.servable
            _, signature = servable.signature(signature_name)
            stage_times.switch("json_decode")
            inputs, rows = json_inputs(request, signature)
            stage_times.switch("prepare")
            call = self.api.prepare(servable, signature_name, inputs, output_filter)
            spec = _spec_json(ref, servable.version, call.signature_name)
            if self.api.batcher is not None and call.batchable:
                stage_times.switch("batch_handoff")
                future = self.api.batcher.submit(servable, call.signature_name, call.inputs, call.keys,
                                                 loop=asyncio.get_running_loop())
            else:
                # A small run costs less than handing it to a thread and back: run it here unless the
                # version is busy elsewhere.
                small = call.batchable and len(next(iter(call.inputs.values()))) <= INLINE_ROWS
                stage_times.switch("session_run")
                outputs = servable.try_run(call.signature_name, call.inputs, call.keys) if small else None
                if outputs is not None:
                    model.release(held)
                    stage_times.switch("json_encode")
                    return _json_response({**json_outputs(outputs, rows), "model_spec": spec})
                future = self.executor.submit(servable.run, call.signature_name, call.inputs, call.keys)
        except BaseException:
            model.release(held)
            raise

        def finish(done: Future) -> Response:
            stage_times.switch("json_encode")
            try:
                return _json_response({**json_outputs(done.result(), rows), "model_spec": spec})
            finally:
                model.release(held)
        return Pending(future, finish)


def _json_object(body: bytes) -> dict:
    """The request body parsed as a JSON object."""
    try:
        request = json_codec.loads(body)
    except (ValueError, RecursionError) as error:
        raise HttpError(400, f"malformed JSON body: {error}") from None
    if not isinstance(request, dict):
        raise HttpError(400, "the JSON body must be an object")
    return request


def _json_response(answer: dict[str, Any]) -> Response:
    return Response(200, json_codec.dumps(answer))


def _version(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise HttpError(400, f"Malformed request: version '{text}' is not an integer") from None


def _spec_json(ref: ModelRef, version: int, signature_name: str = "") -> dict[str, str]:
    return {"name": ref.name, "version": str(version), "signature_name": signature_name}


def signature_json(signature: Signature) -> dict[str, Any]:
    """A SignatureDef as TF Serving's JSON (proto3 JSON: int64 sizes as strings)."""
    def info(spec) -> dict[str, Any]:
        shape = {"dim": [{"size": str(-1 if d is None else d), "name": ""} for d in spec.shape], "unknown_rank": False} \
            if spec.shape is not None else {"dim": [], "unknown_rank": True}
        return {"dtype": DTYPE_NAME.get(spec.dtype, "DT_INVALID"), "tensor_shape": shape, "name": spec.tensor_name}
    return {"inputs": {k: info(v) for k, v in signature.inputs.items()},
            "outputs": {k: info(v) for k, v in signature.outputs.items()}, "method_name": signature.method_name}


def status_json(statuses) -> dict[str, Any]:
    """GetModelStatusResponse as TF Serving's REST returns it."""
    return {"model_version_status": [
        {"version": str(s.version), "state": s.state,
         "status": {"error_code": "UNKNOWN" if s.error else "OK", "error_message": s.error}} for s in statuses]}
