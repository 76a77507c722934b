"""Serving TF Serving's layout: numbered SavedModel folders (TensorFlow-written fixtures of tests/formats)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from tftk.serving.saved_model_source import SavedModelSource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


@pytest.fixture()
def base_path(tmp_path):
    """base/1 = TensorFlow's CNN SavedModel; base/notes and base/7 (no saved_model.pb yet) are not versions."""
    base = tmp_path / "cnn"
    shutil.copytree(FIXTURES / "cnn" / "saved_model", base / "1")
    (base / "notes").mkdir()
    shutil.copytree(FIXTURES / "cnn" / "saved_model" / "variables", base / "7" / "variables")
    return base


def test_versions_are_complete_numbered_folders(base_path):
    source = SavedModelSource(base_path)
    assert list(source.versions()) == [1]
    (base_path / "8" / "variables").mkdir(parents=True)
    shutil.copy(FIXTURES / "cnn" / "saved_model" / "saved_model.pb", base_path / "8")  # variables not written yet
    assert list(source.versions()) == [1]


def test_served_savedmodel_answers_as_tensorflow_did_and_new_versions_are_picked_up(serve, base_path):
    values = np.load(FIXTURES / "cnn" / "values.npz")
    server = serve("--model-base-path", str(base_path), "--model-name", "cnn",
                   "--file-system-poll-wait-seconds", "0.2", grpc=True)
    status, answer = server.request("POST", "/v1/models/cnn:predict", {"inputs": {"x": values["x_eval"].tolist()}})
    assert status == 200, answer
    assert answer["model_spec"]["version"] == "1"
    np.testing.assert_allclose(answer["outputs"], values["eval_output"], atol=1e-5)
    metadata = server.request("GET", "/v1/models/cnn/metadata")[1]["metadata"]["signature_def"]["signature_def"]
    assert metadata["serving_default"]["outputs"]["y"]["name"] == "output:0"
    staging = base_path / ".2.tmp"  # a writer finishes a folder, then renames it into place
    shutil.copytree(FIXTURES / "cnn" / "saved_model", staging)
    os.rename(staging, base_path / "2")
    server.wait_for(lambda: server.request("GET", "/v1/models/cnn")[1]["model_version_status"][-1]
                    == {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}},
                    what="version 2")
    status, answer = server.request("POST", "/v1/models/cnn:predict", {"instances": values["x_eval"][:2].tolist()})
    assert status == 200 and answer["model_spec"]["version"] == "2"
    status, answer = server.request("POST", "/v1/models/cnn:predict", {"instances": [[[[0.0]] * 5] * 6]})
    assert status == 400 and "expected shape [-1, 6, 6, 1], got [1, 6, 5, 1]" in answer["error"]


def test_tf2_saved_model_serves_its_signature_but_not_its_init_op(serve, tmp_path):
    """A TF 2 `tf.saved_model.save` model (function-based saver, lookup table filled by the init op)."""
    values = np.load(FIXTURES / "tf2_module" / "values.npz")
    shutil.copytree(FIXTURES / "tf2_module", tmp_path / "m" / "3")
    server = serve("--model-base-path", str(tmp_path / "m"), "--model-name", "m")
    inputs = {"x": values["in_x"].tolist(), "ids": values["in_ids"].tolist(),
              "words": [w.decode() for w in values["in_words"]]}
    status, answer = server.request("POST", "/v1/models/m:predict", {"inputs": inputs})
    assert status == 200, answer
    np.testing.assert_allclose(answer["outputs"]["scores"], values["out_scores"], rtol=1e-6)
    assert answer["outputs"]["shifted"] == values["out_shifted"].tolist()
    assert answer["outputs"]["word_ids"] == values["out_word_ids"].tolist()
    metadata = server.request("GET", "/v1/models/m/metadata")[1]["metadata"]["signature_def"]["signature_def"]
    assert sorted(metadata) == ["serving_default"]
