"""Premade estimators in tftk: the DNN against the same network trained by hand in real TensorFlow
from tftk's initial checkpoint (TF's DNN estimators need Keras 2, gone from TF 2.21); exports that
serve the Classify/Regress/Predict signatures; and one clear error for each bad input."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import run_in_tf

E, FC = tf.estimator, tf.feature_column
X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
BINARY = np.array([0, 1, 1, 0, 1, 1, 0, 1])
TARGET = np.array([0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 1.0, 0.3], np.float32)
COLUMNS = [FC.numeric_column("x", shape=[2])]


def _input_fn(labels, repeat=True):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": X}, labels))
        return (data.repeat() if repeat else data).batch(4)
    return input_fn


_BY_HAND = '''
values = {k[5:]: v for k, v in inputs.items() if k.startswith("init/")}
x, labels = inputs["x"], inputs["labels"]
names = ["dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias", "dnn/logits/kernel", "dnn/logits/bias"]
variables = {n: tf.Variable(values[n], name=n) for n in names}
xb, yb = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32, [None, 1])
hidden = tf.nn.relu(tf.matmul(xb, variables[names[0]]) + variables[names[1]])
logits = tf.matmul(hidden, variables[names[2]]) + variables[names[3]]
per_example = (tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=logits) if KIND == "classifier"
               else tf.squared_difference(logits, yb))
loss = tf.reduce_sum(per_example)
step = tf.train.AdagradOptimizer(0.05).minimize(loss)
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for i in range(STEPS):
        rows = slice((i % 2) * 4, (i % 2) * 4 + 4)
        session.run(step, {xb: x[rows], yb: labels[rows].reshape(-1, 1)})
    outputs = session.run(variables)
    outputs["logits"] = session.run(logits, {xb: x})
'''


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_dnn_trains_as_the_same_network_by_hand_in_tensorflow(tmp_path, kind):
    labels = BINARY if kind == "classifier" else TARGET
    make = E.DNNClassifier if kind == "classifier" else E.DNNRegressor
    est = make([3], COLUMNS, model_dir=str(tmp_path), config=E.RunConfig(tf_random_seed=5))
    est.train(_input_fn(labels), steps=4)
    first = os.path.join(str(tmp_path), "model.ckpt-0")
    inputs = {"init/" + name: tf.train.load_variable(first, name) for name, _ in tf.train.list_variables(first)
              if name.startswith("dnn/") and "Adagrad" not in name}
    assert len(inputs) == 4
    source = _BY_HAND.replace("KIND", repr(kind)).replace("STEPS", "4")
    result = run_in_tf({"dnn": (source, {**inputs, "x": X, "labels": labels.astype(np.float32)})})["dnn"]
    assert result.error is None, result.message
    for name in ("dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias", "dnn/logits/kernel", "dnn/logits/bias"):
        np.testing.assert_allclose(est.get_variable_value(name), result.outputs[name], rtol=2e-5, atol=1e-6,
                                   err_msg=name)
    key = "logits" if kind == "classifier" else "predictions"
    got = np.stack([p[key] for p in est.predict(_input_fn(labels, repeat=False))])
    np.testing.assert_allclose(got, result.outputs["logits"], rtol=2e-5, atol=1e-6)


def test_dnn_linear_combined_trains_both_parts_with_their_optimizers(tmp_path):
    est = E.DNNLinearCombinedClassifier(linear_feature_columns=COLUMNS, dnn_feature_columns=COLUMNS,
                                        dnn_hidden_units=[4, 2], model_dir=str(tmp_path))
    est.train(_input_fn(BINARY), steps=3)
    names = est.get_variable_names()
    assert [n for n in names if n.endswith(("Adagrad", "Ftrl"))] == [
        "dnn/hiddenlayer_0/bias/Adagrad", "dnn/hiddenlayer_0/kernel/Adagrad", "dnn/hiddenlayer_1/bias/Adagrad",
        "dnn/hiddenlayer_1/kernel/Adagrad", "dnn/logits/bias/Adagrad", "dnn/logits/kernel/Adagrad",
        "linear/linear_model/bias_weights/Ftrl", "linear/linear_model/x/weights/Ftrl"]
    assert est.get_variable_value("global_step") == 3  # one step per training step, not one per optimizer
    assert np.any(est.get_variable_value("linear/linear_model/x/weights") != 0)
    logits = [p["logits"][0] for p in est.predict(_input_fn(BINARY, repeat=False))]
    results = est.evaluate(_input_fn(BINARY, repeat=False))
    assert results["prediction/mean"] == pytest.approx(np.mean(1 / (1 + np.exp(-np.array(logits)))), rel=1e-5)


@pytest.mark.parametrize("make, labels, signatures", [
    (lambda d: E.LinearClassifier(COLUMNS, model_dir=d), BINARY, {
        "serving_default": "classify", "classification": "classify", "regression": "regress", "predict": "predict"}),
    (lambda d: E.LinearClassifier(COLUMNS, n_classes=3, model_dir=d), np.arange(8) % 3, {
        "serving_default": "classify", "classification": "classify", "predict": "predict"}),
    (lambda d: E.DNNRegressor([2], COLUMNS, model_dir=d), TARGET, {
        "serving_default": "regress", "regression": "regress", "predict": "predict"}),
], ids=["binary", "three classes", "regressor"])
def test_premade_exports_tf_s_signatures(tmp_path, make, labels, signatures):
    est = make(str(tmp_path / "model"))
    est.train(_input_fn(labels), steps=1)
    receiver = E.export.build_parsing_serving_input_receiver_fn(FC.make_parse_example_spec(COLUMNS))
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver).decode()
    with tf.Session(graph=tf.Graph()) as session:
        meta = tf.saved_model.loader.load(session, ["serve"], export_dir)
        assert {k: v.method_name.rpartition("/")[2] for k, v in meta.signature_def.items()} == signatures
        example = tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=X[1].tolist()))})).SerializeToString()
        signature = meta.signature_def["predict"]
        served = session.run({k: v.name for k, v in signature.outputs.items()},
                             {signature.inputs["examples"].name: [example]})
    expected = next(est.predict(lambda: {"x": tf.constant(X[1:2])}))
    assert sorted(served) == sorted(expected)
    for key, value in expected.items():
        assert np.array_equal(served[key][0], value) if value.dtype == object else \
            np.allclose(served[key][0], value, rtol=1e-6), key


BAD = [
    ("feature missing", lambda d: E.LinearClassifier([FC.numeric_column("age")], model_dir=d), _input_fn(BINARY),
     ValueError, "Feature 'age' is not in the features dictionary (its keys: ['x'])"),
    ("label out of range", lambda d: E.LinearClassifier(COLUMNS, model_dir=d), _input_fn(BINARY * 2),
     tf.errors.InvalidArgumentError, "Labels must <= n_classes - 1 = 1"),
    ("label shape", lambda d: E.LinearClassifier(COLUMNS, model_dir=d),
     lambda: ({"x": tf.constant(X)}, tf.constant(np.zeros((8, 3)))), ValueError,
     "Mismatched label shape. Classifier configured with n_classes=2"),
    ("string labels without vocabulary", lambda d: E.LinearClassifier(COLUMNS, model_dir=d),
     lambda: ({"x": tf.constant(X)}, tf.constant(np.array(["a"] * 8))), ValueError, "give the estimator a label_vocabulary"),
    ("label not in vocabulary", lambda d: E.LinearClassifier(COLUMNS, model_dir=d, label_vocabulary=["a", "b"]),
     lambda: ({"x": tf.constant(X)}, tf.constant(np.array(["a", "z"] * 4))), tf.errors.InvalidArgumentError,
     "Labels must be in label_vocabulary"),
    ("no labels", lambda d: E.LinearRegressor(COLUMNS, model_dir=d), lambda: {"x": tf.constant(X)}, ValueError,
     "You must provide a labels Tensor"),
    ("weight column missing", lambda d: E.LinearRegressor(COLUMNS, weight_column="w", model_dir=d),
     _input_fn(TARGET), KeyError, "weight_column 'w' is not in the features (features: ['x'])"),
    ("unknown optimizer", lambda d: E.LinearClassifier(COLUMNS, optimizer="Nadam", model_dir=d), _input_fn(BINARY),
     ValueError, "Unsupported optimizer name: Nadam"),
    ("features not a dict", lambda d: E.DNNRegressor([2], COLUMNS, model_dir=d),
     lambda: (tf.constant(X), tf.constant(TARGET)), ValueError, "features should be a dictionary"),
]


@pytest.mark.parametrize("make, input_fn, error, message", [row[1:] for row in BAD], ids=[row[0] for row in BAD])
def test_bad_input_fails_with_one_clear_error(tmp_path, make, input_fn, error, message):
    est = make(str(tmp_path))
    with pytest.raises(error) as caught:
        est.train(input_fn, steps=1)
    assert message in str(caught.value)


@pytest.mark.parametrize("build, message", [
    (lambda: E.LinearClassifier([]), "feature_columns must not be empty"),
    (lambda: E.LinearClassifier(COLUMNS, n_classes=1), "n_classes must be > 2"),
    (lambda: E.LinearClassifier(COLUMNS, n_classes=3, label_vocabulary=["a"]), "label_vocabulary must be a list of 3"),
    (lambda: E.DNNClassifier([], COLUMNS), "hidden_units must be a non-empty list"),
    (lambda: E.DNNClassifier([2], COLUMNS, batch_norm=True), "batch_norm=True) is not supported"),
    (lambda: E.DNNLinearCombinedClassifier(), "Either linear_feature_columns or dnn_feature_columns"),
    (lambda: E.LinearRegressor(COLUMNS, label_dimension=0), "Invalid label_dimension 0"),
    (lambda: E.LinearClassifier(COLUMNS, sparse_combiner="max"), "sparse_combiner must be one of"),
])
def test_bad_construction_fails_with_one_clear_error(build, message):
    with pytest.raises(ValueError) as caught:
        build()
    assert message in str(caught.value)
