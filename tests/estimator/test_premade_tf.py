"""Premade estimators against TF 1.x's (tensorflow-estimator 2.15; TF1's own feature columns): the same
columns and data, trained from their zero initial values — same variables (names and values), metrics
(every key of the head), predictions; and TF's checkpoint evaluated by tftk gives TF's metrics.

DNN estimators are not in this table: TF's need Keras 2 layers, which TF 2.21 no longer has (see
test_premade.py for the DNN checked against the same network computed by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.estimator.oracle import run_estimator_case_in_tftk, run_estimator_cases_in_tf

pytestmark = pytest.mark.slow  # one TensorFlow process (~20 s) for the table

_DATA = {"x": np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2),
         "color": np.array(["red", "green", "blue", "red", "green", "green", "blue", "red"]),
         "size": np.array([0, 2, 1, 3, 1, 0, 2, 3]),
         "w": np.array([1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 0.5], np.float32),
         "binary": np.array([0, 1, 1, 0, 1, 1, 0, 1]),
         "letters": np.array(["a", "c", "b", "a", "c", "b", "a", "c"]),
         "target": np.array([0.5, -1.0, 2.0, 0.0, 1.5, -0.5, 1.0, 0.3], np.float32)}

_RUN = '''
import tempfile
data = {k: inputs[k] for k in ("x", "color", "size", "w")}
columns = [FC.numeric_column("x", shape=[2]),
           FC.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"]),
           FC.categorical_column_with_identity("size", num_buckets=4)]
labels = inputs[LABEL]
def train_input_fn():
    return tf.data.Dataset.from_tensor_slices((data, labels)).repeat().batch(3)
def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((data, labels)).batch(3)
est = ESTIMATOR
est.train(train_input_fn, steps=5)
metrics = est.evaluate(eval_input_fn)
preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(data).batch(8)))
outputs = {"metric/" + k: np.asarray(v) for k, v in metrics.items()}
outputs.update({"pred/" + k: np.stack([p[k] for p in preds]) for k in preds[0]})
outputs.update({"var/" + n: est.get_variable_value(n) for n in est.get_variable_names()
                if not n.endswith(("Ftrl", "Ftrl_1"))})
outputs = {k: v.astype(str) if v.dtype == object else v for k, v in outputs.items()}
outputs["model_dir"] = np.array(est.model_dir)
'''

ESTIMATORS = {
    "linear_binary": ("binary", "E.LinearClassifier(columns, model_dir=tempfile.mkdtemp())"),
    "linear_weighted_vocabulary": ("letters", "E.LinearClassifier(columns, n_classes=3, weight_column='w', "
                                              "label_vocabulary=['a', 'b', 'c'], model_dir=tempfile.mkdtemp())"),
    "linear_regressor_mean_combiner": ("target", "E.LinearRegressor(columns, sparse_combiner='mean', "
                                                 "model_dir=tempfile.mkdtemp())"),
    "baseline_binary": ("binary", "E.BaselineClassifier(model_dir=tempfile.mkdtemp())"),
    "baseline_regressor_weighted": ("target", "E.BaselineRegressor(weight_column='w', model_dir=tempfile.mkdtemp())"),
}
CASES = {name: (_RUN.replace("LABEL", repr(label)).replace("ESTIMATOR", make), _DATA)
         for name, (label, make) in ESTIMATORS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_estimator_cases_in_tf(CASES)


def _compare(got: dict, expected: dict, rtol: float = 2e-5) -> None:
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got[key], want, rtol=rtol, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got[key], want, err_msg=key)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_premade_trains_evaluates_and_predicts_as_tf(oracle, name):
    expected, got = oracle[name], run_estimator_case_in_tftk(*CASES[name])
    assert expected.error is None, expected.message
    assert got.error is None, got.message
    expected = {k: v for k, v in expected.outputs.items() if k != "model_dir"}
    _compare({k: v for k, v in got.outputs.items() if k != "model_dir"}, expected)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_tftk_evaluates_tf_checkpoint_to_tf_metrics(oracle, name):
    """Checkpoints are interchangeable: TF's (its partitioned linear weights saved as slices) restores here."""
    expected = oracle[name]
    assert expected.error is None, expected.message
    label, make = ESTIMATORS[name]
    source = _RUN.replace("LABEL", repr(label)).replace("ESTIMATOR", make.replace(
        "model_dir=tempfile.mkdtemp()", f"model_dir={str(expected.outputs['model_dir'])!r}"))
    source = source.replace("est.train(train_input_fn, steps=5)", "")
    got = run_estimator_case_in_tftk(source, _DATA)
    assert got.error is None, got.message
    metrics = {k: v for k, v in expected.outputs.items() if k.startswith("metric/")}
    _compare({k: v for k, v in got.outputs.items() if k.startswith("metric/")}, metrics)



@pytest.mark.parametrize("name", ["linear_binary", "linear_weighted_vocabulary", "baseline_regressor_weighted"])
def test_tf_evaluates_tftk_checkpoint_to_tftk_metrics(tmp_path, name):
    """The other way: TF's estimator restores tftk's checkpoint (unpartitioned weights into TF's
    partitioned variables) and evaluates it to tftk's metrics."""
    trained = run_estimator_case_in_tftk(CASES[name][0].replace("tempfile.mkdtemp()", repr(str(tmp_path))), _DATA)
    assert trained.error is None, trained.message
    source = CASES[name][0].replace("tempfile.mkdtemp()", repr(str(tmp_path))).replace(
        "est.train(train_input_fn, steps=5)", "")
    expected = run_estimator_cases_in_tf({name: (source, _DATA)})[name]
    assert expected.error is None, expected.message
    metrics = {k: v for k, v in trained.outputs.items() if k.startswith("metric/")}
    _compare({k: v for k, v in expected.outputs.items() if k.startswith("metric/")}, metrics)
