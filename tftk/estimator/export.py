"""`tf.estimator.export`: what a served model receives (ServingInputReceiver) and the two standard
receiver builders — parse serialized tf.Examples, or take raw tensors."""

from __future__ import annotations

import collections
from typing import Any, Callable, Mapping

from tftk.estimator.export_output import ClassificationOutput, ExportOutput, PredictOutput, RegressionOutput
from tftk.framework import dtypes
from tftk.framework.ops import Tensor
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver", "build_parsing_serving_input_receiver_fn",
           "build_raw_serving_input_receiver_fn", "ExportOutput", "PredictOutput", "ClassificationOutput",
           "RegressionOutput"]

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"


def _tensor_dict(tensors: Any, field: str, default_name: str) -> dict[str, Any]:
    """`tensors` as a dict name -> Tensor/SparseTensor (a single tensor gets `default_name`)."""
    if tensors is None:
        raise ValueError(f"{field}s must be defined.")
    if not isinstance(tensors, Mapping):
        tensors = {default_name: tensors}
    if not tensors:
        raise ValueError(f"{field}s must not be empty.")
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"{field} keys must be strings: {name!r}.")
        if not isinstance(tensor, (Tensor, SparseTensor)):
            raise ValueError(f"{field} {name!r} must be a Tensor or SparseTensor, given {tensor!r}.")
    return dict(tensors)


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """What serving feeds (`receiver_tensors`, usually placeholders) and the features model_fn gets.

    Args:
      features: a Tensor or dict of Tensors/SparseTensors handed to model_fn (a single one is named 'feature').
      receiver_tensors: the tensors a request feeds (a single one is named 'input').
      receiver_tensors_alternatives: dict name -> receiver tensors, each giving extra signatures.
    """

    def __new__(cls, features: Any, receiver_tensors: Any,
                receiver_tensors_alternatives: Mapping[str, Any] | None = None) -> "ServingInputReceiver":
        features = _tensor_dict(features, "feature", SINGLE_FEATURE_DEFAULT_NAME)
        receiver_tensors = _tensor_dict(receiver_tensors, "receiver_tensor", SINGLE_RECEIVER_DEFAULT_NAME)
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, Mapping):
                raise ValueError(f"receiver_tensors_alternatives must be a dict, given {receiver_tensors_alternatives!r}")
            receiver_tensors_alternatives = {
                name: _tensor_dict(tensors, "receiver_tensors_alternative", SINGLE_RECEIVER_DEFAULT_NAME)
                for name, tensors in receiver_tensors_alternatives.items()}
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """A ServingInputReceiver whose features are one Tensor, handed to model_fn as that Tensor (not a dict)."""

    def __new__(cls, features: Any, receiver_tensors: Any,
                receiver_tensors_alternatives: Mapping[str, Any] | None = None) -> "TensorServingInputReceiver":
        if not isinstance(features, (Tensor, SparseTensor)):
            raise ValueError(f"TensorServingInputReceiver: features must be a single Tensor, given {features!r}")
        receiver = ServingInputReceiver(features, receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors, receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec: Mapping[str, Any], default_batch_size: int | None = None
                                            ) -> Callable[[], ServingInputReceiver]:
    """A receiver fn taking a batch of serialized tf.Examples ('examples') parsed with `feature_spec`."""
    def serving_input_receiver_fn() -> ServingInputReceiver:
        from tftk.ops.constant_op import placeholder
        from tftk.ops.parsing_ops import parse_example
        serialized = placeholder(dtypes.string, [default_batch_size], name="input_example_tensor")
        return ServingInputReceiver(parse_example(serialized, dict(feature_spec)), {"examples": serialized})
    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features: Mapping[str, Any], default_batch_size: int | None = None
                                        ) -> Callable[[], ServingInputReceiver]:
    """A receiver fn feeding each feature directly: one placeholder per tensor of `features` (same name,
    dtype and shape, batch dimension `default_batch_size`)."""
    for name, tensor in features.items():
        if not isinstance(tensor, Tensor):
            raise ValueError(f"build_raw_serving_input_receiver_fn: feature {name!r} must be a Tensor (e.g. a "
                             f"tf.placeholder giving its dtype and shape), given {tensor!r}")

    def serving_input_receiver_fn() -> ServingInputReceiver:
        from tftk.ops.constant_op import placeholder
        receivers = {}
        for name, tensor in features.items():
            dims = tensor.shape.as_list() if tensor.shape.ndims is not None else None
            shape = None if dims is None else TensorShape([default_batch_size] + dims[1:] if dims else [])
            receivers[name] = placeholder(tensor.dtype, shape, name=tensor.op.name)
        return ServingInputReceiver(receivers, dict(receivers))
    return serving_input_receiver_fn
