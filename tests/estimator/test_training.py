"""train_and_evaluate (evaluations per checkpoint, exporters) and the numpy / pandas input_fns."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tftk as tf
from tests.estimator.test_estimator import X, Y, eval_input_fn, linear_model_fn, train_input_fn

E = tf.estimator


def batches(input_fn):
    """Every batch input_fn gives, run by hand until its data ends."""
    out = []
    with tf.Graph().as_default():
        tensors = input_fn()
        with tf.Session() as session:
            try:
                while True:
                    out.append(session.run(tensors))
            except tf.errors.OutOfRangeError:
                pass
    return out


def test_numpy_input_fn_gives_ordered_batches_across_epochs():
    got = batches(E.inputs.numpy_input_fn({"a": np.arange(5), "b": np.arange(5) * 10}, np.arange(5) + 100,
                                          batch_size=2, num_epochs=2, shuffle=False))
    assert [features["a"].tolist() for features, _ in got] == [[0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    assert [labels.tolist() for _, labels in got][-1] == [103, 104]
    assert [features["b"].tolist() for features, _ in got][0] == [0, 10]


def test_numpy_input_fn_shuffles_within_the_data_and_takes_an_array():
    got = batches(E.inputs.numpy_input_fn(np.arange(20.0), batch_size=7, shuffle=True))
    assert [len(b) for b in got] == [7, 7, 6]
    values = np.concatenate(got)
    assert sorted(values.tolist()) == list(range(20)) and values.tolist() != list(range(20))


@pytest.mark.parametrize("kwargs, message", [
    ({"x": {"a": X}, "y": Y}, "shuffle must be provided and explicitly set as boolean"),
    ({"x": {"a": X}, "y": Y[:3], "shuffle": False}, "x['a'] has 8, y has 3"),
    ({"x": {"a": X}, "y": {"a": Y}, "shuffle": False}, "1 duplicate keys are found in both x and y: ['a']"),
    ({"x": {"a": X}, "batch_size": 0, "shuffle": False}, "batch_size must be a positive int"),
    ({"x": {"a": X}, "num_epochs": 0, "shuffle": False}, "num_epochs must be None"),
    ({"x": {"a": 1.0}, "shuffle": False}, "x['a'] must have a first (example) dimension"),
])
def test_numpy_input_fn_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError) as caught:
        E.inputs.numpy_input_fn(**kwargs)
    assert message in str(caught.value)


def test_pandas_input_fn_feeds_columns_and_checks_the_index():
    pd = pytest.importorskip("pandas", reason="pandas is optional: pip install pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4, 5, 6]}, index=[7, 8, 9])
    got = batches(E.inputs.pandas_input_fn(frame, pd.Series([0, 1, 0], index=[7, 8, 9]), batch_size=2, shuffle=False))
    assert [f["a"].tolist() for f, _ in got] == [[1.0, 2.0], [3.0]] and got[1][1].tolist() == [0]
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        E.inputs.pandas_input_fn(frame, pd.Series([0, 1, 0]), shuffle=False)
    with pytest.raises(ValueError, match="Cannot use name 'a' for target column"):
        E.inputs.pandas_input_fn(frame, pd.Series([0, 1, 0], index=[7, 8, 9]), shuffle=False, target_column="a")


def _raw_receiver():
    return E.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 2])})


def test_train_and_evaluate_evaluates_each_checkpoint_and_exports(tmp_path):
    est = E.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1},
                      config=E.RunConfig(save_checkpoints_steps=2))
    latest = E.LatestExporter("latest", _raw_receiver(), exports_to_keep=1)
    final = E.FinalExporter("final", _raw_receiver())
    metrics, exports = E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=5),
                                            E.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, name="val",
                                                       exporters=[latest, final]))
    assert metrics["global_step"] == 5
    assert metrics == pytest.approx(est.evaluate(eval_input_fn), rel=1e-6)
    assert len(exports) == 4  # latest at steps 2, 4, 5; final at 5
    assert len(os.listdir(tmp_path / "export" / "latest")) == 1 and len(os.listdir(tmp_path / "export" / "final")) == 1
    assert os.path.isdir(tmp_path / "eval_val")
    # a second call with the same max_steps trains nothing and evaluates nothing
    assert E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=5), E.EvalSpec(eval_input_fn)) == (None, [])


@pytest.mark.parametrize("build, error, message", [
    (lambda: E.TrainSpec(train_input_fn, max_steps=0), ValueError, "max_steps > 0, given: 0"),
    (lambda: E.TrainSpec(None), TypeError, "input_fn must be callable"),
    (lambda: E.EvalSpec(eval_input_fn, steps=0), ValueError, "steps > 0, given: 0"),
    (lambda: E.EvalSpec(eval_input_fn, throttle_secs=-1), ValueError, "throttle_secs >= 0"),
    (lambda: E.EvalSpec(eval_input_fn, exporters=[E.FinalExporter("a", _raw_receiver()),
                                                 E.LatestExporter("a", _raw_receiver())]),
     ValueError, "distinct names"),
    (lambda: E.EvalSpec(eval_input_fn, exporters=["a"]), TypeError, "must be Exporter instances"),
    (lambda: E.LatestExporter("a", _raw_receiver(), exports_to_keep=0), ValueError, "exports_to_keep must be positive"),
])
def test_bad_specs_fail_with_one_clear_error(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_train_and_evaluate_needs_checkpoints(tmp_path):
    est = E.Estimator(linear_model_fn, model_dir=str(tmp_path),
                      config=E.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None))
    with pytest.raises(ValueError, match="set RunConfig.save_checkpoints_steps"):
        E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=2), E.EvalSpec(eval_input_fn))
    assert not os.listdir(tmp_path)


@pytest.mark.slow  # three train_and_evaluate exports (~3 s)
def test_best_exporter_exports_improvements_and_remembers_the_best_across_runs(tmp_path):
    est = E.Estimator(linear_model_fn, model_dir=str(tmp_path), params={"lr": 0.1},
                      config=E.RunConfig(save_checkpoints_steps=2))
    best = E.BestExporter(serving_input_receiver_fn=_raw_receiver(), exports_to_keep=2)
    never = E.BestExporter("never", _raw_receiver(), compare_fn=lambda best_eval_result, current_eval_result: False)
    spec = E.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, exporters=[best, never])
    _, exports = E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=5), spec)
    # evaluations at steps 2, 4, 5 with a falling loss: 'best_exporter' exports each, 'never' only the first
    exporters = [os.path.basename(os.path.dirname(e)) for e in exports]
    assert exporters.count(b"best_exporter") == 3 and exporters.count(b"never") == 1
    assert len(os.listdir(tmp_path / "export" / "best_exporter")) == 2
    # a new exporter (a restarted job) reads the best so far from model_dir/eval: 'never' exports nothing now
    again = E.BestExporter("never", _raw_receiver(), compare_fn=lambda best_eval_result, current_eval_result: False)
    _, exports = E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=6),
                                      E.EvalSpec(eval_input_fn, steps=None, throttle_secs=0, exporters=[again]))
    assert exports == []


@pytest.mark.parametrize("build, message", [
    (lambda: E.BestExporter(), "`serving_input_receiver_fn` must be defined"),
    (lambda: E.BestExporter(serving_input_receiver_fn=_raw_receiver(), compare_fn=1), "`compare_fn` must be a function"),
])
def test_best_exporter_checks_its_arguments(build, message):
    with pytest.raises(ValueError, match=message):
        build()
