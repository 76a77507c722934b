"""The `tf.nn` namespace: re-exports of the neural-network ops, losses and embedding lookup."""

from tftk.ops.embedding_ops import embedding_lookup
from tftk.ops.nn_loss_ops import (log_uniform_candidate_sampler, nce_loss, sampled_softmax_loss,
                                  sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits,
                                  softmax_cross_entropy_with_logits_v2,
                                  sparse_softmax_cross_entropy_with_logits,
                                  weighted_cross_entropy_with_logits)
from tftk.ops.nn_ops import (avg_pool, batch_normalization, bias_add, conv1d, conv2d, conv2d_transpose,
                             crelu, dropout, elu, in_top_k, l2_loss, l2_normalize, leaky_relu,
                             local_response_normalization, log_softmax, lrn, max_pool, moments, relu,
                             relu6, relu_layer, selu, sigmoid, softmax, softplus, softsign, tanh, top_k,
                             xw_plus_b)

from tftk.ops.nn_conv_ops import (atrous_conv2d, avg_pool1d, avg_pool2d, conv3d, convolution,
                                  depthwise_conv2d, depthwise_conv2d_native, fused_batch_norm, max_pool1d,
                                  max_pool2d, normalize_moments, pool, separable_conv2d,
                                  sufficient_statistics, swish, weighted_moments)
from tftk.ops.nn_conv_ops import swish as silu
from tftk.ops.safe_math_ops import zero_fraction
from tftk.ops.sparse_embedding_ops import embedding_lookup_sparse, safe_embedding_lookup_sparse

from tftk.api import rnn as rnn_cell
from tftk.ops.bidirectional_rnn import bidirectional_dynamic_rnn, static_bidirectional_rnn
from tftk.ops.rnn import dynamic_rnn, static_rnn
from tftk.ops.rnn import static_rnn as rnn

__all__ = ["dynamic_rnn", "static_rnn", "rnn", "rnn_cell", "bidirectional_dynamic_rnn", "static_bidirectional_rnn",
    "atrous_conv2d", "conv3d", "convolution", "depthwise_conv2d", "depthwise_conv2d_native",
    "fused_batch_norm", "pool", "separable_conv2d", "weighted_moments", "avg_pool1d", "avg_pool2d", "max_pool1d",
    "max_pool2d", "normalize_moments", "silu", "sufficient_statistics", "swish", "zero_fraction",
    "avg_pool", "batch_normalization", "bias_add", "conv1d", "conv2d", "conv2d_transpose", "crelu",
    "dropout", "elu", "embedding_lookup", "in_top_k", "l2_loss", "l2_normalize", "leaky_relu",
    "local_response_normalization", "log_softmax", "log_uniform_candidate_sampler", "lrn", "max_pool",
    "moments", "nce_loss", "relu", "relu6", "relu_layer", "sampled_softmax_loss", "selu", "sigmoid",
    "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2", "softplus", "softsign",
    "sparse_softmax_cross_entropy_with_logits", "tanh", "top_k", "weighted_cross_entropy_with_logits",
    "xw_plus_b", "avg_pool2d", "embedding_lookup_sparse", "safe_embedding_lookup_sparse",
]

avg_pool2d = avg_pool  # TF 1.14+ spelling

from tftk.ops.space_ops import depth_to_space, space_to_batch, space_to_depth  # noqa: E402
from tftk.ops.conv_backprop_ops import (atrous_conv2d_transpose, conv1d_transpose, conv2d_backprop_filter,  # noqa: E402
                                        conv2d_backprop_input, conv3d_backprop_filter, conv3d_backprop_filter_v2,
                                        conv3d_transpose, conv_transpose, depthwise_conv2d_backprop_filter,
                                        depthwise_conv2d_backprop_input, depthwise_conv2d_native_backprop_filter,
                                        depthwise_conv2d_native_backprop_input)
from tftk.ops.pool3d_ops import avg_pool3d, avg_pool_v2, max_pool3d, max_pool_v2, max_pool_with_argmax  # noqa: E402
from tftk.ops.nn_composite_ops import (batch_norm_with_global_normalization, compute_average_loss,  # noqa: E402
                                       log_poisson_loss, scale_regularization_loss)
from tftk.ops.candidate_sampling_ops import (all_candidate_sampler, compute_accidental_hits,  # noqa: E402
                                             fixed_unigram_candidate_sampler, uniform_candidate_sampler)
from tftk.ops.ctc_decode_ops import collapse_repeated, ctc_greedy_decoder, ctc_unique_labels  # noqa: E402
from tftk.ops.morphology_ops import dilation2d, erosion2d  # noqa: E402
from tftk.ops.sparse_embedding_ops import embedding_lookup_sparse  # noqa: E402
