"""tf.metrics against real TensorFlow: values after several updates, resets, and the variables made."""

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf

rng = np.random.RandomState(0)
BATCHES = 3
INPUTS = {
    "probs": rng.rand(BATCHES, 8).astype(np.float32),
    "binary": (rng.rand(BATCHES, 8) > 0.5).astype(np.int64),
    "pred_binary": (rng.rand(BATCHES, 8) > 0.4).astype(np.int64),
    "values": rng.randn(BATCHES, 8).astype(np.float32),
    "weights": rng.rand(BATCHES, 8).astype(np.float32),
    "classes": rng.randint(0, 4, (BATCHES, 8)).astype(np.int64),
    "pred_classes": rng.randint(0, 4, (BATCHES, 8)).astype(np.int64),
    "logits": rng.randn(BATCHES, 8, 5).astype(np.float32),
    "label_ids": rng.randint(0, 5, (BATCHES, 8)).astype(np.int64),
    "label_sets": rng.randint(0, 5, (BATCHES, 8, 2)).astype(np.int64),
}

METRICS = {  # name: the call, with a/b/c/w standing for the fed batches
    "mean": "tf.metrics.mean(v)",
    "mean_weighted": "tf.metrics.mean(v, weights=w)",
    "accuracy": "tf.metrics.accuracy(c, pc)",
    "accuracy_weighted": "tf.metrics.accuracy(c, pc, weights=w)",
    "mse": "tf.metrics.mean_squared_error(v, p)",
    "mae_weighted": "tf.metrics.mean_absolute_error(v, p, weights=w)",
    "rmse": "tf.metrics.root_mean_squared_error(v, p)",
    "true_positives": "tf.metrics.true_positives(b, pb)",
    "false_positives": "tf.metrics.false_positives(b, pb, weights=w)",
    "true_negatives": "tf.metrics.true_negatives(b, pb)",
    "false_negatives": "tf.metrics.false_negatives(b, pb)",
    "precision": "tf.metrics.precision(b, pb)",
    "recall_weighted": "tf.metrics.recall(b, pb, weights=w)",
    "auc_roc": "tf.metrics.auc(b, p)",
    "auc_pr": "tf.metrics.auc(b, p, curve='PR', num_thresholds=50)",
    "auc_minoring": "tf.metrics.auc(b, p, summation_method='minoring', weights=w)",
    "precision_at_2": "tf.metrics.precision_at_k(li, lg, k=2)",
    "recall_at_2": "tf.metrics.recall_at_k(li, lg, k=2)",
    "precision_at_3_sets": "tf.metrics.precision_at_k(ls, lg, k=3)",
    "recall_at_1_class": "tf.metrics.recall_at_k(li, lg, k=1, class_id=2)",
    "precision_at_2_class": "tf.metrics.precision_at_k(ls, lg, k=2, class_id=1)",
    "mean_iou": "tf.metrics.mean_iou(c, pc, num_classes=4)",
    "mean_iou_weighted": "tf.metrics.mean_iou(c, pc, num_classes=5, weights=w)",
    "mean_per_class_accuracy": "tf.metrics.mean_per_class_accuracy(c, pc, num_classes=4)",
}

TEMPLATE = '''
names = {"v": ("values", tf.float32, [8]), "p": ("probs", tf.float32, [8]), "w": ("weights", tf.float32, [8]),
         "b": ("binary", tf.int64, [8]), "pb": ("pred_binary", tf.int64, [8]), "c": ("classes", tf.int64, [8]),
         "pc": ("pred_classes", tf.int64, [8]), "lg": ("logits", tf.float32, [8, 5]),
         "li": ("label_ids", tf.int64, [8]), "ls": ("label_sets", tf.int64, [8, 2])}
ph = {k: tf.placeholder(dt, shape, name=k) for k, (_, dt, shape) in names.items()}
v, p, w, b, pb, c, pc, lg, li, ls = (ph[k] for k in ("v", "p", "w", "b", "pb", "c", "pc", "lg", "li", "ls"))
value, update = CALL
with tf.Session() as s:
    s.run(tf.local_variables_initializer())
    updates = [s.run(update, {ph[k]: inputs[n][i] for k, (n, _, _) in names.items()}) for i in range(%d)]
    final = s.run(value)
    s.run(tf.local_variables_initializer())
    reset = s.run(value)
outputs = {"updates": np.array(updates), "value": final, "reset": reset,
           "locals": np.array(sorted(x.name for x in tf.local_variables())),
           "metric_vars": np.array(len(tf.get_collection(tf.GraphKeys.METRIC_VARIABLES))),
           "trainable": np.array(len(tf.trainable_variables()))}
''' % BATCHES

CASES = {name: (TEMPLATE.replace("CALL", call), INPUTS) for name, call in METRICS.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_matches_tensorflow(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    for key in ("updates", "value", "reset"):
        np.testing.assert_allclose(got.outputs[key], expected.outputs[key], rtol=1e-6, atol=1e-6, err_msg=key)
    for key in ("metric_vars", "trainable"):
        assert got.outputs[key] == expected.outputs[key], key
    assert got.outputs["locals"].tolist() == expected.outputs["locals"].tolist()
