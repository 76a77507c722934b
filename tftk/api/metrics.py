"""The `tf.metrics` namespace: streaming metrics returning (value, update_op)."""

from tftk.ops.metrics_impl import (accuracy, auc, false_negatives, false_positives, mean, mean_absolute_error,
                                   mean_iou, mean_per_class_accuracy, mean_squared_error, precision,
                                   precision_at_k, recall, recall_at_k, root_mean_squared_error,
                                   true_negatives, true_positives)

__all__ = ["accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
           "mean_iou", "mean_per_class_accuracy", "mean_squared_error", "precision", "precision_at_k",
           "recall", "recall_at_k", "root_mean_squared_error", "true_negatives", "true_positives"]
