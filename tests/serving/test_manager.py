"""The model manager on real run folders: which versions count, policies, unloading under load."""

from __future__ import annotations

import re
import shutil
import threading

import numpy as np
import pytest

from tftk.user_input import UserInputError
from tftk.serving.manager import ModelManager, ServedModel, VersionPolicy
from tftk.serving.servable import NotFound, PlannedRuns, RequestError
from tftk.serving.sources import RunFolderSource
from tftk.train.checkpoint_io import data_path
from tftk.train.checkpoint_state import update_checkpoint_state


@pytest.fixture()
def run_copy(mlp_run, tmp_path):
    """A copy of the trained MLP run (checkpoints 50 and 100) the test may change."""
    return shutil.copytree(mlp_run, tmp_path / "run")


def name_checkpoints(run, *steps):
    """Rewrite the run's state file to name exactly these checkpoint steps (the last is the newest)."""
    paths = [str(run / f"model.ckpt-{step}") for step in steps]
    update_checkpoint_state(run, paths[-1], paths)


def images(count=3, seed=0):
    return np.random.default_rng(seed).random((count, 64), dtype=np.float32)


def predict(model: ServedModel, inputs, version=None):
    with model.acquire(version) as servable:
        name, signature = servable.signature("")
        checked = servable.check_inputs(signature, {"images": inputs})
        return servable.version, servable.run(name, checked, ["classes", "probabilities"])


def test_versions_are_the_checkpoints_the_state_file_names_and_that_exist(run_copy):
    source = RunFolderSource(run_copy)
    assert sorted(source.versions()) == [50, 100]
    (run_copy / ".model.ckpt-150.index.x1y2.tmp").write_bytes(b"half a checkpoint")  # a Saver mid-write
    name_checkpoints(run_copy, 50, 100, 150)  # names 150, whose data file is not there
    assert sorted(source.versions()) == [50, 100]
    (run_copy / "checkpoint").write_text("model_checkpoint_path: \"model.ckpt-1")  # damaged mid-replace
    assert source.versions() == {}


@pytest.mark.parametrize("policy, loaded", [
    (VersionPolicy(), [100]),
    (VersionPolicy(latest=2), [50, 100]),
    (VersionPolicy(latest=None), [50, 100]),
    (VersionPolicy(latest=None, specific=frozenset({50, 7})), [50]),
])
def test_version_policies(mlp_run, policy, loaded):
    model = ServedModel("digits", RunFolderSource(mlp_run), policy)
    model.poll()
    try:
        assert model.versions() == loaded
        assert [s.state for s in model.status()] == ["AVAILABLE"] * len(loaded)
        assert predict(model, images())[0] == loaded[-1]
    finally:
        model.close()


def test_versions_restore_their_own_checkpoint(mlp_run):
    model = ServedModel("digits", RunFolderSource(mlp_run), VersionPolicy(latest=2))
    model.poll()
    try:
        _, old = predict(model, images(), version=50)
        _, new = predict(model, images(), version=100)
        assert not np.allclose(old["probabilities"], new["probabilities"])
        np.testing.assert_allclose(old["probabilities"].sum(axis=1), 1, rtol=1e-5)
    finally:
        model.close()


def test_a_new_version_replaces_the_old_one_after_requests_using_it_finish(run_copy):
    name_checkpoints(run_copy, 50)
    model = ServedModel("digits", RunFolderSource(run_copy))
    model.poll()
    assert model.versions() == [50]
    with model.acquire() as held:
        name_checkpoints(run_copy, 50, 100)
        model.poll()
        assert model.versions() == [100]  # new requests go to 100 at once
        with pytest.raises(NotFound, match=r"Specific\(digits, 50\)"):
            predict(model, images(), version=50)
        name, signature = held.signature("")
        assert held.run(name, held.check_inputs(signature, {"images": images()}), ["classes"])["classes"].shape == (3,)
    with pytest.raises(RuntimeError, match="closed"):  # closed once its last request ended
        held.run(name, {"images": images()}, ["classes"])
    assert [(s.version, s.state) for s in model.status()] == [(50, "END"), (100, "AVAILABLE")]
    model.close()


def test_a_version_that_fails_to_load_is_reported_and_the_old_one_stays(run_copy):
    name_checkpoints(run_copy, 50)
    model = ServedModel("digits", RunFolderSource(run_copy))
    model.poll()
    data_path(run_copy / "model.ckpt-100").write_bytes(b"not a checkpoint")
    name_checkpoints(run_copy, 50, 100)
    model.poll()
    try:
        assert model.versions() == [50]
        failed = model.status(100)[0]
        assert failed.state == "END" and failed.error
        assert predict(model, images())[0] == 50
    finally:
        model.close()


def test_requests_keep_succeeding_while_versions_change(run_copy):
    """Four client threads predict while the poller swaps 50 -> 100 -> 50 -> ...: no request fails."""
    name_checkpoints(run_copy, 50)
    model = ServedModel("digits", RunFolderSource(run_copy))
    manager = ModelManager([model], poll_wait_seconds=0.02)
    manager.start()
    stop, seen, failures = threading.Event(), set(), []

    def client():
        while not stop.is_set():
            try:
                seen.add(predict(model, images(1))[0])
            except Exception as error:  # noqa: BLE001 - any failure fails the test
                failures.append(error)

    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    for steps in [(50, 100), (100,), (50, 100)] * 2:
        name_checkpoints(run_copy, *steps)  # 100 then back to... the newest named
        threading.Event().wait(0.3)
    stop.set()
    for thread in threads:
        thread.join()
    manager.stop()
    assert failures == []
    assert seen == {50, 100}


def test_bad_inputs_are_request_errors(mlp_run):
    model = ServedModel("digits", RunFolderSource(mlp_run))
    model.poll()
    try:
        with model.acquire() as servable:
            _, signature = servable.signature("")
            for inputs, message in [({"images": np.zeros((2, 63))}, r"expected shape \[-1, 64\], got \[2, 63\]"),
                                    ({"images": np.array([[b"x"] * 64])}, "expected float32, got string"),
                                    ({"pixels": np.zeros((1, 64))}, r"missing \['images'\]"),
                                    ({"images": np.zeros((1, 64)), "x": np.zeros(1)}, r"unknown \['x'\]")]:
                with pytest.raises(RequestError, match=message):
                    servable.check_inputs(signature, inputs)
            with pytest.raises(NotFound, match='"nope" not found'):
                servable.signature("nope")
    finally:
        model.close()


def test_a_folder_without_a_run_config_is_refused(tmp_path):
    with pytest.raises(UserInputError, match="not a run folder"):
        RunFolderSource(tmp_path)


def test_try_run_declines_while_another_run_holds_the_version(mlp_run):
    model = ServedModel("digits", RunFolderSource(mlp_run))
    model.poll()
    try:
        with model.acquire() as servable:
            inputs = {"images": images(2)}
            assert servable.try_run("serving_default", inputs, ["classes"])["classes"].shape == (2,)
            with servable._lock:  # a run in progress on another thread
                assert servable.try_run("serving_default", inputs, ["classes"]) is None
    finally:
        model.close()


def test_the_server_heap_is_frozen_after_each_change_and_unloaded_versions_are_still_reclaimed(run_copy):
    """freeze=True (the server's setting) moves the loaded models out of the garbage collector's walks; a
    version unloaded later must still be reclaimed (its graph is full of reference cycles)."""
    import gc
    import weakref

    name_checkpoints(run_copy, 50)
    manager = ModelManager([ServedModel("digits", RunFolderSource(run_copy))], poll_wait_seconds=-1, freeze=True)
    try:
        manager.poll()
        assert gc.get_freeze_count() > 10_000  # the loaded model's objects
        with manager.get("digits").acquire() as servable:
            planned = next(cell.cell_contents for cell in servable.runner.__closure__
                           if isinstance(cell.cell_contents, PlannedRuns))
            old_graph = weakref.ref(planned.session.graph)
        del servable, planned
        name_checkpoints(run_copy, 50, 100)
        manager.poll()  # loads 100, unloads 50
        assert manager.get("digits").versions() == [100]
        assert old_graph() is None
    finally:
        manager.stop()
        gc.unfreeze()


@pytest.mark.parametrize("shape, reshapes, value, expected", [
    ((None, 64), False, np.zeros((3, 64), np.float32), (3, 64)),
    ((None, 64), False, np.zeros((3, 64), np.int64), (3, 64)),  # converted to float32
    ((2, 64), False, np.zeros((2, 64), np.float32), (2, 64)),
    ((2, 64), False, np.zeros((3, 64), np.float32), "expected shape [2, 64], got [3, 64]"),
    ((None, None, 4), False, np.zeros((1, 7, 4), np.float32), (1, 7, 4)),
    ((None, None, 4), False, np.zeros((1, 7, 5), np.float32), "expected shape [-1, -1, 4], got [1, 7, 5]"),
    ((), False, np.float32(2.0), ()),
    ((), False, np.zeros(2, np.float32), "expected shape [], got [2]"),
    ((None,), False, np.float32(2.0), "expected shape [-1], got []"),
    ((None, 8, 8, 1), True, np.zeros((2, 64), np.float32), (2, 8, 8, 1)),
    ((None, 8, 8, 1), True, np.zeros((2, 8, 8, 1), np.float32), (2, 8, 8, 1)),
    ((None, 8, 8, 1), True, np.zeros((2, 63), np.float32), "expected shape [-1, 8, 8, 1], got [2, 63]"),
    ((None, 8, 8, 1), False, np.zeros((2, 64), np.float32), "expected shape [-1, 8, 8, 1], got [2, 64]"),
])
def test_a_tensor_spec_takes_the_values_that_fit_and_names_the_shape_it_wanted(shape, reshapes, value, expected):
    from tftk.serving.servable import TensorSpec

    spec = TensorSpec("x:0", np.dtype(np.float32), shape, reshapes)
    if isinstance(expected, str):
        with pytest.raises(RequestError, match=re.escape(f"input 'x': {expected}")):
            spec.check("x", np.asarray(value))
    else:
        checked = spec.check("x", np.asarray(value))
        assert checked.shape == expected and checked.dtype == np.float32
