"""TensorInfo: a tensor of a graph named by a SignatureDef (TF's saved_model/utils.py)."""

from __future__ import annotations

from typing import Any

from tftk.proto.tensorflow import TensorInfo
from tftk.summary.tensor_proto import shape_proto

__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]


def build_tensor_info(tensor: Any) -> TensorInfo:
    """The TensorInfo (name, dtype, static shape) of a tftk Tensor."""
    if not hasattr(tensor, "dtype") or not hasattr(tensor, "op"):
        raise TypeError(f"build_tensor_info needs a Tensor, got {type(tensor).__name__}")
    shape = tensor.shape
    return TensorInfo(name=tensor.name, dtype=tensor.dtype.as_datatype_enum,
                      tensor_shape=shape_proto(None if shape.ndims is None else shape.as_list()))


def get_tensor_from_tensor_info(tensor_info: TensorInfo, graph: Any = None, import_scope: str | None = None):
    """The tensor a TensorInfo names, in `graph` (default: the default graph)."""
    from tftk.framework.ops import get_default_graph
    graph = graph if graph is not None else get_default_graph()
    if tensor_info.WhichOneof("encoding") != "name":
        raise ValueError("only dense tensors (TensorInfo.name) are supported")
    name = f"{import_scope}/{tensor_info.name}" if import_scope else tensor_info.name
    return graph.get_tensor_by_name(name)
