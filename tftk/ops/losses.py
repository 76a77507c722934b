"""tf.losses: weighted losses with TF1's reductions, the LOSSES collection and get_total_loss."""

from __future__ import annotations

from typing import Any

from tftk.framework import dtypes
from tftk.framework.ops import GraphKeys, Tensor, add_to_collection, convert_to_tensor, get_collection, name_scope
from tftk.ops import array_ops, math_ops, nn_loss_ops, nn_ops, reduction_ops

__all__ = [
    "Reduction", "compute_weighted_loss", "absolute_difference", "mean_squared_error", "log_loss",
    "hinge_loss", "huber_loss", "sigmoid_cross_entropy", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy", "add_loss", "get_losses", "get_regularization_losses",
    "get_regularization_loss", "get_total_loss",
]


class Reduction:
    """How compute_weighted_loss reduces the weighted per-element losses."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key!r}; use one of tf.losses.Reduction.all(): {cls.all()}")


def _safe_div(numerator: Tensor, denominator: Tensor) -> Tensor:
    """numerator / denominator, and 0 where the denominator is 0 (TF's _safe_div); named `value`,
    as TF names a reduced loss (`softmax_cross_entropy_loss/value`)."""
    is_zero = math_ops.cast(math_ops.equal(denominator, 0), denominator.dtype)
    return math_ops.realdiv(numerator, math_ops.add(denominator, is_zero), name="value")


def _num_present(losses: Tensor, weights: Tensor) -> Tensor:
    """How many loss elements carry a nonzero weight (weights broadcast to the losses' shape)."""
    broadcast = math_ops.multiply(weights, array_ops.ones_like(losses))
    return reduction_ops.reduce_sum(math_ops.cast(math_ops.not_equal(broadcast, 0), losses.dtype))


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: str | None = None,
                          loss_collection: str | None = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """losses * weights reduced by `reduction`; the result is added to `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        if not losses.dtype.is_floating:
            losses = math_ops.cast(losses, dtypes.float32)
        weights = convert_to_tensor(weights, dtype=losses.dtype, name="weights")
        _check_broadcast(weights, losses)
        weighted = math_ops.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduction_ops.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = _safe_div(loss, reduction_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), weights)))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_div(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_div(loss, math_ops.cast(array_ops.size(losses), losses.dtype))
        if loss_collection:
            add_to_collection(loss_collection, loss)
        return loss


def _check_broadcast(weights: Tensor, values: Tensor) -> None:
    w, v = weights.shape.as_tuple(), values.shape.as_tuple()
    if w is None or v is None or not w:
        return
    if len(w) > len(v) or any(a not in (1, None) and b is not None and a != b for a, b in zip(reversed(w), reversed(v))):
        raise ValueError(f"weights shape {weights.shape} can not be broadcast to the losses' shape {values.shape}")


def _pair(labels: Any, predictions: Any, who: str) -> tuple[Tensor, Tensor]:
    predictions = convert_to_tensor(predictions, name="predictions")
    if not predictions.dtype.is_floating:
        predictions = math_ops.cast(predictions, dtypes.float32)
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"), predictions.dtype)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"{who}: predictions shape {predictions.shape} is not compatible with labels shape "
                         f"{labels.shape}")
    return labels, predictions


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                        loss_collection: str = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted |predictions - labels|."""
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as s:
        labels, predictions = _pair(labels, predictions, "absolute_difference")
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: str | None = None,
                       loss_collection: str = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted (predictions - labels) ** 2."""
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as s:
        labels, predictions = _pair(labels, predictions, "mean_squared_error")
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def log_loss(labels: Any, predictions: Any, weights: Any = 1.0, epsilon: float = 1e-7, scope: str | None = None,
             loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted -labels * log(p + eps) - (1 - labels) * log(1 - p + eps)."""
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as s:
        labels, predictions = _pair(labels, predictions, "log_loss")
        losses = math_ops.subtract(
            math_ops.negative(math_ops.multiply(labels, math_ops.log(math_ops.add(predictions, epsilon)))),
            math_ops.multiply(math_ops.subtract(1.0, labels),
                              math_ops.log(math_ops.add(math_ops.subtract(1.0, predictions), epsilon))))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def hinge_loss(labels: Any, logits: Any, weights: Any = 1.0, scope: str | None = None,
               loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted max(0, 1 - (2 * labels - 1) * logits) for labels in {0, 1}."""
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as s:
        labels, logits = _pair(labels, logits, "hinge_loss")
        signed = math_ops.subtract(math_ops.multiply(2.0, labels), 1.0)
        losses = nn_ops.relu(math_ops.subtract(1.0, math_ops.multiply(signed, logits)))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0, scope: str | None = None,
               loss_collection: str = GraphKeys.LOSSES, reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted 0.5 * e**2 for |e| <= delta, else delta * (|e| - 0.5 * delta)."""
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as s:
        labels, predictions = _pair(labels, predictions, "huber_loss")
        error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(error, delta)
        linear = math_ops.subtract(error, quadratic)
        losses = math_ops.add(math_ops.multiply(0.5, math_ops.square(quadratic)), math_ops.multiply(delta, linear))
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: str | None = None, loss_collection: str = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sigmoid cross-entropy; labels smoothed towards 1/2 by label_smoothing."""
    with name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as s:
        labels, logits = _pair(multi_class_labels, logits, "sigmoid_cross_entropy")
        if label_smoothing:
            labels = math_ops.add(math_ops.multiply(labels, 1 - label_smoothing), 0.5 * label_smoothing)
        losses = nn_loss_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: str | None = None, loss_collection: str = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted softmax cross-entropy per example; labels smoothed towards 1/num_classes."""
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as s:
        labels, logits = _pair(onehot_labels, logits, "softmax_cross_entropy")
        if label_smoothing:
            classes = logits.shape.as_list()[-1]
            if classes is None:
                raise ValueError("softmax_cross_entropy: label_smoothing needs a known number of classes")
            labels = math_ops.add(math_ops.multiply(labels, 1 - label_smoothing), label_smoothing / classes)
        losses = nn_loss_ops.softmax_cross_entropy_with_logits_v2(
            labels=array_ops.stop_gradient(labels), logits=logits)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0, scope: str | None = None,
                                 loss_collection: str = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """Weighted sparse softmax cross-entropy per example (labels are class ids)."""
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as s:
        losses = nn_loss_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        return compute_weighted_loss(losses, weights, s, loss_collection, reduction)


def add_loss(loss: Any, loss_collection: str = GraphKeys.LOSSES) -> None:
    """Add an externally built loss to `loss_collection`."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list:
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list:
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of REGULARIZATION_LOSSES (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    if not losses:
        from tftk.ops.constant_op import constant
        return constant(0.0, name=name)
    return math_ops.add_n(losses, name=name)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: str | None = None) -> Tensor:
    """The sum of the LOSSES collection, plus REGULARIZATION_LOSSES unless told otherwise."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("get_total_loss: no losses found; build a tf.losses.* loss or call tf.losses.add_loss first")
    return math_ops.add_n(losses, name=name)
