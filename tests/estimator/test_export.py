"""Estimator.export_saved_model: the exported SavedModel answers as predict() does — loaded by tftk,
by real TensorFlow, and served by `tftk serve` — and bad exports fail before writing anything."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tftk as tf
from tests.estimator.test_estimator import X, linear_model_fn, train_input_fn
from tests.tf_oracle import run_in_tf

E = tf.estimator


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = E.Estimator(linear_model_fn, model_dir=str(tmp_path_factory.mktemp("est") / "model"), params={"lr": 0.1})
    est.train(train_input_fn, steps=3)
    expected = np.array([p["y"][0] for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(8))], np.float32)
    return est, expected


def serialized_examples(rows: np.ndarray) -> list[bytes]:
    return [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row.tolist()))})).SerializeToString()
        for row in rows]


RECEIVERS = {
    "raw": (lambda: E.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 2])}),
            "x", lambda: X),
    "parsing": (lambda: E.export.build_parsing_serving_input_receiver_fn({"x": tf.FixedLenFeature([2], tf.float32)}),
                "examples", lambda: np.array(serialized_examples(X), dtype=object)),
}


@pytest.mark.parametrize("kind", sorted(RECEIVERS))
def test_exported_model_answers_as_predict_does(trained, tmp_path, kind):
    est, expected = trained
    make_fn, input_key, feed = RECEIVERS[kind]
    export_dir = est.export_saved_model(str(tmp_path), make_fn())
    assert isinstance(export_dir, bytes) and os.path.basename(export_dir).isdigit()
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(export_dir).decode()]  # no staging folder left
    with tf.Session(graph=tf.Graph()) as session:
        meta = tf.saved_model.loader.load(session, ["serve"], export_dir.decode())
        signature = meta.signature_def["serving_default"]
        assert sorted(signature.inputs) == [input_key] and sorted(signature.outputs) == ["row", "y"]
        got = session.run(signature.outputs["y"].name, {signature.inputs[input_key].name: feed()})
    np.testing.assert_allclose(got.ravel(), expected, rtol=1e-6)


def test_export_savedmodel_is_the_older_spelling(trained, tmp_path):
    est, _ = trained
    export_dir = est.export_savedmodel(str(tmp_path), RECEIVERS["raw"][0](), assets_extra={"notes/a.txt": __file__})
    assert os.path.exists(os.path.join(export_dir.decode(), "assets.extra", "notes", "a.txt"))


def _classifier_model_fn(features, mode):
    logits = tf.layers.dense(features["x"], 3, kernel_initializer=tf.ones_initializer())
    scores = tf.nn.softmax(logits)
    classes = tf.as_string(tf.argmax(logits, 1))
    outputs = {"serving_default": E.export.ClassificationOutput(scores=scores),
               "predict": E.export.PredictOutput({"scores": scores, "classes": classes})}
    return E.EstimatorSpec(mode, predictions={"scores": scores}, export_outputs=outputs,
                           loss=tf.constant(0.0), train_op=tf.assign_add(tf.train.get_global_step(), 1))


@pytest.mark.parametrize("kind, signatures", [("parsing", {"serving_default": "tensorflow/serving/classify",
                                                            "predict": "tensorflow/serving/predict"}),
                                               ("raw", {"predict": "tensorflow/serving/predict"})])
def test_classify_signature_only_for_serialized_examples(tmp_path, kind, signatures):
    est = E.Estimator(_classifier_model_fn, model_dir=str(tmp_path / "model"))
    est.train(lambda: {"x": tf.constant(X)}, steps=1)
    export_dir = est.export_saved_model(str(tmp_path / "export"), RECEIVERS[kind][0]())
    with tf.Session(graph=tf.Graph()) as session:
        meta = tf.saved_model.loader.load(session, ["serve"], export_dir.decode())
    assert {name: s.method_name for name, s in meta.signature_def.items()} == signatures


def _two_outputs_model_fn(features, mode):
    y = features["x"] * 2.0
    return E.EstimatorSpec(mode, predictions=y, export_outputs={"a": E.export.PredictOutput(y),
                                                                 "b": E.export.PredictOutput(y)})


@pytest.mark.parametrize("model_fn, receiver_fn, message", [
    (linear_model_fn, RECEIVERS["raw"][0], "Couldn't find trained model"),
    (None, lambda: (lambda: {"x": tf.placeholder(tf.float32)}), "must return a ServingInputReceiver"),
    (None, lambda: None, "serving_input_receiver_fn must be a function"),
    (_two_outputs_model_fn, RECEIVERS["raw"][0], "none of them is the default"),
])
def test_bad_exports_fail_and_write_nothing(trained, tmp_path, model_fn, receiver_fn, message):
    est = trained[0]
    if model_fn is not None:
        est = E.Estimator(model_fn, model_dir=str(tmp_path / "model"))
        if model_fn is _two_outputs_model_fn:  # a checkpoint to export from
            _checkpoint_of_initial_values(est)
    with pytest.raises(ValueError, match=message):
        est.export_saved_model(str(tmp_path / "export"), receiver_fn())
    assert not os.path.exists(tmp_path / "export") or os.listdir(tmp_path / "export") == []


def _checkpoint_of_initial_values(est):
    with tf.Graph().as_default():
        tf.train.create_global_step()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            tf.train.Saver().save(session, os.path.join(est.model_dir, "model.ckpt"), global_step=0)


@pytest.mark.parametrize("features, message", [
    ({"x": [1.0]}, "feature 'x' must be a Tensor or SparseTensor"),
    ({1: tf.constant(1.0)}, "feature keys must be strings"),
    ({}, "features must not be empty"),
])
def test_serving_input_receiver_checks_its_tensors(features, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            E.export.ServingInputReceiver(features, tf.placeholder(tf.float32))


def test_a_single_receiver_tensor_is_named_input_and_a_single_feature_feature():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        receiver = E.export.ServingInputReceiver(x, x)
        assert list(receiver.features) == ["feature"] and list(receiver.receiver_tensors) == ["input"]


@pytest.mark.slow
def test_real_tensorflow_loads_the_export_and_agrees(trained, tmp_path):
    est, expected = trained
    export_dir = est.export_saved_model(str(tmp_path), RECEIVERS["parsing"][0]()).decode()
    source = '''
with tf.Session() as session:
    meta = tf.saved_model.loader.load(session, ["serve"], str(inputs["dir"]))
    signature = meta.signature_def["serving_default"]
    outputs = {"y": session.run(signature.outputs["y"].name,
                                {signature.inputs["examples"].name: list(inputs["examples"])})}
'''
    result = run_in_tf({"load": (source, {"dir": np.array(export_dir), "examples": np.array(serialized_examples(X))})})
    assert result["load"].error is None, result["load"].message
    np.testing.assert_allclose(result["load"].outputs["y"].ravel(), expected, rtol=1e-6)


@pytest.mark.slow
def test_tftk_serve_serves_the_exported_estimator(trained, tmp_path):
    pytest.importorskip("httptools", reason="tftk serve needs the serve extra: pip install -e '.[serve]'")
    from tests.serving.conftest import ServerProcess

    est, expected = trained
    est.export_saved_model(str(tmp_path / "linear"), RECEIVERS["raw"][0]())
    server = ServerProcess("--model-base-path", str(tmp_path / "linear"), "--model-name", "linear")
    try:
        status, answer = server.request("POST", "/v1/models/linear:predict", {"instances": [{"x": r} for r in X.tolist()]})
        assert status == 200, answer
        np.testing.assert_allclose([p["y"][0] for p in answer["predictions"]], expected, rtol=1e-5)
    finally:
        assert server.stop() == 0
