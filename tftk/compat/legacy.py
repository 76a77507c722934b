"""TF 0.x spellings beside TF1's: one-line aliases, plus shims where the argument order changed.

Shims choose the order from the argument types, as the 0.x -> 1.0 upgrade notes describe:
  tf.concat(0, [a, b])    (0.x: concat_dim first)     == tf.concat([a, b], 0)
  tf.split(1, 3, value)   (0.x: split_dim, num_split)  == tf.split(value, 3, axis=1)
A first argument that is a Python int (or a scalar integer Tensor) is the 0.x dimension; TF1's
first argument is always the data. Names that only moved (tf.mul -> tf.multiply, ...) are aliases.
`keep_dims=` beside `keepdims=`, `reduction_indices=` beside `axis=`, the 0.x positional order
`softmax_cross_entropy_with_logits(logits, labels)` and the pre-1.0 summary names are accepted by
the ops themselves (tftk.ops.math_ops, nn_loss_ops, summary_ops); they are re-exported here so this
module lists every legacy name in one place.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from tftk.framework.ops import Tensor
from tftk.ops import array_ops, gather_ops, math_ops
from tftk.ops.summary_ops import (audio_summary, histogram_summary, image_summary,  # noqa: F401
                                  merge_all_summaries, merge_summary, scalar_summary)
from tftk.ops.variables import (all_variables, initialize_all_variables,  # noqa: F401
                                initialize_local_variables, initialize_variables)
from tftk.ops.math_ops import to_double, to_float, to_int32, to_int64  # noqa: F401

__all__ = ["concat", "concat_v2", "split", "pack", "unpack", "mul", "sub", "neg", "select",
           "batch_matmul", "initialize_all_variables", "initialize_variables",
           "initialize_local_variables", "all_variables", "scalar_summary", "histogram_summary",
           "image_summary", "audio_summary", "merge_summary", "merge_all_summaries", "to_float",
           "to_double", "to_int32", "to_int64", "SummaryWriter"]


def _is_dimension(value: Any) -> bool:
    """True for what 0.x passed as a dimension: an int, or a scalar integer Tensor."""
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        return True
    if isinstance(value, Tensor) and value.dtype.is_integer and value.shape.ndims == 0:
        return True
    return False


def concat(*args: Any, **kwargs: Any) -> Tensor:
    """`concat(values, axis)` (TF1) or `concat(concat_dim, values)` (0.x), told apart by type."""
    if "concat_dim" in kwargs or (args and _is_dimension(args[0])):
        names = ("concat_dim", "values", "name")
        bound = {**dict(zip(names, args)), **kwargs}
        return array_ops.concat(bound["values"], bound["concat_dim"], name=bound.get("name", "concat"))
    return array_ops.concat(*args, **kwargs)


concat_v2 = array_ops.concat


def split(*args: Any, **kwargs: Any) -> list[Tensor]:
    """`split(value, num_or_size_splits, axis)` (TF1) or `split(split_dim, num_split, value)` (0.x)."""
    if "split_dim" in kwargs or "num_split" in kwargs or (len(args) >= 3 and _is_dimension(args[0])
                                                          and not _is_dimension(args[2])):
        names = ("split_dim", "num_split", "value", "name")
        bound = {**dict(zip(names, args)), **kwargs}
        return array_ops.split(bound["value"], bound["num_split"], axis=bound["split_dim"],
                                   name=bound.get("name", "split"))
    return array_ops.split(*args, **kwargs)


pack = array_ops.stack
unpack = array_ops.unstack
mul = math_ops.multiply
sub = math_ops.subtract
neg = math_ops.negative


def select(condition: Any, t: Any, e: Any, name: str | None = None) -> Tensor:
    """0.x `select(condition, t, e)`: TF1's three-argument `where`."""
    return gather_ops.where(condition, t, e, name=name)


def batch_matmul(x: Any, y: Any, adj_x: bool = False, adj_y: bool = False, name: str | None = None) -> Tensor:
    """0.x `batch_matmul`: TF1's `matmul` (batched over leading dims) with adjoints."""
    return math_ops.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y, name=name)


def __getattr__(name: str) -> Any:
    if name == "SummaryWriter":  # tf.train.SummaryWriter: the FileWriter (loaded on first use: protobuf)
        from tftk.summary.writer import FileWriter
        return FileWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
