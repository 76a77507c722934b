"""The TF1 names `import tftk as tf` exposes, re-exported from the layers that define them.

`tftk/__init__.py` loads this module on the first attribute access (`tf.placeholder`), so that
importing a light module of the package (`tftk.cli`, `tftk.config`, `tftk.user_input`) loads
neither numpy nor the engine. Add a new public TF1 name here; this module is only a list.
"""

from tftk.framework.device import DeviceSpec
from tftk.framework.dtypes import (DType, as_dtype, bool, complex64, complex128, double,  # noqa: A004
                                   float16, float32, float64, half, int8, int16, int32, int64,
                                   qint8, qint16, qint32, quint8, quint16, string, uint8, uint16,
                                   uint32, uint64)
from tftk.framework.errors import OpError
from tftk.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tftk.framework.ops import (Graph, GraphKeys, Operation, Tensor, add_to_collection,
                                add_to_collections, colocate_with, control_dependencies,
                                convert_to_tensor, device, get_collection, get_collection_ref,
                                get_default_graph, get_default_session, name_scope, newaxis,
                                register_tensor_conversion_function, reset_default_graph)
from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.framework.registry import NotDifferentiable, RegisterGradient
from tftk.framework.tensor_shape import Dimension, TensorShape
from tftk.client.config import ConfigProto, GPUOptions, GraphOptions, OptimizerOptions
from tftk.client.session import InteractiveSession, Session
from tftk.ops import tensor_operators as _tensor_operators  # noqa: F401 - installs + - * ... on Tensor
from tftk.ops.array_ops import (expand_dims, fill, identity, ones, ones_like, rank, reshape,
                                shape, shape_n, size, squeeze, stack, stop_gradient, transpose,
                                unstack, zeros, zeros_like)
from tftk.ops.gather_ops import gather, gather_nd, where
from tftk.ops.sequence_ops import (invert_permutation, lin_space, linspace, one_hot, range,  # noqa: A004
                                   sequence_mask, unique)
from tftk.ops.slicing_ops import boolean_mask, slice, strided_slice  # noqa: A004
from tftk.ops.tile_pad_ops import broadcast_to, meshgrid, pad, reverse, reverse_v2, roll, tile
from tftk.ops.segment_ops import (segment_max, segment_mean, segment_min, segment_prod, segment_sum,
                                  sparse_segment_mean, sparse_segment_sqrt_n, sparse_segment_sum,
                                  unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
                                  unsorted_segment_prod, unsorted_segment_sqrt_n, unsorted_segment_sum)
from tftk.ops.scatter_ops import (dynamic_partition, dynamic_stitch, scatter_nd, tensor_scatter_add,
                                  tensor_scatter_sub, tensor_scatter_update)
from tftk.ops.special_math_ops import (acosh, asinh, atanh, betainc, digamma, erfc, igamma, igammac,
                                       lbeta, lgamma, polygamma, zeta)
from tftk.ops.safe_math_ops import divide_no_nan as div_no_nan
from tftk.ops.clip_ops import (clip_by_average_norm, clip_by_global_norm, clip_by_norm,
                               clip_by_value, global_norm)
from tftk.ops.constant_op import constant, placeholder, placeholder_with_default
from tftk.ops.control_flow_ops import case, cond, group, no_op, tuple, with_dependencies  # noqa: A004
from tftk.ops.data_flow_ops import (ConditionalAccumulator, FIFOQueue, PaddingFIFOQueue, QueueBase,
                                    RandomShuffleQueue)
from tftk.ops.io_ops import (FixedLengthRecordReader, TextLineReader, TFRecordReader, WholeFileReader,
                             decode_csv, decode_raw)
from tftk.ops.gradients_impl import AggregationMethod, UnconnectedGradients, gradients
from tftk.ops.file_ops import matching_files, read_file, write_file
from tftk.ops.init_ops import (constant_initializer, glorot_normal_initializer,
                               glorot_uniform_initializer, ones_initializer, orthogonal_initializer,
                               random_normal_initializer, random_uniform_initializer,
                               truncated_normal_initializer, uniform_unit_scaling_initializer,
                               variance_scaling_initializer, zeros_initializer)
from tftk.ops.math_ops import (abs, acos, add, add_n, asin, atan, atan2, cast, ceil, cos, cosh, div,  # noqa: A004
                               divide, equal, erf, exp, expm1, floor, floordiv, floor_div, floormod,
                               greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, log,
                               log1p, logical_and, logical_not, logical_or, logical_xor, matmul, maximum,
                               minimum, mod, multiply, negative, not_equal, pow, realdiv, reciprocal,
                               round, rsqrt, saturate_cast, scalar_mul, sigmoid, sign, sin, sinh, sqrt,
                               square, squared_difference, subtract, tan, tanh, to_double, to_float,
                               to_int32, to_int64, truediv)
from tftk.ops.reduction_ops import (count_nonzero, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
                                    reduce_mean, reduce_min, reduce_prod, reduce_sum)
from tftk.ops.linalg_ops import (cholesky, cholesky_solve, matrix_determinant, matrix_inverse,
                                 matrix_solve, matrix_solve_ls, matrix_triangular_solve, norm, qr,
                                 self_adjoint_eig, self_adjoint_eigvals, svd)
from tftk.ops.einsum_ops import cross, einsum, tensordot
from tftk.ops.matrix_ops import (diag, diag_part, eye, matrix_band_part, matrix_diag, matrix_diag_part,
                                 matrix_set_diag, matrix_transpose, trace)
from tftk.ops.quantize_ops import dequantize, quantize
from tftk.ops.scan_ops import argmax, argmin, bincount, cumprod, cumsum
from tftk.ops.spectral_ops import complex, fft, fft2d, fft3d, ifft, ifft2d, ifft3d, imag, real  # noqa: A004
from tftk.ops.random_ops import (multinomial, random_gamma, random_normal, random_poisson,
                                 random_shuffle, random_uniform, set_random_seed, truncated_normal)
from tftk.ops.sparse_ops import sparse_placeholder, sparse_tensor_to_dense, sparse_to_dense
from tftk.ops.sparse_math_ops import (sparse_add, sparse_concat, sparse_fill_empty_rows, sparse_reduce_max,
                                      sparse_reduce_sum, sparse_reduce_sum_sparse, sparse_reorder,
                                      sparse_reset_shape, sparse_reshape, sparse_retain, sparse_slice,
                                      sparse_split, sparse_tensor_dense_matmul, sparse_to_indicator,
                                      sparse_transpose)
from tftk.ops.string_ops import (as_string, decode_base64, encode_base64, reduce_join,
                                 string_join, string_to_hash_bucket, string_to_hash_bucket_fast,
                                 string_to_hash_bucket_strong, substr)
from tftk.ops.categorical_ops import tables_initializer
from tftk.ops.categorical_ops import tables_initializer as initialize_all_tables  # TF1's deprecated name
from tftk.ops.tensor_serialization_ops import (deserialize_many_sparse, parse_tensor, serialize_many_sparse,
                                               serialize_sparse, serialize_tensor)
from tftk.ops.text_ops import regex_replace, string_split, string_to_number
from tftk.ops.text_ops import strip as string_strip
from tftk.ops.state_ops import (assign, assign_add, assign_sub, batch_scatter_update, count_up_to,
                                scatter_add, scatter_div, scatter_max, scatter_min, scatter_mul,
                                scatter_nd_add, scatter_nd_sub, scatter_nd_update, scatter_sub,
                                scatter_update)
from tftk.ops.variable_scope import (AUTO_REUSE, VariableScope, get_local_variable, get_variable,
                                     get_variable_scope, variable_op_scope, variable_scope)
from tftk.ops.partitioned_variables import (create_partitioned_variables, fixed_size_partitioner,
                                            min_max_variable_partitioner, variable_axis_size_partitioner)
from tftk.ops.while_loop import foldl, foldr, map_fn, scan, while_loop
from tftk.ops.tensor_array_ops import TensorArray
from tftk.ops.custom_gradient import custom_gradient, hessians, identity_n
from tftk.ops.template import make_template
from tftk.ops.variables import (Variable, all_variables, assert_variables_initialized,
                                global_variables, global_variables_initializer,
                                initialize_all_variables, initialize_local_variables,
                                initialize_variables, is_variable_initialized, local_variables,
                                local_variables_initializer, model_variables,
                                moving_average_variables, report_uninitialized_variables,
                                trainable_variables, variables_initializer)
from tftk import errors  # noqa: E402  (tf.errors)

from tftk.api import dtypes  # noqa: E402  (tf.dtypes: the DTypes plus cast, complex, ...)

# TF 0.x spellings; concat and split accept both argument orders.
from tftk.compat.legacy import (audio_summary, batch_matmul, concat, concat_v2,  # noqa: E402
                                histogram_summary, image_summary, merge_all_summaries,
                                merge_summary, mul, neg, pack, scalar_summary, select, split, sub,
                                unpack)
from tftk.debug import add_check_numerics_ops, check_numerics  # noqa: E402
from tftk.platform import app, gfile  # noqa: E402
from tftk.platform import flags  # noqa: E402
from tftk.platform import version  # noqa: E402
from tftk.platform.version import COMPILER_VERSION, GIT_VERSION, VERSION  # noqa: E402
from tftk.compat.behavior import (control_flow_v2_enabled, disable_control_flow_v2,  # noqa: E402
                                  disable_eager_execution, disable_resource_variables,
                                  disable_tensor_equality, disable_v2_behavior,
                                  disable_v2_tensorshape, executing_eagerly,
                                  resource_variables_enabled)
from tftk.framework.tensor_shape import dimension_at_index, dimension_value  # noqa: E402
from tftk.platform import tf_logging as logging  # noqa: E402

# TF1 namespaces (tf.nn, tf.losses, ...): thin modules under tftk/api/.
from tftk.api import (contrib, image, initializers, layers, linalg, losses, manip, math,  # noqa: E402
                      nn, random, signal, sparse, spectral, strings)
from tftk import summary, train  # noqa: E402  (packages that are their own namespaces)
from tftk.api import lookup, quantization, queue  # noqa: E402

# TF 1.x aliases of names above, under the spellings TF also lists.
from tftk.api.dtypes import QUANTIZED_DTYPES  # noqa: E402
from tftk.ops.composite_math_ops import log_sigmoid  # noqa: E402
from tftk.ops.random_ops import get_seed  # noqa: E402
from tftk.platform.tf_logging import get_logger  # noqa: E402
from tftk.compat.tensor_checks import (broadcast_static_shape, convert_to_tensor_or_indexed_slices,  # noqa: E402
                                       get_static_value, is_tensor, op_scope)
NoGradient = no_gradient = NotDifferentiable
arg_max, arg_min = argmax, argmin  # TF 1.x's deprecated spellings (ArgMax/ArgMin ops)
tensor_scatter_nd_add, tensor_scatter_nd_sub = tensor_scatter_add, tensor_scatter_sub
tensor_scatter_nd_update = tensor_scatter_update

# Sorting, sets, bit operations, index arithmetic, space/depth/batch moves (issue 13's second wave).
from tftk.api import audio, bitwise, sets  # noqa: E402
from tftk.ops.index_ops import (batch_gather, bitcast, ensure_shape, parallel_stack, repeat,  # noqa: E402
                                reverse_sequence, unravel_index, where_v2)
from tftk.ops.sort_ops import (argsort, confusion_matrix, histogram_fixed_width,  # noqa: E402
                               histogram_fixed_width_bins, is_non_decreasing, is_strictly_increasing,
                               searchsorted, setdiff1d, sort, unique_with_counts)
from tftk.ops.space_ops import (batch_to_space, batch_to_space_nd, depth_to_space,  # noqa: E402
                                extract_image_patches, required_space_to_batch_paddings, space_to_batch,
                                space_to_batch_nd, space_to_depth)
from tftk.api import nest  # noqa: E402
from tftk.platform import resource_loader  # noqa: E402
from tftk.ops.structure_checks import (assert_proper_iterable, assert_rank_in,  # noqa: E402
                                       assert_same_float_dtype)
from tftk.api.debugging import verify_tensor_all_finite  # noqa: E402
from tftk.ops.bessel_erfinv_ops import (accumulate_n, angle, conj, rint, truncatediv,  # noqa: E402
                                        truncatemod)
from tftk.api import test  # noqa: E402
from tftk.ops.linalg_more_ops import matrix_square_root  # noqa: E402
from tftk.ops.misc_graph_ops import (convert_to_tensor_or_sparse_tensor, fixed_size_partitioner,  # noqa: E402
                                     grad_pass_through, guarantee_const, init_scope, min_max_variable_partitioner,
                                     no_regularizer, switch_case, timestamp, variable_axis_size_partitioner)
from tftk.api import distributions  # noqa: E402
from tftk.ops.fake_quant_ops import (fake_quant_with_min_max_args, fake_quant_with_min_max_args_gradient,  # noqa: E402
                                     fake_quant_with_min_max_vars, fake_quant_with_min_max_vars_gradient,
                                     fake_quant_with_min_max_vars_per_channel,
                                     fake_quant_with_min_max_vars_per_channel_gradient)
from tftk.ops.sparse_elementwise_ops import sparse_mask, sparse_maximum, sparse_minimum, sparse_softmax  # noqa: E402
from tftk.ops.compression_ops import decode_compressed  # noqa: E402
from tftk.ops.tensor_scatter_extremum_ops import (broadcast_dynamic_shape, sparse_matmul, tensor_scatter_nd_max,  # noqa: E402
                                                  tensor_scatter_nd_min, to_complex64, to_complex128)
from tftk.ops.sparse_merge_ops import sparse_merge  # noqa: E402
from tftk.ops.sparse_math_ops import sparse_reduce_max_sparse  # noqa: E402
