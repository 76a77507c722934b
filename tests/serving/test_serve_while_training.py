"""A run served while `tftk train` keeps writing checkpoints: every request succeeds, versions rise."""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from tests.serving.conftest import CONFIGS, ROOT, train
from tftk.proto import serving as pb
from tftk.serving.tensors import to_tensor_proto


@pytest.mark.slow
def test_requests_succeed_and_name_a_rising_version_while_the_run_trains(serve, tmp_path):
    import grpc

    run = train(tmp_path / "run", steps=20, save_every=10)
    server = serve("--result-dir", str(run), "--file-system-poll-wait-seconds", "0.2", grpc=True)
    stop = threading.Event()
    rest_seen: list[tuple[int, str]] = []
    grpc_seen: list[int] = []
    image = np.random.default_rng(0).random((1, 64), dtype=np.float32)

    def rest_client():
        while not stop.is_set():
            status, answer = server.request("POST", "/v1/models/default:predict", {"instances": image.tolist()})
            rest_seen.append((status, answer["model_spec"]["version"] if status == 200 else str(answer)))

    def grpc_client():
        request = pb.PredictRequest()
        request.model_spec.name = "default"
        to_tensor_proto(image, request.inputs["images"])
        with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            predict = channel.unary_unary("/tensorflow.serving.PredictionService/Predict",
                                          request_serializer=lambda m: m.SerializeToString(),
                                          response_deserializer=pb.PredictResponse.FromString)
            while not stop.is_set():
                grpc_seen.append(predict(request, timeout=30).model_spec.version.value)

    clients = [threading.Thread(target=rest_client), threading.Thread(target=grpc_client)]
    for client in clients:
        client.start()
    # a second process resumes the run to step 200, checkpointing every 10 steps
    trainer = subprocess.run([sys.executable, "-c", "from tftk.cli import main; main()", "train", "--config",
                              str(CONFIGS / "digits_mlp.yaml"), "--result-dir", str(run), "--max-iter", "200",
                              "--random-seed", "3", "save_every=10", "batch_size=20",
                              "results_root=" + str(run.parent)],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert trainer.returncode == 0, trainer.stderr
    server.wait_for(lambda: rest_seen and rest_seen[-1][1] == "200" and grpc_seen and grpc_seen[-1] == 200,
                    what="version 200 to be served")
    stop.set()
    for client in clients:
        client.join()
    assert all(status == 200 for status, _ in rest_seen), [s for s in rest_seen if s[0] != 200][:3]
    versions = [int(version) for _, version in rest_seen]
    assert versions == sorted(versions) and grpc_seen == sorted(grpc_seen)  # one client never goes back
    # the version the run had, then the one it ended with; how many checkpoints in between the server
    # saw depends on how fast the trainer is against the 0.2 s poll (a fast machine: none)
    assert versions[0] == 20 and versions[-1] == 200, sorted(set(versions))
    assert server.process.poll() is None
