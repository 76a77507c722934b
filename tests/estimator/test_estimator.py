"""tf.estimator.Estimator in tftk alone: restore-or-init across train calls, checkpoints, summaries
read back with summary_iterator, evaluate/predict options, and one clear error for each bad input.
(Value-for-value agreement with TF 1.x is in test_estimator_tf.py.)"""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import tftk as tf

E = tf.estimator
X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2)
Y = (X @ np.array([[1.0], [-2.0]], np.float32) + 0.5).astype(np.float32)


def linear_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([[0.5], [-0.3]]))
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    y = tf.matmul(features["x"], w) + b
    if mode == E.ModeKeys.PREDICT:
        return E.EstimatorSpec(mode, predictions={"y": y, "row": tf.reduce_sum(features["x"], 1)})
    loss = tf.reduce_mean(tf.square(y - labels))
    tf.summary.scalar("my_loss", loss)
    train_op = tf.train.GradientDescentOptimizer(params.get("lr", 0.1)).minimize(
        loss, global_step=tf.train.get_global_step())
    return E.EstimatorSpec(mode, loss=loss, train_op=train_op,
                           eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, y)})


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(4)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(3)


def make(tmp_path, **config):
    return E.Estimator(linear_model_fn, model_dir=str(tmp_path / "model"), params={"lr": 0.1},
                       config=E.RunConfig(**config) if config else None)


def hand_trained_w(steps: int, lr: float = 0.1) -> np.ndarray:
    """Plain numpy gradient descent on the same batches, as the reference for the trained weights."""
    w, b = np.array([[0.5], [-0.3]]), np.zeros(1)
    for step in range(steps):
        rows = slice((step % 2) * 4, (step % 2) * 4 + 4)
        err = X[rows] @ w + b - Y[rows]
        w, b = w - lr * 2 * X[rows].T @ err / 4, b - lr * 2 * err.mean(0)
    return w


def test_second_train_call_goes_on_from_the_checkpoint(tmp_path):
    est = make(tmp_path)
    est.train(train_input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    est.train(train_input_fn, steps=2)  # restores step 3 (the data restarts, as in TF)
    assert est.get_variable_value("global_step") == 5
    est.train(train_input_fn, max_steps=5)  # already there: no step
    assert est.get_variable_value("global_step") == 5
    est.train(train_input_fn, max_steps=7)
    assert est.get_variable_value("global_step") == 7
    assert est.latest_checkpoint().endswith("model.ckpt-7")
    assert est.get_variable_names() == ["b", "global_step", "w"]


def test_trained_weights_match_plain_gradient_descent(tmp_path):
    est = make(tmp_path)
    est.train(train_input_fn, steps=4)
    np.testing.assert_allclose(est.get_variable_value("w"), hand_trained_w(4), rtol=1e-5)


def test_training_stops_when_the_input_runs_out(tmp_path):
    est = make(tmp_path)
    est.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(3))  # 8 rows: 3 batches
    assert est.get_variable_value("global_step") == 3


@pytest.mark.parametrize("config, kept", [
    ({"save_checkpoints_steps": 2, "keep_checkpoint_max": 10}, ["model.ckpt-0", "model.ckpt-2", "model.ckpt-4",
                                                               "model.ckpt-5"]),
    ({"save_checkpoints_steps": 2, "keep_checkpoint_max": 2}, ["model.ckpt-4", "model.ckpt-5"]),
    ({"save_checkpoints_secs": 3600}, ["model.ckpt-0", "model.ckpt-5"]),
    ({"save_checkpoints_steps": None, "save_checkpoints_secs": None}, None),
])
def test_checkpoints_follow_the_run_config(tmp_path, config, kept):
    est = make(tmp_path, **config)
    est.train(train_input_fn, steps=5)
    state = tf.train.get_checkpoint_state(est.model_dir)
    assert (None if state is None else [os.path.basename(p) for p in state.all_model_checkpoint_paths]) == kept


def _scalars(folder):
    found = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("events.out.tfevents"):
            for event in tf.train.summary_iterator(os.path.join(folder, name)):
                found += [(v.tag, event.step, v.simple_value) for v in event.summary.value if v.HasField("simple_value")]
    return found


def test_a_model_fn_scalar_summary_shows_under_model_dir(tmp_path):
    est = make(tmp_path, save_summary_steps=1, log_step_count_steps=1000)
    est.train(train_input_fn, steps=3)
    train = _scalars(est.model_dir)
    mine = [(step, value) for tag, step, value in train if tag == "my_loss"]
    assert [step for step, _ in mine] == [1, 2, 3]  # written after each step, at the new global step
    assert [(step, value) for tag, step, value in train if tag == "loss"] == mine  # Estimator's own loss summary
    first_batch_loss = np.mean((X[:4] @ np.array([[0.5], [-0.3]]) - Y[:4]) ** 2)
    assert mine[0][1] == pytest.approx(first_batch_loss, rel=1e-6)
    results = est.evaluate(eval_input_fn, name="holdout")
    evaluation = _scalars(os.path.join(est.model_dir, "eval_holdout"))
    assert sorted(tag for tag, _, _ in evaluation) == ["loss", "mae"]
    assert all(step == 3 for _, step, _ in evaluation)
    assert dict((tag, value) for tag, _, value in evaluation) == pytest.approx(
        {"loss": results["loss"], "mae": results["mae"]}, rel=1e-6)


def test_evaluate_reports_loss_metrics_and_global_step(tmp_path):
    est = make(tmp_path)
    est.train(train_input_fn, steps=2)
    results = est.evaluate(eval_input_fn)
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    errors = X @ w + b - Y
    assert sorted(results) == ["global_step", "loss", "mae"]
    assert results["global_step"] == 2
    assert results["mae"] == pytest.approx(np.abs(errors).mean(), rel=1e-5)
    assert results["loss"] == pytest.approx(np.mean([(errors[:4] ** 2).mean(), (errors[4:] ** 2).mean()]), rel=1e-5)
    assert est.evaluate(eval_input_fn, steps=1)["mae"] == pytest.approx(np.abs(errors[:4]).mean(), rel=1e-5)


def test_evaluate_and_predict_without_a_checkpoint_use_the_initial_values(tmp_path):
    est = make(tmp_path)
    first = next(est.predict(predict_input_fn))
    assert first["y"] == pytest.approx(X[0] @ np.array([0.5, -0.3]), rel=1e-6)
    assert est.latest_checkpoint() is None


@pytest.mark.parametrize("kwargs, check", [
    ({}, lambda out: len(out) == 8 and sorted(out[0]) == ["row", "y"] and out[0]["y"].shape == (1,)),
    ({"predict_keys": ["row"]}, lambda out: len(out) == 8 and sorted(out[0]) == ["row"]),
    ({"predict_keys": "y"}, lambda out: sorted(out[0]) == ["y"]),
    ({"yield_single_examples": False}, lambda out: [len(b["y"]) for b in out] == [3, 3, 2]),
])
def test_predict_options(tmp_path, kwargs, check):
    est = make(tmp_path)
    est.train(train_input_fn, steps=1)
    out = list(est.predict(predict_input_fn, **kwargs))
    assert check(out)
    if "row" in out[0]:
        np.testing.assert_allclose(np.concatenate([np.atleast_1d(p["row"]) for p in out]), X.sum(1), rtol=1e-6)


def test_predict_of_a_single_tensor_yields_its_rows(tmp_path):
    def model_fn(features, mode):
        return E.EstimatorSpec(mode, predictions=features * 2.0, loss=tf.constant(0.0), train_op=tf.no_op())
    est = E.Estimator(model_fn, model_dir=str(tmp_path))
    out = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(X).batch(5)))
    np.testing.assert_allclose(np.stack(out), X * 2)


def test_input_fn_and_model_fn_receive_params_mode_and_config(tmp_path):
    seen = {}

    def input_fn(params, mode, config):
        seen["input"] = (params["tag"], mode, config.model_dir)
        return {"x": tf.constant(X)}, tf.constant(Y)

    def model_fn(features, labels, mode, params, config):
        seen["model"] = (params["tag"], mode, config.tf_random_seed)
        return linear_model_fn(features, labels, mode, {})

    est = E.Estimator(model_fn, model_dir=str(tmp_path), params={"tag": "p"}, config=E.RunConfig(tf_random_seed=3))
    est.train(input_fn, steps=1)
    assert seen == {"input": ("p", "train", str(tmp_path)), "model": ("p", "train", 3)}


def test_hooks_run_around_each_step(tmp_path, caplog):
    class Count(tf.train.SessionRunHook):
        def __init__(self):
            self.runs = 0

        def after_run(self, run_context, run_values):
            self.runs += 1

    count = Count()
    est = make(tmp_path, log_step_count_steps=2)
    with caplog.at_level(logging.INFO):
        est.train(train_input_fn, hooks=[count, tf.train.StopAtStepHook(last_step=3)], steps=10)
    assert count.runs == 3 and est.get_variable_value("global_step") == 3
    assert any(r.getMessage().startswith("loss = ") for r in caplog.records)


def test_warm_start_applies_only_without_a_checkpoint(tmp_path):
    first = make(tmp_path / "a")
    first.train(train_input_fn, steps=3)
    second = E.Estimator(linear_model_fn, model_dir=str(tmp_path / "b"), params={"lr": 0.1},
                         warm_start_from=first.model_dir)
    y_first = [p["y"] for p in first.predict(predict_input_fn)]
    np.testing.assert_allclose([p["y"] for p in second.predict(predict_input_fn)], y_first)
    second.train(train_input_fn, steps=1)
    second.train(train_input_fn, steps=1)  # restored from its own checkpoint, not warm-started again
    assert second.get_variable_value("global_step") == 2


def _spec_model_fn(spec):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [2, 1])
        y = tf.matmul(features["x"], w)
        loss = tf.reduce_mean(tf.square(y - labels))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
        return spec(mode, y, loss, train_op)
    return model_fn


BAD_SPECS = [
    ("no loss", lambda m, y, loss, op: E.EstimatorSpec(m, train_op=op), ValueError, "loss is required in TRAIN"),
    ("no train_op", lambda m, y, loss, op: E.EstimatorSpec(m, loss=loss), ValueError, "train_op is required"),
    ("vector loss", lambda m, y, loss, op: E.EstimatorSpec(m, loss=y, train_op=op), ValueError,
     "loss must be a scalar, given a Tensor of shape (8, 1)"),
    ("python loss", lambda m, y, loss, op: E.EstimatorSpec(m, loss=1.0, train_op=op), TypeError,
     "loss must be a scalar Tensor, given: 1.0"),
    ("string train_op", lambda m, y, loss, op: E.EstimatorSpec(m, loss=loss, train_op="go"), TypeError,
     "train_op must be an Operation or a Tensor"),
    ("metric not a pair", lambda m, y, loss, op: E.EstimatorSpec(m, loss=loss, train_op=op, eval_metric_ops={"m": y}),
     TypeError, "eval_metric_ops['m'] must be a (metric_value, update_op) tuple"),
    ("hook not a hook", lambda m, y, loss, op: E.EstimatorSpec(m, loss=loss, train_op=op, training_hooks=[1]),
     TypeError, "training_hooks must hold SessionRunHook instances"),
    ("unknown mode", lambda m, y, loss, op: E.EstimatorSpec("fit", loss=loss, train_op=op), ValueError,
     "mode='fit' is not one of ['train', 'eval', 'infer']"),
    ("prediction not a tensor", lambda m, y, loss, op: E.EstimatorSpec(m, predictions={"p": [1]}, loss=loss,
                                                                         train_op=op), TypeError,
     "predictions['p'] must be a Tensor"),
    ("export output not one", lambda m, y, loss, op: E.EstimatorSpec(m, loss=loss, train_op=op,
                                                                       export_outputs={"s": y}), TypeError,
     "export_outputs['s'] must be an ExportOutput"),
    ("a dict", lambda m, y, loss, op: {"loss": loss}, ValueError,
     "model_fn should return a tf.estimator.EstimatorSpec, it returned dict"),
    ("spec of another mode", lambda m, y, loss, op: E.EstimatorSpec(E.ModeKeys.EVAL, loss=loss), ValueError,
     "EstimatorSpec for mode 'eval' when called in mode 'train'"),
]


@pytest.mark.parametrize("spec, error, message", [row[1:] for row in BAD_SPECS], ids=[row[0] for row in BAD_SPECS])
def test_a_wrong_spec_fails_with_one_clear_error(tmp_path, spec, error, message):
    est = E.Estimator(_spec_model_fn(spec), model_dir=str(tmp_path))
    with pytest.raises(error) as caught:
        est.train(lambda: ({"x": tf.constant(X)}, tf.constant(Y)), steps=1)
    assert message in str(caught.value)
    assert est.latest_checkpoint() is None


def _model_fn_without_labels(features, mode):
    return E.EstimatorSpec(mode, predictions=features["x"])


BAD_CALLS = [
    ("both steps", lambda est: est.train(train_input_fn, steps=1, max_steps=2), ValueError,
     "can not provide both steps and max_steps"),
    ("zero steps", lambda est: est.train(train_input_fn, steps=0), ValueError, "steps > 0, given: 0"),
    ("three-tuple input", lambda est: est.train(lambda: ({"x": tf.constant(X)}, tf.constant(Y), 1), steps=1),
     ValueError, "it returned a tuple of 3"),
    ("input_fn not callable", lambda est: est.train(train_input_fn(), steps=1), TypeError, "input_fn must be a function"),
    ("hook not a hook", lambda est: est.train(train_input_fn, hooks=[print], steps=1), TypeError,
     "hooks must hold tf.train.SessionRunHook instances"),
    ("unknown predict key", lambda est: list(est.predict(predict_input_fn, predict_keys=["z"])), ValueError,
     "Expected to run at least one output from ['row', 'y'], provided ['z']"),
    ("variable without checkpoint", lambda est: est.get_variable_value("w"), ValueError,
     "Could not find trained model in model_dir"),
    ("evaluate zero steps", lambda est: est.evaluate(eval_input_fn, steps=0), ValueError, "steps > 0"),
    ("feature missing", lambda est: est.train(lambda: ({"z": tf.constant(X)}, tf.constant(Y)), steps=1), KeyError,
     "'x'"),
]


@pytest.mark.parametrize("call, error, message", [row[1:] for row in BAD_CALLS], ids=[row[0] for row in BAD_CALLS])
def test_bad_calls_fail_with_one_clear_error(tmp_path, call, error, message):
    est = make(tmp_path)
    with pytest.raises(error) as caught:
        call(est)
    assert message in str(caught.value)


@pytest.mark.parametrize("build, message", [
    (lambda d: E.Estimator(lambda inputs: None, model_dir=d), "must have a `features` parameter"),
    (lambda d: E.Estimator(lambda features: None, model_dir=d, params={"a": 1}), "has no `params` parameter"),
    (lambda d: E.Estimator(lambda features, extra: None, model_dir=d), "parameters it will not be given: ['extra']"),
    (lambda d: E.Estimator(linear_model_fn, model_dir=d, config=E.RunConfig(model_dir=d + "x")),
     "model_dir is set both in the constructor"),
    (lambda d: E.Estimator(linear_model_fn, model_dir=d, config={"model_dir": d}), "config must be a tf.estimator.RunConfig"),
    (lambda d: E.RunConfig(save_checkpoints_steps=2, save_checkpoints_secs=5), "can not provide both"),
    (lambda d: E.RunConfig(keep_checkpoint_max=-1), "keep_checkpoint_max must be >= 0"),
    (lambda d: E.RunConfig(train_distribute=object()), "train_distribute is not supported"),
    (lambda d: E.RunConfig().replace(model=1), "model cannot be replaced"),
    (lambda d: E.Estimator(_model_fn_without_labels, model_dir=d).train(train_input_fn, steps=1),
     "model_fn does not take labels, but input_fn returns labels"),
])
def test_bad_construction_fails_with_one_clear_error(tmp_path, build, message):
    with pytest.raises(ValueError) as caught:
        build(str(tmp_path))
    assert message in str(caught.value)


def test_tf_config_naming_a_cluster_is_refused(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}')
    with pytest.raises(ValueError, match="TF_CONFIG names a cluster"):
        E.RunConfig()


def test_run_config_defaults_and_replace():
    config = E.RunConfig()
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps, config.save_summary_steps,
            config.keep_checkpoint_max, config.log_step_count_steps, config.is_chief) == (600, None, 100, 5, 100, True)
    stepped = config.replace(save_checkpoints_steps=10, tf_random_seed=7)
    assert (stepped.save_checkpoints_steps, stepped.save_checkpoints_secs, stepped.tf_random_seed) == (10, None, 7)
