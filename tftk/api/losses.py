"""The `tf.losses` namespace: weighted losses, reductions and the loss collections."""

from tftk.ops.losses import (Reduction, absolute_difference, add_loss, compute_weighted_loss,
                             get_losses, get_regularization_loss, get_regularization_losses,
                             get_total_loss, hinge_loss, huber_loss, log_loss, mean_squared_error,
                             sigmoid_cross_entropy, softmax_cross_entropy, sparse_softmax_cross_entropy)

__all__ = [
    "Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "get_losses",
    "get_regularization_loss", "get_regularization_losses", "get_total_loss", "hinge_loss",
    "huber_loss", "log_loss", "mean_squared_error", "sigmoid_cross_entropy", "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]

from tftk.ops.pairwise_losses import cosine_distance, mean_pairwise_squared_error  # noqa: E402
