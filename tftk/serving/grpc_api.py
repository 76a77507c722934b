"""TF Serving's gRPC API with grpcio: PredictionService (Predict, Classify, Regress, GetModelMetadata)
and ModelService.GetModelStatus, at TF Serving's method paths, so `tensorflow-serving-api`'s stubs
work unchanged. Errors map as TF Serving's do: bad request INVALID_ARGUMENT, unknown model /
version / signature NOT_FOUND, a full server RESOURCE_EXHAUSTED (grpcio's maximum_concurrent_rpcs).
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import Callable

from tftk.proto import serving as pb
from tftk.proto import tensorflow as tf_pb
from tftk.serving.api import ModelRef, ServingApi
from tftk.serving.batching import QueueFull
from tftk.serving.metrics import Metrics
from tftk.serving.servable import NotFound, RequestError, Signature
from tftk.serving.tensors import DTYPE_ENUM, from_tensor_proto, to_tensor_proto

__all__ = ["bind_grpc_server", "signature_def"]

PREDICTION_SERVICE = "tensorflow.serving.PredictionService"
MODEL_SERVICE = "tensorflow.serving.ModelService"
_access = logging.getLogger("tftk.serving.access")
_log = logging.getLogger("tftk.serving")


def _ref(spec) -> ModelRef:
    choice = spec.WhichOneof("version_choice")
    return ModelRef(spec.name, spec.version.value if choice == "version" else None,
                    spec.version_label if choice == "version_label" else None, spec.signature_name)


def _fill_spec(spec, name: str, version: int, signature_name: str = "") -> None:
    spec.name = name
    spec.version.value = version
    spec.signature_name = signature_name


def signature_def(signature: Signature):
    """A Signature as TF's SignatureDef proto."""
    proto = tf_pb.SignatureDef(method_name=signature.method_name)
    for target, specs in ((proto.inputs, signature.inputs), (proto.outputs, signature.outputs)):
        for key, spec in specs.items():
            info = target[key]
            info.name = spec.tensor_name
            info.dtype = DTYPE_ENUM.get(spec.dtype, 0)
            if spec.shape is None:
                info.tensor_shape.unknown_rank = True
            for size in spec.shape or ():
                info.tensor_shape.dim.add(size=-1 if size is None else size)
    return proto


def _examples(request) -> list:
    """The request's tf.Examples, each merged with the shared context's features when given."""
    kind = request.input.WhichOneof("kind")
    if kind == "example_list":
        return list(request.input.example_list.examples)
    if kind == "example_list_with_context":
        listed = request.input.example_list_with_context
        merged = []
        for example in listed.examples:
            combined = type(example)()
            combined.CopyFrom(listed.context)
            combined.MergeFrom(example)
            merged.append(combined)
        return merged
    raise RequestError("Input is empty")


class _Handlers:
    def __init__(self, api: ServingApi):
        self.api = api

    def predict(self, request):
        batcher = self.api.batcher
        with batcher.arrival() if batcher is not None else nullcontext() as arrival:
            inputs = {key: from_tensor_proto(value, key) for key, value in request.inputs.items()}
            prediction = self.api.predict(_ref(request.model_spec), inputs, list(request.output_filter) or None,
                                          arrival=arrival)
        response = pb.PredictResponse()
        _fill_spec(response.model_spec, request.model_spec.name, prediction.version, prediction.signature_name)
        for key, value in prediction.outputs.items():
            to_tensor_proto(value, response.outputs[key])
        return response

    def classify(self, request):
        prediction, results = self.api.classify(_ref(request.model_spec), _examples(request))
        response = pb.ClassificationResponse()
        _fill_spec(response.model_spec, request.model_spec.name, prediction.version, prediction.signature_name)
        for row in results:
            response.result.classifications.add().classes.extend(pb.Class(label=l, score=s) for l, s in row)
        return response

    def regress(self, request):
        prediction, values = self.api.regress(_ref(request.model_spec), _examples(request))
        response = pb.RegressionResponse()
        _fill_spec(response.model_spec, request.model_spec.name, prediction.version, prediction.signature_name)
        response.result.regressions.extend(pb.Regression(value=v) for v in values)
        return response

    def get_model_metadata(self, request):
        fields = list(request.metadata_field)
        if fields != ["signature_def"]:
            raise RequestError("metadata_field must be exactly [\"signature_def\"], the one metadata served"
                               if fields else "GetModelMetadataRequest must specify at least one metadata_field")
        version, signatures = self.api.metadata(_ref(request.model_spec))
        response = pb.GetModelMetadataResponse()
        _fill_spec(response.model_spec, request.model_spec.name, version, request.model_spec.signature_name)
        signature_map = pb.SignatureDefMap()
        for key, signature in signatures.items():
            signature_map.signature_def[key].CopyFrom(signature_def(signature))
        response.metadata["signature_def"].Pack(signature_map)
        return response

    def get_model_status(self, request):
        response = pb.GetModelStatusResponse()
        for status in self.api.status(_ref(request.model_spec)):
            entry = response.model_version_status.add(version=status.version, state=pb.STATE[status.state])
            entry.status.error_code = 2 if status.error else 0  # tensorflow.error.Code UNKNOWN / OK
            entry.status.error_message = status.error
        return response


def _unary(handler: Callable, request_class, metrics: Metrics, method: str, api_models: dict):
    import grpc

    def run(request, context):
        started = time.perf_counter()
        code = grpc.StatusCode.OK
        try:
            return handler(request)
        except RequestError as error:
            code, message = grpc.StatusCode.INVALID_ARGUMENT, str(error)
        except NotFound as error:
            code, message = grpc.StatusCode.NOT_FOUND, str(error)
        except QueueFull as error:
            code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, str(error)
        except Exception as error:  # the server answers and stays up
            _log.exception("gRPC %s failed", method)
            code, message = grpc.StatusCode.INTERNAL, f"{type(error).__name__}: {error}"
        finally:
            elapsed = time.perf_counter() - started
            model = request.model_spec.name
            metrics.request("grpc", method, model if model in api_models else "", code.value[0], elapsed)
            _access.info(json.dumps({"ts": round(time.time(), 3), "api": "grpc", "client": context.peer(),
                                     "method": method, "model": model, "status": code.name,
                                     "ms": round(elapsed * 1000, 3)}))
        context.abort(code, message)

    return grpc.unary_unary_rpc_method_handler(run, request_deserializer=request_class.FromString,
                                               response_serializer=lambda message: message.SerializeToString())


def bind_grpc_server(api: ServingApi, metrics: Metrics, options):
    """A grpc.Server bound to options.host:options.port, not started yet; `.stop(grace)` ends it."""
    import grpc

    handlers = _Handlers(api)
    served = api.manager.models
    prediction = {name: _unary(function, request, metrics, name, served) for name, function, request in (
        ("Predict", handlers.predict, pb.PredictRequest), ("Classify", handlers.classify, pb.ClassificationRequest),
        ("Regress", handlers.regress, pb.RegressionRequest),
        ("GetModelMetadata", handlers.get_model_metadata, pb.GetModelMetadataRequest))}
    model = {"GetModelStatus": _unary(handlers.get_model_status, pb.GetModelStatusRequest, metrics, "GetModelStatus",
                                      served)}
    server = grpc.server(
        ThreadPoolExecutor(options.rest_api_num_threads, thread_name_prefix="tftk-grpc"),
        handlers=[grpc.method_handlers_generic_handler(PREDICTION_SERVICE, prediction),
                  grpc.method_handlers_generic_handler(MODEL_SERVICE, model)],
        maximum_concurrent_rpcs=options.max_queue,
        options=[("grpc.max_receive_message_length", options.max_body_bytes),
                 ("grpc.max_send_message_length", 256 << 20), ("grpc.so_reuseport", 0)])
    address = f"{options.host}:{options.port}"
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError:  # grpcio >= 1.5x raises where older ones returned 0
        bound = 0
    if bound == 0:
        from tftk.user_input import UserInputError
        raise UserInputError(f"cannot listen for gRPC on {address} (port in use?)")
    return server
