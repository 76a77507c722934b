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
    "precision_at_top_k": "tf.metrics.precision_at_top_k(ls, tf.nn.top_k(lg, 3)[1])",
    "precision_at_top_k_class_w": "tf.metrics.precision_at_top_k(ls, tf.nn.top_k(lg, 2)[1], k=2, class_id=3, "
                                  "weights=w)",
    "recall_at_top_k": "tf.metrics.recall_at_top_k(ls, tf.nn.top_k(lg, 2)[1], k=2)",
    "recall_at_top_k_class": "tf.metrics.recall_at_top_k(li, tf.nn.top_k(lg, 1)[1], class_id=0)",
    "sparse_precision_at_k": "tf.metrics.sparse_precision_at_k(li, lg, k=2, weights=w)",
    "average_precision_at_3": "tf.metrics.average_precision_at_k(ls, lg, k=3)",
    "average_precision_at_2_ids": "tf.metrics.average_precision_at_k(li, lg, k=2, weights=w)",
    "average_precision_out_of_range": "tf.metrics.average_precision_at_k(ls, lg[:, :4], k=4)",
    "sparse_average_precision_at_k": "tf.metrics.sparse_average_precision_at_k(ls, lg, k=1)",
    "mean_iou": "tf.metrics.mean_iou(c, pc, num_classes=4)",
    "mean_iou_weighted": "tf.metrics.mean_iou(c, pc, num_classes=5, weights=w)",
    "mean_per_class_accuracy": "tf.metrics.mean_per_class_accuracy(c, pc, num_classes=4)",
    "tp_at_thresholds": "tf.metrics.true_positives_at_thresholds(b, p, [0.0, 0.3, 0.5, 0.9])",
    "fp_at_thresholds_weighted": "tf.metrics.false_positives_at_thresholds(b, p, [0.2, 0.5], weights=w)",
    "tn_at_thresholds": "tf.metrics.true_negatives_at_thresholds(b, p, [0.1, 0.6, 1.0])",
    "fn_at_thresholds_weighted": "tf.metrics.false_negatives_at_thresholds(b, p, [0.4, 0.7], weights=w)",
    "precision_at_thresholds": "tf.metrics.precision_at_thresholds(b, p, [0.0, 0.25, 0.5, 0.75, 1.0])",
    "recall_at_thresholds_weighted": "tf.metrics.recall_at_thresholds(b, p, [0.3, 0.6], weights=w)",
    "sensitivity_at_specificity": "tf.metrics.sensitivity_at_specificity(b, p, 0.6)",
    "sensitivity_at_specificity_w": "tf.metrics.sensitivity_at_specificity(b, p, 0.3, w, num_thresholds=20)",
    "specificity_at_sensitivity": "tf.metrics.specificity_at_sensitivity(b, p, 0.5)",
    "specificity_at_sensitivity_w": "tf.metrics.specificity_at_sensitivity(b, p, 0.9, w, num_thresholds=7)",
    "mean_cosine_distance": "tf.metrics.mean_cosine_distance(tf.nn.l2_normalize(lg, 1), "
                            "tf.nn.l2_normalize(lg * 0.5 + 1.0, 1), dim=1)",
    "mean_cosine_distance_w": "tf.metrics.mean_cosine_distance(tf.reshape(v, [8, 1]), tf.reshape(p, [8, 1]), "
                              "dim=1, weights=tf.reshape(w, [8, 1]))",
    "mean_relative_error": "tf.metrics.mean_relative_error(v, p, normalizer=v * tf.cast(b, tf.float32))",
    "mean_relative_error_w": "tf.metrics.mean_relative_error(v, p, normalizer=p, weights=w)",
    "percentage_below": "tf.metrics.percentage_below(v, 0.25)",
    "percentage_below_w": "tf.metrics.percentage_below(v, -0.5, weights=w)",
    "mean_tensor": "tf.metrics.mean_tensor(lg)",
    "mean_tensor_w": "tf.metrics.mean_tensor(lg, weights=tf.reshape(w, [8, 1]))",
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


@pytest.mark.parametrize("metric, fraction, word", [
    ("sensitivity_at_specificity", 1.5, "specificity"), ("specificity_at_sensitivity", -0.1, "sensitivity")])
def test_fraction_out_of_range_is_refused(metric, fraction, word):
    import tftk as tf
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=f"`{word}` must be in the range"):
            getattr(tf.metrics, metric)([1], [0.5], fraction)
