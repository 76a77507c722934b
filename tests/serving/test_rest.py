"""TF Serving's REST API against a real `tftk serve` process on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import signal
import socket
import threading
import time

import numpy as np
import pytest

from tftk.inference import run_inference


@pytest.fixture(scope="module")
def mlp_server(mlp_run):
    from tests.serving.conftest import ServerProcess

    server = ServerProcess("--result-dir", str(mlp_run), "--model-name", "digits", "--num-versions", "2",
                           "--max-body-bytes", "200000", "--request-timeout-seconds", "1")
    yield server
    assert server.stop() == 0


def test_predict_gives_the_numbers_tftk_infer_gives(mlp_server, mlp_run):
    inputs = np.random.default_rng(1).random((5, 64), dtype=np.float32)
    status, answer = mlp_server.request("POST", "/v1/models/digits:predict", {"instances": inputs.tolist()})
    assert status == 200, answer
    assert answer["model_spec"] == {"name": "digits", "version": "100", "signature_name": "serving_default"}
    classes = [row["classes"] for row in answer["predictions"]]
    assert classes == run_inference(mlp_run, inputs).predictions.tolist()
    probabilities = np.array([row["probabilities"] for row in answer["predictions"]])
    assert probabilities.shape == (5, 10)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1, rtol=1e-5)
    assert (probabilities.argmax(axis=1) == classes).all()


def test_columnar_inputs_images_as_8x8x1_and_output_filter(mlp_server):
    inputs = np.random.default_rng(2).random((3, 8, 8, 1), dtype=np.float32)
    rows = mlp_server.request("POST", "/v1/models/digits:predict", {"instances": inputs.tolist()})[1]
    status, answer = mlp_server.request("POST", "/v1/models/digits/versions/100:predict", {
        "inputs": {"images": inputs.tolist()}, "output_filter": ["classes"], "signature_name": "serving_default"})
    assert status == 200, answer
    assert answer["outputs"] == [row["classes"] for row in rows["predictions"]]


def test_status_metadata_and_older_versions(mlp_server):
    assert mlp_server.request("GET", "/v1/models/digits")[1] == {"model_version_status": [
        {"version": str(v), "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
        for v in (50, 100)]}
    status, answer = mlp_server.request("GET", "/v1/models/digits/versions/50/metadata")
    assert status == 200
    assert answer["model_spec"]["version"] == "50"
    signature = answer["metadata"]["signature_def"]["signature_def"]["serving_default"]
    assert signature["method_name"] == "tensorflow/serving/predict"
    assert signature["inputs"]["images"]["dtype"] == "DT_FLOAT"
    assert [d["size"] for d in signature["inputs"]["images"]["tensor_shape"]["dim"]] == ["-1", "64"]
    assert mlp_server.request("POST", "/v1/models/digits/versions/50:predict",
                              {"instances": [[0.5] * 64]})[1]["model_spec"]["version"] == "50"


def test_classify_returns_every_label_with_its_score(mlp_server):
    image = np.random.default_rng(3).random(64).round(3).tolist()
    predicted = mlp_server.request("POST", "/v1/models/digits:predict", {"instances": [image]})[1]["predictions"][0]
    status, answer = mlp_server.request("POST", "/v1/models/digits:classify", {
        "signature_name": "classification", "examples": [{"images": image}]})
    assert status == 200, answer
    labels = [label for label, _ in answer["results"][0]]
    scores = [score for _, score in answer["results"][0]]
    assert labels == [str(c) for c in range(10)]
    np.testing.assert_allclose(scores, predicted["probabilities"], rtol=1e-6)


BAD_REQUESTS = [
    # (method, path, body (dict) or raw bytes, status, text in the error)
    ("POST", "/v1/models/digits:predict", b"{not json", 400, "malformed JSON"),
    ("POST", "/v1/models/digits:predict", b"[1, 2]", 400, "must be an object"),
    ("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 63]}, 400, "expected shape [-1, 64], got [1, 63]"),
    ("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64, [0.5] * 63]}, 400, "not rectangular"),
    ("POST", "/v1/models/digits:predict", {"instances": [["a"] * 64]}, 400, "expected float32, got string"),
    ("POST", "/v1/models/digits:predict", {"inputs": {"pixels": [[0.5] * 64]}}, 400, "missing ['images']"),
    ("POST", "/v1/models/digits:predict", {"instances": [], "inputs": []}, 400, "exactly one of"),
    ("POST", "/v1/models/digits:predict", {"instances": [{"b64": "!!"}]}, 400, "invalid base64"),
    ("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64], "signature_name": "nope"}, 404,
     'signature name: "nope" not found'),
    ("POST", "/v1/models/nope:predict", {"instances": [[0.5] * 64]}, 404, "Servable not found for request: Latest(nope)"),
    ("POST", "/v1/models/digits/versions/7:predict", {"instances": [[0.5] * 64]}, 404, "Specific(digits, 7)"),
    ("POST", "/v1/models/digits/versions/x:predict", {"instances": [[0.5] * 64]}, 400, "not an integer"),
    ("POST", "/v1/models/digits/labels/stable:predict", {"instances": [[0.5] * 64]}, 404, "label: stable"),
    ("POST", "/v1/models/digits:regress", {"examples": [{"images": [0.5] * 64}]}, 400,
     "Expected regression signature method_name to be tensorflow/serving/regress"),
    ("POST", "/v1/models/digits:classify", {"examples": [{"images": [0.5] * 3}], "signature_name": "classification"},
     400, "has 3 values, expected 64"),
    ("POST", "/v1/models/digits:classify", {"examples": [{"images": [0.5] * 64}]}, 400,
     "Expected classification signature method_name to be tensorflow/serving/classify"),
    ("GET", "/v1/models/digits:predict", None, 405, "use POST"),
    ("POST", "/v1/models/digits/metadata", {}, 405, "use GET"),
    ("GET", "/v2/models", None, 404, "Malformed request"),
    ("POST", "/v1/models/digits:predict", b"[" * 100000 + b"]" * 100000, 400, "malformed JSON"),
    ("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64] * 1000}, 413, "exceeds the limit"),
]


@pytest.mark.parametrize("method, path, body, status, text", BAD_REQUESTS,
                         ids=[f"{b[3]}-{b[4][:30]}" for b in BAD_REQUESTS])
def test_bad_requests_get_the_right_status_and_the_server_stays_up(mlp_server, method, path, body, status, text):
    raw = body if isinstance(body, bytes) else None
    got, answer = mlp_server.request(method, path, None if raw else body, raw=raw)
    assert (got, set(answer)) == (status, {"error"}), answer
    assert text in answer["error"]
    assert mlp_server.request("GET", "/v1/models/digits")[0] == 200


def read_response(sock: socket.socket, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def test_slow_loris_clients_get_408_and_others_are_served(mlp_server):
    heads = [socket.create_connection(("127.0.0.1", mlp_server.rest_port)) for _ in range(20)]
    for sock in heads:
        sock.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nHost: x\r\n")  # ... and never the rest
    body = socket.create_connection(("127.0.0.1", mlp_server.rest_port))
    body.sendall(b"POST /v1/models/digits:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"ins")
    assert mlp_server.request("GET", "/v1/models/digits")[0] == 200  # served meanwhile
    for sock in heads:
        assert read_response(sock).startswith(b"HTTP/1.1 408 ")
        sock.close()
    answer = read_response(body)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"request body not received within 1 s" in answer
    body.close()


def test_metrics_and_access_log(mlp_server):
    mlp_server.request("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64]})
    status, text = mlp_server.request("GET", "/metrics")
    assert status == 200
    assert 'tftk_serving_requests_total{api="rest",method="predict",model="digits",code="200"}' in text
    assert 'tftk_serving_request_latency_seconds_bucket{api="rest",method="predict",model="digits",le="+Inf"}' in text
    assert 'tftk_serving_model_version_loaded{model="digits",version="100"} 1' in text
    assert "tftk_serving_stage_cpu_seconds_total" not in text  # only with --stage-times
    for junk in range(3):  # made-up URLs and model names do not become label values
        mlp_server.request("GET", f"/junk/{junk}")
        mlp_server.request("GET", f"/v1/models/junk{junk}")
    text = mlp_server.request("GET", "/metrics")[1]
    assert "junk" not in text and 'method="unknown",model="",code="404"' in text
    logged = [json.loads(line) for line in mlp_server.lines if line.startswith("{")]
    assert {"ts", "api", "client", "method", "path", "status", "bytes", "ms"} <= set(logged[-1])
    assert any(entry["path"] == "/v1/models/digits:predict" and entry["status"] == 200 for entry in logged)


def test_b64_strings_and_a_full_queue(serve, mlp_run):
    server = serve("--result-dir", str(mlp_run), "--max-queue", "1", "--request-timeout-seconds", "5")
    stalled = socket.create_connection(("127.0.0.1", server.rest_port))  # holds the one queue slot
    stalled.sendall(b"POST /v1/models/default:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    time.sleep(0.3)
    status, answer = server.request("GET", "/v1/models/default")
    assert status == 503 and "retry later" in answer["error"]
    stalled.close()
    time.sleep(0.3)
    encoded = {"b64": base64.b64encode(b"\x00\x01").decode()}
    status, answer = server.request("POST", "/v1/models/default:predict", {"instances": [encoded]})
    assert status == 400 and "expected float32, got string" in answer["error"]


def test_sigterm_finishes_the_request_in_flight(serve, mlp_run):
    server = serve("--result-dir", str(mlp_run))
    body = json.dumps({"instances": [[0.25] * 64] * 2}).encode()
    sock = socket.create_connection(("127.0.0.1", server.rest_port))
    sock.sendall(b"POST /v1/models/default:predict HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                 + body[:10])
    time.sleep(0.3)
    server.process.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    sock.sendall(body[10:])
    answer = read_response(sock, timeout=20)
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["model_spec"]["version"] == "100"
    assert server.process.wait(20) == 0


def test_model_config_file_serves_several_models_with_policies_and_labels(serve, mlp_run, convnet_run, tmp_path):
    config = tmp_path / "models.config"
    config.write_text(f'''model_config_list {{
      config {{ name: "mlp" base_path: "{mlp_run}" model_platform: "tensorflow"
               model_version_policy {{ all {{}} }} version_labels {{ key: "stable" value: 50 }} }}
      config {{ name: "conv" base_path: "{convnet_run}" }}
    }}''')
    server = serve("--model-config-file", str(config))
    assert [s["version"] for s in server.request("GET", "/v1/models/mlp")[1]["model_version_status"]] == ["50", "100"]
    assert server.request("GET", "/v1/models/mlp/labels/stable")[1]["model_version_status"][0]["version"] == "50"
    answer = server.request("POST", "/v1/models/mlp/labels/stable:predict", {"instances": [[0.5] * 64]})[1]
    assert answer["model_spec"]["version"] == "50"
    inputs = np.random.default_rng(4).random((4, 8, 8, 1), dtype=np.float32)
    status, answer = server.request("POST", "/v1/models/conv:predict", {"inputs": inputs.tolist()})
    assert status == 200, answer
    assert answer["model_spec"]["version"] == "20"
    assert answer["outputs"]["classes"] == run_inference(convnet_run, inputs).predictions.tolist()


@pytest.mark.parametrize("args, message", [
    ((), "give one of --result-dir RUN"),
    (("--result-dir", "/nonexistent/run"), "model base path not found"),
    (("--model-config-file", "/nonexistent.config"), "cannot read the model config"),
])
def test_bad_command_lines_are_one_line_errors(args, message):
    from typer.testing import CliRunner

    from tftk.cli import app

    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr and "Traceback" not in result.stderr


def test_clients_in_parallel_all_get_answers(mlp_server):
    results = []

    def client():
        for _ in range(10):
            results.append(mlp_server.request("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64]})[0])

    threads = [threading.Thread(target=client) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [200] * 80


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_memory_stays_bounded_under_a_flood_of_bad_and_oversized_requests(mlp_server):
    bad = [(b"{" * 50000, None), (None, {"instances": [[0.5] * 64] * 1000}), (b"\xff\xfe", None),
           (None, {"instances": [[0.5] * 63] * 200})]
    for raw, body in bad * 5:  # warm up allocator pools first
        mlp_server.request("POST", "/v1/models/digits:predict", body, raw=raw)
    before = rss_kib(mlp_server.process.pid)
    for raw, body in bad * 50:
        assert mlp_server.request("POST", "/v1/models/digits:predict", body, raw=raw)[0] in (400, 413)
    assert rss_kib(mlp_server.process.pid) - before < 20_000  # KiB: no growth per request
    assert mlp_server.request("GET", "/v1/models/digits")[0] == 200


@pytest.mark.parametrize("api", ["REST", "gRPC"])
def test_a_port_in_use_is_a_one_line_error_before_models_load(mlp_run, api):
    from typer.testing import CliRunner

    from tftk.cli import app

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        ports = ["--rest-api-port", port, "--port", "0"] if api == "REST" else ["--rest-api-port", "0", "--port", port]
        result = CliRunner().invoke(app, ["serve", "--result-dir", str(mlp_run), *ports])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: cannot listen for {api} on 127.0.0.1:{port}"), result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("flags, message", [
    (["--scheduler-slice-micros", "-3"], "error: --scheduler-slice-micros must be >= 0 (0: the kernel's default), got -3"),
    (["--batching-parameters-file", "b.config"], "error: --batching-parameters-file needs --enable-batching"),
])
def test_bad_serve_flags_are_one_line_errors(mlp_run, flags, message):
    from typer.testing import CliRunner

    from tftk.cli import app

    result = CliRunner().invoke(app, ["serve", "--result-dir", str(mlp_run), "--port", "0", "--rest-api-port", "0",
                                      *flags])
    assert result.exit_code == 2, result.output
    assert result.stderr == message + "\n"
