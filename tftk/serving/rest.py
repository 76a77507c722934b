"""TF Serving's REST API as an ASGI app, served by uvicorn (httptools parser).

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
from concurrent.futures import Executor
from contextlib import nullcontext
from typing import Any, Callable

from tftk.serving.api import ModelRef, ServingApi
from tftk.serving.batching import QueueFull
from tftk.serving.metrics import Metrics
from tftk.serving.servable import NotFound, RequestError, Signature
from tftk.serving.tensors import DTYPE_NAME, example_from_json, json_inputs, json_outputs

__all__ = ["RestApp", "signature_json", "status_json"]

_ROUTE = re.compile(r"/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+)|/labels/(?P<label>[^/:]+))?"
                    r"(?P<verb>/metadata|:predict|:classify|:regress)?")
INLINE_ROWS = 8  # unbatched requests of at most this many examples run on the event loop itself
_access = logging.getLogger("tftk.serving.access")
_log = logging.getLogger("tftk.serving")


class HttpError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class RestApp:
    """The ASGI application. `executor` runs the model work off the event loop."""

    def __init__(self, api: ServingApi, metrics: Metrics, executor: Executor, *, max_body_bytes: int = 8 << 20,
                 max_queue: int = 256, body_timeout: float = 10.0):
        self.api, self.metrics, self.executor = api, metrics, executor
        self.max_body_bytes, self.max_queue, self.body_timeout = max_body_bytes, max_queue, body_timeout
        self.in_flight = 0

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        started = time.perf_counter()
        path, method = scope["path"], scope["method"]
        model, verb, status, body = "", "", 500, b""
        admitted = self.in_flight < self.max_queue
        if admitted:
            self.in_flight += 1
        try:
            if not admitted:
                self.metrics.rejected("rest", "queue_full")
                raise HttpError(503, f"server busy: {self.max_queue} requests already queued; retry later")
            if path == "/metrics":
                status, body = 200, self.metrics.render().encode()
                await _respond(send, status, body, b"text/plain; version=0.0.4; charset=utf-8")
                return
            match = _ROUTE.fullmatch(path)
            if match is None:
                raise HttpError(404, f"Malformed request: {method} {path}")
            model, verb = match["name"], (match["verb"] or "status").lstrip("/:")
            want = "POST" if verb in ("predict", "classify", "regress") else "GET"
            if method != want:
                raise HttpError(405, f"{method} not allowed on {path}; use {want}")
            ref = ModelRef(model, _version(match["version"]), match["label"])
            if verb == "predict":
                batcher = self.api.batcher
                with batcher.arrival() if batcher is not None else nullcontext() as arrival:
                    answer = await self._predict(ref, await self._json_body(scope, receive), arrival)
            else:
                request = await self._json_body(scope, receive) if want == "POST" else {}
                answer = await asyncio.get_running_loop().run_in_executor(
                    self.executor, self._answer, verb, ref, request)
            status, body = 200, json.dumps(answer, separators=(",", ":")).encode()
        except HttpError as error:
            status, body = error.status, _error_body(str(error))
        except RequestError as error:
            status, body = 400, _error_body(str(error))
        except NotFound as error:
            status, body = 404, _error_body(str(error))
        except QueueFull as error:
            self.metrics.rejected("rest", "batch_queue_full")
            status, body = 503, _error_body(str(error))
        except Exception as error:  # a bug or a failed Session.run: the server answers and stays up
            _log.exception("%s %s failed", method, path)
            status, body = 500, _error_body(f"{type(error).__name__}: {error}")
        finally:
            if admitted:
                self.in_flight -= 1
        await _respond(send, status, body)
        elapsed = time.perf_counter() - started
        # labels from the served names only, so made-up URLs cannot grow the metrics without bound
        served = model if model in self.api.manager.models else ""
        self.metrics.request("rest", verb or "unknown", served, status, elapsed)
        if not _access.isEnabledFor(logging.INFO):
            return
        client = scope.get("client") or ("", 0)
        _access.info(json.dumps({"ts": round(time.time(), 3), "api": "rest", "client": f"{client[0]}:{client[1]}",
                                 "method": method, "path": path, "status": status, "bytes": len(body),
                                 "ms": round(elapsed * 1000, 3)}))

    async def _json_body(self, scope: dict, receive: Callable) -> dict:
        """The request body parsed as a JSON object, bounded in size and in time."""
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            self.metrics.rejected("rest", "too_large")
            raise HttpError(413, f"request body of {int(declared)} bytes exceeds the limit of {self.max_body_bytes}")
        chunks, size = [], 0
        deadline = time.monotonic() + self.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                self.metrics.rejected("rest", "slow_body")
                raise HttpError(408, f"request body not received within {self.body_timeout:g} s") from None
            if message["type"] == "http.disconnect":
                raise HttpError(400, "client disconnected before sending the whole body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                self.metrics.rejected("rest", "too_large")
                raise HttpError(413, f"request body exceeds the limit of {self.max_body_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        try:
            request = json.loads(b"".join(chunks))
        except (ValueError, RecursionError) as error:
            raise HttpError(400, f"malformed JSON body: {error}") from None
        if not isinstance(request, dict):
            raise HttpError(400, "the JSON body must be an object")
        return request

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

    async def _predict(self, ref: ModelRef, request: dict, arrival: list[bool] | None) -> dict[str, Any]:
        """Predict on the event loop: a batched request awaits its batch; others run on the executor."""
        output_filter = request.get("output_filter")
        if output_filter is not None and not (isinstance(output_filter, list)
                                              and all(isinstance(k, str) for k in output_filter)):
            raise RequestError('"output_filter" must be a list of output names')
        signature_name = request.get("signature_name", "")
        if not isinstance(signature_name, str):
            raise RequestError('"signature_name" must be a string')
        with self.api.manager.get(ref.name).acquire(ref.version, ref.label) as servable:
            _, signature = servable.signature(signature_name)
            inputs, rows = json_inputs(request, signature)
            call = self.api.prepare(servable, signature_name, inputs, output_filter)
            if self.api.batcher is not None and call.batchable:
                pending = self.api.batcher.submit(servable, call.signature_name, call.inputs, call.keys, arrival)
                outputs = await asyncio.wrap_future(pending)
            else:
                # A small run costs less than handing it to a thread and back (~0.7 ms of GIL
                # hand-offs on a busy machine): run it here unless the version is busy elsewhere.
                small = call.batchable and len(next(iter(call.inputs.values()))) <= INLINE_ROWS
                outputs = servable.try_run(call.signature_name, call.inputs, call.keys) if small else None
                if outputs is None:
                    outputs = await asyncio.get_running_loop().run_in_executor(
                        self.executor, servable.run, call.signature_name, call.inputs, call.keys)
            version = servable.version
        answer = json_outputs(outputs, rows)
        answer["model_spec"] = _spec_json(ref, version, call.signature_name)
        return answer


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


def _error_body(message: str) -> bytes:
    return json.dumps({"error": message}).encode()


async def _respond(send: Callable, status: int, body: bytes, content_type: bytes = b"application/json") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
