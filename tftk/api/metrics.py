"""The `tf.metrics` namespace: streaming metrics returning (value, update_op)."""

from tftk.ops.metrics_impl import (accuracy, auc, false_negatives, false_positives, mean, mean_absolute_error,
                                   mean_iou, mean_per_class_accuracy, mean_squared_error, precision, recall,
                                   root_mean_squared_error,
                                   true_negatives, true_positives)
from tftk.ops.metrics_top_k import (average_precision_at_k, precision_at_k, precision_at_top_k, recall_at_k,
                                    recall_at_top_k, sparse_average_precision_at_k, sparse_precision_at_k)
from tftk.ops.metrics_thresholds import (false_negatives_at_thresholds, false_positives_at_thresholds,
                                         mean_cosine_distance, mean_relative_error, mean_tensor, percentage_below,
                                         precision_at_thresholds, recall_at_thresholds, sensitivity_at_specificity,
                                         specificity_at_sensitivity, true_negatives_at_thresholds,
                                         true_positives_at_thresholds)

__all__ = ["accuracy", "auc", "false_negatives", "false_positives", "mean", "mean_absolute_error",
           "mean_iou", "mean_per_class_accuracy", "mean_squared_error", "precision", "precision_at_k",
           "recall", "recall_at_k", "root_mean_squared_error", "true_negatives", "true_positives",
           "false_negatives_at_thresholds", "false_positives_at_thresholds", "mean_cosine_distance",
           "mean_relative_error", "mean_tensor", "percentage_below", "precision_at_thresholds",
           "recall_at_thresholds", "sensitivity_at_specificity", "specificity_at_sensitivity",
           "true_negatives_at_thresholds", "true_positives_at_thresholds", "average_precision_at_k",
           "precision_at_top_k", "recall_at_top_k", "sparse_average_precision_at_k", "sparse_precision_at_k"]
