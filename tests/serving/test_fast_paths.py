"""The serving fast paths answer as the plain paths do: planned Session runs, results handed to the event
loop once per batch, and `--stage-times` (a batched server giving `tftk infer`'s numbers and the usual
errors while counting CPU by stage)."""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tftk as tf
from tftk.inference import run_inference
from tftk.serving.batching import Batcher, BatchingParameters
from tftk.serving.servable import PlannedRuns
from tftk.serving.stage_times import STAGES


@pytest.mark.parametrize("outputs, inputs", [
    (["sum", "scaled"], ["x", "y"]),
    (["scaled"], ["y", "x"]),  # another order of inputs: another callable, the same numbers
    (["sum"], ["x", "y"]),
])
def test_planned_runs_give_what_session_run_gives(outputs, inputs):
    graph = tf.Graph()
    with graph.as_default():
        x, y = tf.placeholder(tf.float32, [None, 3], name="x"), tf.placeholder(tf.float32, [None, 3], name="y")
        fetches = {"sum": tf.reduce_sum(x * y, axis=1), "scaled": x * 2.0 + y}
    feeds = {"x": x, "y": y}
    values = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "y": np.full((2, 3), 0.5, np.float32)}
    with tf.Session(graph=graph) as sess:
        runs = PlannedRuns(sess, lambda signature, key, is_input: feeds[key] if is_input else fetches[key])
        got = runs("serving_default", {key: values[key] for key in inputs}, outputs)
        again = runs("serving_default", {key: values[key] + 1 for key in inputs}, outputs)  # the cached callable
        expected = sess.run({key: fetches[key] for key in outputs}, {x: values["x"], y: values["y"]})
        expected_again = sess.run({key: fetches[key] for key in outputs}, {x: values["x"] + 1, y: values["y"] + 1})
    assert list(got) == outputs
    for key in outputs:
        np.testing.assert_array_equal(got[key], expected[key])
        np.testing.assert_array_equal(again[key], expected_again[key])


def test_a_batch_thread_hands_an_event_loops_results_over_in_one_wake_up(mlp_run):
    from tftk.serving.manager import ServedModel
    from tftk.serving.sources import RunFolderSource

    model = ServedModel("digits", RunFolderSource(mlp_run))
    model.poll()
    images = np.random.default_rng(4).random((4, 64), dtype=np.float32)
    batcher = Batcher(BatchingParameters(max_batch_size=4, batch_timeout_micros=30_000_000, num_batch_threads=1))
    loop = asyncio.new_event_loop()
    wake_ups, settled_on = [], {}
    plain_call_soon_threadsafe = loop.call_soon_threadsafe

    def counting(callback, *args):
        wake_ups.append(callback)
        return plain_call_soon_threadsafe(callback, *args)

    loop.call_soon_threadsafe = counting
    with model.acquire() as servable:
        async def submit_all():
            futures = []
            for i in range(4):  # three from the loop's front end, one from a blocking caller (gRPC)
                future = batcher.submit(servable, "serving_default", {"images": images[i:i + 1]}, ["classes"],
                                        loop=loop if i < 3 else None)
                future.add_done_callback(lambda f, i=i: settled_on.__setitem__(i, threading.get_ident()))
                futures.append(future)
            while not all(future.done() for future in futures):
                await asyncio.sleep(0.01)
            return futures

        futures = loop.run_until_complete(submit_all())
        expected = servable.run("serving_default", {"images": images}, ["classes"])["classes"]
    loop.close()
    batcher.stop()
    model.close()
    assert [int(future.result()["classes"][0]) for future in futures] == expected.tolist()
    assert len(wake_ups) == 1  # one call_soon_threadsafe for the loop's three requests
    loop_thread = threading.get_ident()
    assert [settled_on[i] == loop_thread for i in range(4)] == [True, True, True, False]


@pytest.fixture(scope="module")
def batched_server(convnet_run, tmp_path_factory):
    from tests.serving.conftest import ServerProcess

    parameters = tmp_path_factory.mktemp("batching") / "batching.config"
    parameters.write_text("max_batch_size { value: 8 } batch_timeout_micros { value: 2000 } "
                          "num_batch_threads { value: 1 }")
    server = ServerProcess("--result-dir", str(convnet_run), "--model-name", "digits", "--enable-batching",
                           "--batching-parameters-file", str(parameters), "--stage-times", "--access-log", "")
    yield server
    assert server.stop() == 0


def test_batched_planned_runs_give_tftk_infers_numbers(batched_server, convnet_run):
    images = np.random.default_rng(5).random((12, 8, 8, 1), dtype=np.float32)

    def predict(i):
        status, answer = batched_server.request("POST", "/v1/models/digits:predict",
                                                {"instances": images[i:i + 1].tolist()})
        assert status == 200, answer
        return answer["predictions"][0]

    with ThreadPoolExecutor(12) as pool:
        rows = list(pool.map(predict, range(12)))
    assert [row["classes"] for row in rows] == run_inference(convnet_run, images).predictions.tolist()
    alone = batched_server.request("POST", "/v1/models/digits:predict",
                                   {"instances": images.reshape(12, 64).tolist()})[1]["predictions"]
    np.testing.assert_allclose([row["probabilities"] for row in rows], [row["probabilities"] for row in alone],
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("instances, text", [
    ([[0.5] * 63], "input 'images': expected shape [-1, 8, 8, 1], got [1, 63]"),
    ([[[[0.5]] * 8] * 7], "input 'images': expected shape [-1, 8, 8, 1], got [1, 7, 8, 1]"),
    ([["a"] * 64], "input 'images': expected float32, got string"),
    ([[True] * 64, [0.5] * 63], "not rectangular"),
])
def test_batched_server_refuses_bad_shapes_and_dtypes(batched_server, instances, text):
    status, answer = batched_server.request("POST", "/v1/models/digits:predict", {"instances": instances})
    assert (status, answer) == (400, {"error": answer["error"]}) and text in answer["error"], answer


def test_stage_times_count_each_stage_of_the_requests(batched_server):
    for _ in range(3):
        assert batched_server.request("POST", "/v1/models/digits:predict", {"instances": [[0.5] * 64]})[0] == 200
    metrics = batched_server.request("GET", "/metrics")[1]
    seconds = {stage: float(value) for stage, value in
               re.findall(r'^tftk_serving_stage_cpu_seconds_total\{stage="(\w+)"\} (\S+)$', metrics, re.M)}
    assert list(seconds) == list(STAGES)
    assert all(seconds[stage] > 0 for stage in ("http", "json_decode", "prepare", "batch_handoff", "session_run",
                                                "json_encode", "http_write")), seconds
