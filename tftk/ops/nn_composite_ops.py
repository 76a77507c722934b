"""tf.nn functions TF builds from other ops: log_poisson_loss, batch_norm_with_global_normalization,
compute_average_loss and scale_regularization_loss (one replica: tftk runs no distribution strategy)."""

from __future__ import annotations

import math
from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops, nn_ops, reduction_ops
from tftk.ops.gather_ops import where
from tftk.ops.safe_math_ops import divide_no_nan

__all__ = ["log_poisson_loss", "batch_norm_with_global_normalization", "compute_average_loss",
           "scale_regularization_loss"]


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Tensor:
    """exp(log_input) - log_input * targets, plus Stirling's term for targets > 1 when compute_full_loss."""
    with name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_input and targets must have the same shape ({log_input.shape} vs {targets.shape})")
        result = math_ops.exp(log_input) - log_input * targets
        if compute_full_loss:
            stirling = targets * math_ops.log(targets) - targets + 0.5 * math_ops.log(2 * math.pi * targets)
            zeros, ones = array_ops.zeros_like(targets), array_ops.ones_like(targets)
            small = math_ops.logical_and(math_ops.greater_equal(targets, zeros), math_ops.less_equal(targets, ones))
            result += where(small, zeros, stirling)
        return result


def batch_norm_with_global_normalization(t: Any = None, m: Any = None, v: Any = None, beta: Any = None,
                                         gamma: Any = None, variance_epsilon: float | None = None,
                                         scale_after_normalization: bool | None = None, name: str | None = None,
                                         input: Any = None, mean: Any = None, variance: Any = None) -> Tensor:  # noqa: A002
    """TF 0.x's batch norm: (t - m) / sqrt(v + eps) * gamma (if scale_after_normalization) + beta."""
    t = input if input is not None else t
    m = mean if mean is not None else m
    v = variance if variance is not None else v
    with name_scope(name, "BatchNormWithGlobalNormalization", [t, m, v, beta, gamma]):
        return nn_ops.batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                                          variance_epsilon)


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Tensor:
    """The sum of (weighted) per-example losses over the global batch size (the batch, one replica); 0 for 0."""
    with name_scope(None, "average_loss", [per_example_loss]):
        loss = convert_to_tensor(per_example_loss)
        if loss.shape.ndims == 0:
            raise ValueError("Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1.")
        if sample_weight is not None:  # TF weighs in float32 whatever the loss's dtype, then casts back
            weighted = math_ops.cast(loss, dtypes.float32) * math_ops.cast(convert_to_tensor(sample_weight),
                                                                          dtypes.float32)
            loss = math_ops.cast(weighted, loss.dtype)
        batch = array_ops.shape(loss)[0] if global_batch_size is None else global_batch_size
        return divide_no_nan(reduction_ops.reduce_sum(loss), math_ops.cast(batch, loss.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularisation loss divided by the number of replicas (one)."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = math_ops.add_n(regularization_loss)
    return reduction_ops.reduce_sum(regularization_loss)
