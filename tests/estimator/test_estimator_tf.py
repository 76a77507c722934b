"""tftk's Estimator against TF 1.x's (tensorflow-estimator 2.15 in TF 2.21): the same model_fn, the
same constant initial values, the same data — same variables after training (two train calls going
on from the checkpoint), same checkpoints kept, same metrics, predictions and summaries; and the same
error class for the same bad spec."""

from __future__ import annotations

import numpy as np
import pytest

from tests.estimator.oracle import run_estimator_case_in_tftk, run_estimator_cases_in_tf

pytestmark = pytest.mark.slow  # one TensorFlow process (~15 s) for the table

_MODEL_FN = '''
import os, tempfile
def model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([[0.5], [-0.3]]))
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    y = tf.matmul(features["x"], w) + b
    if mode == E.ModeKeys.PREDICT:
        return E.EstimatorSpec(mode, predictions={"y": y, "double": 2.0 * y})
    loss = tf.reduce_mean(tf.square(y - labels))
    tf.summary.scalar("my_loss", loss)
    train_op = tf.train.MomentumOptimizer(params["lr"], 0.9).minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, y), "rmse": tf.metrics.root_mean_squared_error(labels, y)}
    return E.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)
x, y = inputs["x"], inputs["y"]
def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)
def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(3)
'''

_DATA = {"x": np.linspace(-1, 1, 16, dtype=np.float32).reshape(8, 2),
         "y": np.array([[0.3], [1.0], [-0.5], [0.2], [0.9], [1.5], [-1.0], [0.0]], np.float32)}

CASES = {
    "train_twice_evaluate_predict": (_MODEL_FN + '''
config = E.RunConfig(save_checkpoints_steps=3, keep_checkpoint_max=2, tf_random_seed=1)
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.05}, config=config)
est.train(train_input_fn, steps=4)
est.train(train_input_fn, steps=3)
est.train(train_input_fn, max_steps=5)
metrics = est.evaluate(eval_input_fn)
preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(5)))
state = tf.train.get_checkpoint_state(est.model_dir)
outputs = {"w": est.get_variable_value("w"), "b": est.get_variable_value("b"),
           "w_momentum": est.get_variable_value("w/Momentum"),
           "loss": metrics["loss"], "mae": metrics["mae"], "rmse": metrics["rmse"],
           "global_step": metrics["global_step"], "metric_names": np.array(sorted(metrics)),
           "y": np.stack([p["y"] for p in preds]), "double": np.stack([p["double"] for p in preds]),
           "pred_keys": np.array(sorted(preds[0])), "names": np.array(est.get_variable_names()),
           "kept": np.array([os.path.basename(p) for p in state.all_model_checkpoint_paths]),
           "latest": np.array(os.path.basename(est.latest_checkpoint()))}
''', _DATA),
    "evaluate_steps_and_predict_keys": (_MODEL_FN + '''
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.1})
est.train(lambda: ({"x": tf.constant(x[:4])}, tf.constant(y[:4])), steps=2)
metrics = est.evaluate(eval_input_fn, steps=2, name="two")
preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(3), predict_keys=["double"]))
batches = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(3), yield_single_examples=False))
outputs = {"loss": metrics["loss"], "mae": metrics["mae"], "step": metrics["global_step"],
           "keys": np.array(sorted(preds[0])), "double": np.stack([p["double"] for p in preds]),
           "batch_rows": np.array([len(b["y"]) for b in batches]),
           "has_eval_two": np.array(os.path.isdir(os.path.join(est.model_dir, "eval_two")))}
''', _DATA),
    "summaries_under_model_dir": (_MODEL_FN + '''
config = E.RunConfig(save_summary_steps=2, log_step_count_steps=100, save_checkpoints_steps=100)
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.05}, config=config)
est.train(train_input_fn, steps=5)
est.evaluate(eval_input_fn)
def scalars(folder):
    found = []
    for name in sorted(os.listdir(folder)):
        if name.startswith("events.out.tfevents"):
            for event in tf.train.summary_iterator(os.path.join(folder, name)):
                for value in event.summary.value:
                    if value.HasField("simple_value"):
                        found.append((value.tag, event.step, value.simple_value))
    return sorted(found)
train, evaluation = scalars(est.model_dir), scalars(os.path.join(est.model_dir, "eval"))
outputs = {"train_tags": np.array([t for t, _, _ in train]), "train_steps": np.array([s for _, s, _ in train]),
           "train_values": np.array([v for _, _, v in train]),
           "eval_tags": np.array([t for t, _, _ in evaluation]), "eval_steps": np.array([s for _, s, _ in evaluation]),
           "eval_values": np.array([v for _, _, v in evaluation])}
''', _DATA),
    "warm_start_from_another_run": (_MODEL_FN + '''
first = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.1})
first.train(train_input_fn, steps=3)
second = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.1},
                     warm_start_from=E.WarmStartSettings(first.model_dir, vars_to_warm_start="w"))
preds = list(second.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(8)))
second.train(train_input_fn, steps=1)
outputs = {"first_w": first.get_variable_value("w"), "y": np.stack([p["y"] for p in preds]),
           "second_b": second.get_variable_value("b"), "second_w": second.get_variable_value("w")}
''', _DATA),
    "train_and_evaluate_each_checkpoint": (_MODEL_FN + '''
config = E.RunConfig(save_checkpoints_steps=3)
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.05}, config=config)
metrics, exports = E.train_and_evaluate(est, E.TrainSpec(train_input_fn, max_steps=7),
                                        E.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
steps = []
folder = os.path.join(est.model_dir, "eval")
for name in sorted(os.listdir(folder)):
    for event in tf.train.summary_iterator(os.path.join(folder, name)):
        steps += [event.step for value in event.summary.value if value.tag == "loss"]
outputs = {"loss": metrics["loss"], "mae": metrics["mae"], "step": metrics["global_step"],
           "eval_steps": np.array(sorted(steps)), "exports": np.array(len(exports))}
''', _DATA),
    "numpy_input_fn_batches": (_MODEL_FN + '''
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"lr": 0.05})
est.train(E.inputs.numpy_input_fn({"x": x}, y, batch_size=3, num_epochs=2, shuffle=False))
preds = list(est.predict(E.inputs.numpy_input_fn({"x": x}, batch_size=5, shuffle=False)))
metrics = est.evaluate(E.inputs.numpy_input_fn({"x": x}, y, batch_size=3, shuffle=False))
outputs = {"step": est.get_variable_value("global_step"), "w": est.get_variable_value("w"),
           "y": np.stack([p["y"] for p in preds]), "loss": metrics["loss"], "mae": metrics["mae"]}
''', _DATA),
}

_BAD_SPEC = '''
import tempfile
def model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1])
    y = tf.matmul(features["x"], w)
    loss = tf.reduce_mean(tf.square(y - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
    return {SPEC}
est = E.Estimator(model_fn, model_dir=tempfile.mkdtemp())
est.train(lambda: ({"x": tf.constant(inputs["x"])}, tf.constant(inputs["y"])), steps=1)
outputs = {}
'''

BAD_SPECS = {
    "no_loss": "E.EstimatorSpec(mode, train_op=train_op)",
    "no_train_op": "E.EstimatorSpec(mode, loss=loss)",
    "vector_loss": "E.EstimatorSpec(mode, loss=tf.square(y - labels), train_op=train_op)",
    "loss_not_tensor": "E.EstimatorSpec(mode, loss=1.0, train_op=train_op)",
    "train_op_not_op": "E.EstimatorSpec(mode, loss=loss, train_op='step')",
    "metric_not_pair": "E.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={'m': loss})",
    "hook_not_hook": "E.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[object()])",
    "not_a_spec": "{'loss': loss, 'train_op': train_op}",
}
for _name, _spec in BAD_SPECS.items():
    CASES["bad_" + _name] = (_BAD_SPEC.replace("{SPEC}", _spec), _DATA)


@pytest.fixture(scope="module")
def oracle():
    return run_estimator_cases_in_tf(CASES)


@pytest.mark.parametrize("name", [name for name in CASES if not name.startswith("bad_")])
def test_same_results_as_tf(oracle, name):
    expected, got = oracle[name], run_estimator_case_in_tftk(*CASES[name])
    assert expected.error is None, expected.message
    assert got.error is None, got.message
    assert sorted(got.outputs) == sorted(expected.outputs)
    for key, want in expected.outputs.items():
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got.outputs[key], want, rtol=2e-5, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got.outputs[key], want, err_msg=key)


@pytest.mark.parametrize("name", sorted(BAD_SPECS))
def test_bad_spec_raises_the_same_error_class_as_tf(oracle, name):
    expected, got = oracle["bad_" + name], run_estimator_case_in_tftk(*CASES["bad_" + name])
    assert expected.error is not None and got.error == expected.error, (expected.message, got.message)
