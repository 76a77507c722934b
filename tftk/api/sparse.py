"""The `tf.sparse` namespace."""

from tftk.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tftk.ops.categorical_ops import sparse_cross as cross
from tftk.ops.categorical_ops import sparse_cross_hashed as cross_hashed
from tftk.ops.segment_ops import sparse_segment_mean as segment_mean
from tftk.ops.segment_ops import sparse_segment_sqrt_n as segment_sqrt_n
from tftk.ops.segment_ops import sparse_segment_sum as segment_sum
from tftk.ops.sparse_math_ops import from_dense
from tftk.ops.sparse_math_ops import sparse_add as add
from tftk.ops.sparse_math_ops import sparse_concat as concat
from tftk.ops.sparse_math_ops import sparse_expand_dims as expand_dims
from tftk.ops.sparse_math_ops import sparse_eye as eye
from tftk.ops.sparse_math_ops import sparse_fill_empty_rows as fill_empty_rows
from tftk.ops.sparse_math_ops import sparse_reduce_max as reduce_max
from tftk.ops.sparse_math_ops import sparse_reduce_max_sparse as reduce_max_sparse
from tftk.ops.sparse_math_ops import sparse_reduce_sum as reduce_sum
from tftk.ops.sparse_math_ops import sparse_reduce_sum_sparse as reduce_sum_sparse
from tftk.ops.sparse_math_ops import sparse_reorder as reorder
from tftk.ops.sparse_math_ops import sparse_reset_shape as reset_shape
from tftk.ops.sparse_math_ops import sparse_reshape as reshape
from tftk.ops.sparse_math_ops import sparse_retain as retain
from tftk.ops.sparse_math_ops import sparse_slice as slice  # noqa: A004
from tftk.ops.sparse_math_ops import sparse_split as split
from tftk.ops.sparse_math_ops import sparse_tensor_dense_matmul as matmul
from tftk.ops.sparse_math_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from tftk.ops.sparse_math_ops import sparse_to_indicator as to_indicator
from tftk.ops.sparse_math_ops import sparse_transpose as transpose
from tftk.ops.sparse_ops import sparse_placeholder as placeholder
from tftk.ops.sparse_ops import to_dense

__all__ = ["SparseTensor", "SparseTensorValue", "add", "concat", "cross", "cross_hashed", "expand_dims", "eye", "fill_empty_rows",
           "from_dense", "matmul", "placeholder", "reduce_max", "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse", "reorder",
           "reset_shape", "reshape", "retain", "segment_mean", "segment_sqrt_n", "segment_sum", "slice",
           "sparse_dense_matmul", "split", "to_dense", "to_indicator", "transpose"]

from tftk.ops.sparse_elementwise_ops import sparse_mask as mask  # noqa: E402
from tftk.ops.sparse_elementwise_ops import sparse_maximum as maximum  # noqa: E402
from tftk.ops.sparse_elementwise_ops import sparse_minimum as minimum  # noqa: E402
from tftk.ops.sparse_elementwise_ops import sparse_softmax as softmax  # noqa: E402
from tftk.ops.sparse_merge_ops import sparse_merge as merge  # noqa: E402
