"""Talks to `tftk serve` with TensorFlow Serving's own client library (run in the TensorFlow venv).

    python official_client.py PORT MODEL INPUTS.npy  ->  one JSON object on stdout

Uses tensorflow-serving-api's PredictionServiceStub and ModelServiceStub unchanged, with
tf.make_tensor_proto / tf.make_ndarray and tf.train.Example, as a TF Serving client would.
"""

import json
import sys

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import (classification_pb2, get_model_metadata_pb2, get_model_status_pb2,
                                     model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc)

port, model, inputs_path = sys.argv[1], sys.argv[2], sys.argv[3]
inputs = np.load(inputs_path)
channel = grpc.insecure_channel(f"127.0.0.1:{port}")
stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
out = {}

request = predict_pb2.PredictRequest()
request.model_spec.name = model
request.model_spec.signature_name = "serving_default"
request.inputs["images"].CopyFrom(tf.make_tensor_proto(inputs))
response = stub.Predict(request, timeout=30)
out["version"] = response.model_spec.version.value
out["classes"] = tf.make_ndarray(response.outputs["classes"]).tolist()
out["probabilities"] = tf.make_ndarray(response.outputs["probabilities"]).tolist()

request = classification_pb2.ClassificationRequest()
request.model_spec.name = model
request.model_spec.signature_name = "classification"
example = request.input.example_list.examples.add()
example.features.feature["images"].float_list.value.extend(inputs[0].reshape(-1).tolist())
response = stub.Classify(request, timeout=30)
out["classify"] = [[c.label, c.score] for c in response.result.classifications[0].classes]

request = get_model_metadata_pb2.GetModelMetadataRequest()
request.model_spec.name = model
request.metadata_field.append("signature_def")
response = stub.GetModelMetadata(request, timeout=30)
signatures = get_model_metadata_pb2.SignatureDefMap()
response.metadata["signature_def"].Unpack(signatures)
default = signatures.signature_def["serving_default"]
out["metadata"] = {"method": default.method_name, "input_dtype": tf.dtypes.as_dtype(default.inputs["images"].dtype).name,
                   "input_shape": [d.size for d in default.inputs["images"].tensor_shape.dim]}

request = get_model_status_pb2.GetModelStatusRequest()
request.model_spec.name = model
response = model_service_pb2_grpc.ModelServiceStub(channel).GetModelStatus(request, timeout=30)
out["status"] = [[s.version, get_model_status_pb2.ModelVersionStatus.State.Name(s.state)]
                 for s in response.model_version_status]

request = predict_pb2.PredictRequest()
request.model_spec.name = "nope"
request.inputs["images"].CopyFrom(tf.make_tensor_proto(inputs))
try:
    stub.Predict(request, timeout=30)
except grpc.RpcError as error:
    out["unknown_model"] = [error.code().name, error.details()]
print(json.dumps(out))
