"""The short scheduler slice for the server's latency-critical threads (Linux >= 6.12's EEVDF)."""

from __future__ import annotations

import platform
import sys
import threading

import pytest

from tftk.serving.scheduling import request_slice, thread_slice_micros

slices_settable = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64") and \
    tuple(int(part) for part in platform.release().split(".")[:2] if part.isdigit()) >= (6, 12)


def in_a_new_thread(work):
    """work(native id) run in a fresh thread (the slice stays with that thread, not the test's)."""
    result = []
    thread = threading.Thread(target=lambda: result.append(work(threading.get_native_id())))
    thread.start()
    thread.join()
    return result[0]


@pytest.mark.skipif(not slices_settable, reason="per-thread slices need Linux >= 6.12 on x86_64/aarch64")
@pytest.mark.parametrize("micros, changed, after", [(250, True, 250), (1000, True, 1000), (0, False, None)])
def test_a_thread_gets_the_slice_it_asks_for(micros, changed, after):
    def ask(thread_id):
        before = thread_slice_micros(thread_id)
        return request_slice([thread_id], micros), before, thread_slice_micros(thread_id)

    done, before, now = in_a_new_thread(ask)
    assert done is changed
    assert now == (after if changed else before)


def test_an_unknown_thread_is_refused_and_nothing_is_set():
    assert request_slice([2 ** 30], 250) is False
    assert thread_slice_micros(2 ** 30) is None


@pytest.mark.skipif(not slices_settable, reason="per-thread slices need Linux >= 6.12 on x86_64/aarch64")
@pytest.mark.parametrize("flags, expected", [((), 100), (("--scheduler-slice-micros", "300"), 300)])
def test_the_server_shortens_the_slices_of_its_event_loop_and_batch_threads(serve, mlp_run, tmp_path, flags, expected):
    from pathlib import Path

    parameters = tmp_path / "batching.config"
    parameters.write_text("num_batch_threads { value: 2 }")
    server = serve("--result-dir", str(mlp_run), "--enable-batching", "--batching-parameters-file", str(parameters),
                   *flags)
    slices = {int(task.name): thread_slice_micros(int(task.name))
              for task in Path(f"/proc/{server.process.pid}/task").iterdir()}
    shortened = sorted(tid for tid, micros in slices.items() if micros == expected)
    # the main thread (it runs the event loop), the two batch threads and the threads the main thread starts later
    assert server.process.pid in shortened and len(shortened) >= 3, slices
    assert server.request("GET", "/v1/models/default")[0] == 200
