"""TF Serving's gRPC API against a real `tftk serve` process: our stubs, and the official client library."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tftk.inference import run_inference
from tftk.proto import serving as pb
from tftk.serving.tensors import from_tensor_proto, to_tensor_proto

grpc = pytest.importorskip("grpc", reason="gRPC needs the serve extra: pip install -e '.[serve]'")


@pytest.fixture(scope="module")
def server(mlp_run):
    from tests.serving.conftest import ServerProcess

    process = ServerProcess("--result-dir", str(mlp_run), "--model-name", "digits", "--num-versions", "2",
                            "--max-body-bytes", "100000", grpc=True)
    yield process
    assert process.stop() == 0


def call(server, service: str, method: str, request, response_class, timeout: float = 30):
    """One unary RPC at TF Serving's method path, as the generated stubs make it."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        rpc = channel.unary_unary(f"/tensorflow.serving.{service}/{method}",
                                  request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=response_class.FromString)
        return rpc(request, timeout=timeout)


def predict_request(inputs, name="digits", version=None, signature=""):
    request = pb.PredictRequest()
    request.model_spec.name = name
    request.model_spec.signature_name = signature
    if version is not None:
        request.model_spec.version.value = version
    to_tensor_proto(inputs, request.inputs["images"])
    return request


def test_predict_gives_the_numbers_tftk_infer_and_rest_give(server, mlp_run):
    inputs = np.random.default_rng(5).random((4, 64), dtype=np.float32)
    response = call(server, "PredictionService", "Predict", predict_request(inputs), pb.PredictResponse)
    assert (response.model_spec.name, response.model_spec.version.value) == ("digits", 100)
    assert response.model_spec.signature_name == "serving_default"
    classes = from_tensor_proto(response.outputs["classes"], "classes")
    assert classes.tolist() == run_inference(mlp_run, inputs).predictions.tolist()
    rest = server.request("POST", "/v1/models/digits:predict", {"inputs": inputs.tolist()})[1]["outputs"]
    np.testing.assert_allclose(from_tensor_proto(response.outputs["probabilities"], "p"), rest["probabilities"],
                               rtol=1e-6)


def test_predict_a_named_version_with_typed_value_fields(server):
    request = pb.PredictRequest()
    request.model_spec.name = "digits"
    request.model_spec.version.value = 50
    tensor = request.inputs["images"]
    tensor.dtype = 2  # DT_DOUBLE in double_val, converted to the signature's float32
    tensor.tensor_shape.dim.add(size=1)
    tensor.tensor_shape.dim.add(size=64)
    tensor.double_val.extend([0.5] * 64)
    response = call(server, "PredictionService", "Predict", request, pb.PredictResponse)
    assert response.model_spec.version.value == 50
    assert from_tensor_proto(response.outputs["probabilities"], "p").shape == (1, 10)


def test_metadata_status_and_classify(server):
    request = pb.GetModelMetadataRequest(metadata_field=["signature_def"])
    request.model_spec.name = "digits"
    response = call(server, "PredictionService", "GetModelMetadata", request, pb.GetModelMetadataResponse)
    assert response.metadata["signature_def"].type_url == "type.googleapis.com/tensorflow.serving.SignatureDefMap"
    signatures = pb.SignatureDefMap()
    response.metadata["signature_def"].Unpack(signatures)
    assert sorted(signatures.signature_def) == ["classification", "serving_default"]
    assert [d.size for d in signatures.signature_def["serving_default"].inputs["images"].tensor_shape.dim] == [-1, 64]

    status = pb.GetModelStatusRequest()
    status.model_spec.name = "digits"
    response = call(server, "ModelService", "GetModelStatus", status, pb.GetModelStatusResponse)
    assert [(s.version, s.state) for s in response.model_version_status] == [(50, 30), (100, 30)]

    request = pb.ClassificationRequest()
    request.model_spec.name = "digits"
    request.model_spec.signature_name = "classification"
    context = request.input.example_list_with_context
    context.context.features.feature["unused"].int64_list.value.append(1)
    for value in (0.0, 1.0):
        context.examples.add().features.feature["images"].float_list.value.extend([value] * 64)
    response = call(server, "PredictionService", "Classify", request, pb.ClassificationResponse)
    assert len(response.result.classifications) == 2
    scores = [[c.score for c in row.classes] for row in response.result.classifications]
    np.testing.assert_allclose(np.sum(scores, axis=1), 1, rtol=1e-5)
    assert [c.label for c in response.result.classifications[0].classes] == [str(i) for i in range(10)]


BAD_RPCS = [
    ("Predict", lambda: predict_request(np.zeros((2, 63), np.float32)), "INVALID_ARGUMENT", "expected shape [-1, 64]"),
    ("Predict", lambda: predict_request(np.array([[b"x"] * 64], dtype=object)), "INVALID_ARGUMENT",
     "expected float32, got string"),
    ("Predict", lambda: predict_request(np.zeros((1, 64), np.float32), name="nope"), "NOT_FOUND", "Latest(nope)"),
    ("Predict", lambda: predict_request(np.zeros((1, 64), np.float32), version=3), "NOT_FOUND", "Specific(digits, 3)"),
    ("Predict", lambda: predict_request(np.zeros((1, 64), np.float32), signature="x"), "NOT_FOUND", '"x" not found'),
    ("Predict", lambda: predict_request(np.zeros((500, 64), np.float32)), "RESOURCE_EXHAUSTED", "larger than max"),
    ("Regress", lambda: _regress_request(), "INVALID_ARGUMENT", "Expected regression signature"),
    ("GetModelMetadata", lambda: _metadata_request([]), "INVALID_ARGUMENT", "at least one metadata_field"),
]


def _regress_request():
    request = pb.RegressionRequest()
    request.model_spec.name = "digits"
    request.input.example_list.examples.add().features.feature["images"].float_list.value.extend([0.0] * 64)
    return request


def _metadata_request(fields):
    request = pb.GetModelMetadataRequest(metadata_field=fields)
    request.model_spec.name = "digits"
    return request


@pytest.mark.parametrize("method, make, code, text", BAD_RPCS, ids=[f"{b[0]}-{b[2]}-{b[3][:20]}" for b in BAD_RPCS])
def test_bad_rpcs_get_the_right_code_and_the_server_stays_up(server, method, make, code, text):
    response_class = {"Predict": pb.PredictResponse, "Regress": pb.RegressionResponse,
                      "GetModelMetadata": pb.GetModelMetadataResponse}[method]
    with pytest.raises(grpc.RpcError) as raised:
        call(server, "PredictionService", method, make(), response_class)
    assert raised.value.code().name == code
    assert text in raised.value.details()
    ok = call(server, "PredictionService", "Predict", predict_request(np.zeros((1, 64), np.float32)),
              pb.PredictResponse)
    assert ok.model_spec.version.value == 100


@pytest.mark.slow  # imports TensorFlow in its venv
def test_tensorflow_serving_apis_official_client_works_unchanged(server, mlp_run, tmp_path):
    from tests.tf_oracle import require_tf

    python = require_tf()
    probe = subprocess.run([python, "-c", "import tensorflow_serving.apis"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("tensorflow-serving-api is not installed in the TensorFlow venv "
                    "(pip install --no-deps tensorflow-serving-api; .ci/run does)")
    inputs = np.random.default_rng(6).random((3, 64), dtype=np.float32)
    np.save(tmp_path / "inputs.npy", inputs)
    script = Path(__file__).with_name("official_client.py")
    result = subprocess.run([python, str(script), str(server.grpc_port), "digits", str(tmp_path / "inputs.npy")],
                            capture_output=True, text=True, timeout=300, env={"TF_CPP_MIN_LOG_LEVEL": "3"})
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout)
    assert out["version"] == 100
    assert out["classes"] == run_inference(mlp_run, inputs).predictions.tolist()
    np.testing.assert_allclose(np.sum(out["probabilities"], axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose([s for _, s in out["classify"]], out["probabilities"][0], rtol=1e-6)
    assert out["metadata"] == {"method": "tensorflow/serving/predict", "input_dtype": "float32",
                               "input_shape": [-1, 64]}
    assert out["status"] == [[50, "AVAILABLE"], [100, "AVAILABLE"]]
    assert out["unknown_model"] == ["NOT_FOUND", "Servable not found for request: Latest(nope)"]

