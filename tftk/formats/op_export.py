"""tftk ops as TensorFlow NodeDefs: TF's op type, TF's attrs and TF's inputs, so TF imports them.

tftk keeps some of TF's tensor inputs as build-time attrs (Reshape's shape, a reduction's axis,
ExpandDims' dim, ConcatV2's axis); exporting adds them back as `<node>/<input>` Const nodes and
writes the attrs TF's OpDef requires (`T`, `Tidx`, `data_format`, ...). tftk's gradient helpers
become the TF ops TF's gradients use (`gradient_export`). Ops that exist only in tftk and have no
TF form yet are written with their tftk attrs plus `_tftk_output_types`, which tftk's importer
reads back; TensorFlow cannot run those.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["tf_form"]

_UNARY_T = {"Identity", "Relu", "Relu6", "Sigmoid", "Tanh", "Neg", "Square", "Sqrt", "Rsqrt", "Exp",
            "Log", "Abs", "Softplus", "Elu", "StopGradient", "ZerosLike", "OnesLike", "Softmax",
            "LogSoftmax", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "FloorMod",
            "FloorDiv", "Pow", "SquaredDifference", "Equal", "NotEqual", "Less", "Greater",
            "LessEqual", "GreaterEqual", "ReluGrad", "SoftmaxCrossEntropyWithLogits"}


def _t(op) -> Any:
    return (op.inputs[0] if op.inputs else op.outputs[0]).dtype


def _int32(values) -> np.ndarray:
    return np.asarray(values, np.int32)


def _reduction(op) -> tuple[dict, list]:
    axis = op.attrs.get("axis")
    if axis is None:
        axis = list(range(op.inputs[0].shape.ndims or 0))
    return ({"T": _t(op), "Tidx": _int32(0).dtype, "keep_dims": bool(op.attrs.get("keepdims", False))},
            [("reduction_indices", _int32(axis))])


def _nhwc(values) -> list[int]:
    """tftk keeps (height, width) for strides/ksize/dilations; TF wants [1, h, w, 1]."""
    values = [int(v) for v in values]
    return [1, *values, 1] if len(values) == 2 else values


def _conv(op) -> tuple[dict, list]:
    return ({"T": op.outputs[0].dtype, "strides": _nhwc(op.attrs["strides"]), "padding": op.attrs["padding"],
             "dilations": _nhwc(op.attrs.get("dilations") or (1, 1)), "data_format": "NHWC",
             "use_cudnn_on_gpu": True}, [])


def _pool(op) -> tuple[dict, list]:
    return ({"T": _t(op), "ksize": _nhwc(op.attrs["ksize"]), "strides": _nhwc(op.attrs["strides"]),
             "padding": op.attrs["padding"], "data_format": "NHWC"}, [])


# tftk op type -> function(op) -> (TF attrs, extra Const inputs [(input name, array)]).
_EXPORTERS: dict[str, Callable] = {
    "MatMul": lambda op: ({"T": _t(op), "transpose_a": bool(op.attrs.get("transpose_a", False)),
                           "transpose_b": bool(op.attrs.get("transpose_b", False))}, []),
    "BiasAdd": lambda op: ({"T": _t(op), "data_format": "NHWC"}, []),
    "BiasAddGrad": lambda op: ({"T": _t(op), "data_format": "NHWC"}, []),
    "Conv2D": _conv, "Conv2DBackpropInput": _conv, "Conv2DBackpropFilter": _conv,
    "MaxPool": _pool, "AvgPool": _pool,
    "Reshape": lambda op: ({"T": _t(op), "Tshape": _int32(0).dtype}, [("shape", _int32(op.attrs["shape"]))]),
    "Mean": _reduction, "Sum": _reduction, "Prod": _reduction, "Max": _reduction, "Min": _reduction,
    "ExpandDims": lambda op: ({"T": _t(op), "Tdim": _int32(0).dtype}, [("dim", _int32(op.attrs["axis"]))]),
    "ConcatV2": lambda op: ({"T": _t(op), "N": len(op.inputs), "Tidx": _int32(0).dtype},
                            [("axis", _int32(op.attrs["axis"]))]),
    "ArgMax": lambda op: ({"T": _t(op), "Tidx": _int32(0).dtype, "output_type": op.outputs[0].dtype},
                          [("dimension", _int32(op.attrs["axis"]))]),
    "ArgMin": lambda op: ({"T": _t(op), "Tidx": _int32(0).dtype, "output_type": op.outputs[0].dtype},
                          [("dimension", _int32(op.attrs["axis"]))]),
    "Pack": lambda op: ({"T": _t(op), "N": len(op.inputs), "axis": int(op.attrs.get("axis", 0))}, []),
    "Squeeze": lambda op: ({"T": _t(op), "squeeze_dims": list(op.attrs.get("squeeze_dims") or [])}, []),
    "Cast": lambda op: ({"SrcT": _t(op), "DstT": op.outputs[0].dtype, "Truncate": False}, []),
    "Shape": lambda op: ({"T": _t(op), "out_type": op.outputs[0].dtype}, []),
    "Fill": lambda op: ({"T": op.outputs[0].dtype, "index_type": op.inputs[0].dtype}, []),
    "Placeholder": lambda op: ({"dtype": op.attrs["dtype"], "shape": op.attrs["shape"]}, []),
    "PlaceholderWithDefault": lambda op: ({"dtype": op.outputs[0].dtype, "shape": op.attrs["shape"]}, []),
    "Const": lambda op: ({"dtype": op.attrs["dtype"], "value": op.attrs["value"]}, []),
    "VariableV2": lambda op: ({"shape": op.attrs["shape"], "dtype": op.attrs["dtype"], "container": "",
                               "shared_name": ""}, []),
    "Assign": lambda op: ({"T": _t(op), "validate_shape": bool(op.attrs.get("validate_shape", True)),
                           "use_locking": bool(op.attrs.get("use_locking", True))}, []),
    "AssignAdd": lambda op: ({"T": _t(op), "use_locking": False}, []),
    "AssignSub": lambda op: ({"T": _t(op), "use_locking": False}, []),
    "NoOp": lambda op: ({}, []),
}
_EXPORTERS.update({name: (lambda op: ({"T": _t(op)}, [])) for name in _UNARY_T})


def _random(op) -> tuple[dict, list]:
    """TF's random ops: the shape is their only input; seeds and dtypes are attrs."""
    return ({"dtype": op.outputs[0].dtype, "T": op.inputs[0].dtype, "seed": int(op.attrs.get("seed") or 0),
             "seed2": int(op.attrs.get("seed2") or 0)}, [])


def _random_int(op) -> tuple[dict, list]:
    return ({"Tout": op.outputs[0].dtype, "T": op.inputs[0].dtype, "seed": int(op.attrs.get("seed") or 0),
             "seed2": int(op.attrs.get("seed2") or 0)}, [])


def _seeds(op) -> dict:
    return {"seed": int(op.attrs.get("seed") or 0), "seed2": int(op.attrs.get("seed2") or 0)}


_EXPORTERS.update({name: _random for name in ("TruncatedNormal", "RandomStandardNormal", "RandomUniform")})
_EXPORTERS["RandomUniformInt"] = _random_int
_EXPORTERS.update({  # the other random ops: seeds and the dtypes of their inputs and output as attrs
    "RandomShuffle": lambda op: ({"T": op.outputs[0].dtype, **_seeds(op)}, []),
    "Multinomial": lambda op: ({"T": op.inputs[0].dtype, "output_dtype": op.outputs[0].dtype, **_seeds(op)}, []),
    "RandomGamma": lambda op: ({"S": op.inputs[0].dtype, "T": op.outputs[0].dtype, **_seeds(op)}, []),
    "RandomPoissonV2": lambda op: ({"S": op.inputs[0].dtype, "R": op.inputs[1].dtype, "dtype": op.outputs[0].dtype,
                                    **_seeds(op)}, []),
})


def tf_form(op) -> tuple[dict, list] | None:
    """(TF attrs, extra Const inputs) for `op`, or None when it has no TF form (export tftk's attrs)."""
    exporter = _EXPORTERS.get(op.type)
    return None if exporter is None else exporter(op)


def _string_const(name: str, values: list[str]):
    from tftk.proto.tensorflow import AttrValue, DataType, NodeDef
    from tftk.summary.tensor_proto import make_tensor_proto
    array = np.array([v.encode() for v in values], dtype=object)
    return NodeDef(name=name, op="Const", attr={"dtype": AttrValue(type=DataType.Value("DT_STRING")),
                                                 "value": AttrValue(tensor=make_tensor_proto(array))})


def expanded_nodes(op, library=None) -> list | None:
    """The TF nodes of a tftk op that TF spells as several nodes, or None for a one-node op.
    A While (and its gradient) adds its functions to `library` (see formats/while_export)."""
    if op.type in ("While", "WhileGrad"):
        from tftk.formats.while_export import while_nodes
        return while_nodes(op, library)
    if op.type in ("SaveV2", "RestoreV2"):
        return _saver_nodes(op)
    if op.type == "ParseExample":
        return _parse_example_nodes(op)
    from tftk.formats.gradient_export import helper_nodes
    return helper_nodes(op)


def _input(tensor) -> str:
    return tensor.op.name + (f":{tensor.value_index}" if tensor.value_index else "")


def _saver_nodes(op) -> list | None:
    """tftk's SaveV2 / RestoreV2 ops as the nodes TF's Saver builds, so TF's loaders can run them.

    SaveV2(prefix, tensor_names, shape_and_slices, *variables) plus `control_dependency`
    (the SaverDef's save tensor); RestoreV2 with one output per variable, an Assign per variable
    and the `restore_all` NoOp (the SaverDef's restore op), named as TF names them.
    """
    from tftk.proto.tensorflow import AttrValue, NodeDef
    scope = op.name.rpartition("/")[0]
    prefix = f"{scope}/" if scope else ""
    names = list(op.get_attr("tensor_names"))
    specs = list(op.attrs.get("shape_and_slices") or [""] * len(names))  # a part: "10 3 0,4:0,3"
    filename = op.inputs[0]
    source = filename.op.name + (f":{filename.value_index}" if filename.value_index else "")
    if op.type == "SaveV2":
        dtypes_ = [t.dtype.as_datatype_enum for t in op.inputs[1:]]
        save = NodeDef(name=f"{prefix}SaveV2", op="SaveV2",
                       input=[source, f"{prefix}SaveV2/tensor_names", f"{prefix}SaveV2/shape_and_slices"]
                       + [t.op.name for t in op.inputs[1:]])
        save.attr["dtypes"].list.type.extend(dtypes_)
        done = NodeDef(name=f"{prefix}control_dependency", op="Identity", input=[source, f"^{prefix}SaveV2"])
        done.attr["T"].type = filename.dtype.as_datatype_enum
        return [_string_const(f"{prefix}SaveV2/tensor_names", names),
                _string_const(f"{prefix}SaveV2/shape_and_slices", specs), save, done]
    variables = op.get_attr("variable_ops")
    restore = NodeDef(name=f"{prefix}RestoreV2", op="RestoreV2",
                      input=[source, f"{prefix}RestoreV2/tensor_names", f"{prefix}RestoreV2/shape_and_slices"])
    restore.attr["dtypes"].list.type.extend(v.outputs[0].dtype.as_datatype_enum for v in variables)
    nodes = [_string_const(f"{prefix}RestoreV2/tensor_names", names),
             _string_const(f"{prefix}RestoreV2/shape_and_slices", specs), restore]
    for i, variable in enumerate(variables):
        assign = NodeDef(name=f"{prefix}Assign" + (f"_{i}" if i else ""), op="Assign",
                         input=[variable.name, f"{prefix}RestoreV2" + (f":{i}" if i else "")])
        assign.attr["T"].type = variable.outputs[0].dtype.as_datatype_enum
        assign.attr["validate_shape"].CopyFrom(AttrValue(b=True))
        assign.attr["use_locking"].CopyFrom(AttrValue(b=True))
        nodes.append(assign)
    nodes.append(NodeDef(name=op.name, op="NoOp", input=[f"^{n.name}" for n in nodes if n.op == "Assign"]))
    return nodes


def _const_node(name: str, array: np.ndarray):
    from tftk.framework import dtypes
    from tftk.proto.tensorflow import AttrValue, NodeDef
    from tftk.summary.tensor_proto import make_tensor_proto
    dtype = dtypes.string if array.dtype == object else dtypes.as_dtype(array.dtype)
    return NodeDef(name=name, op="Const", attr={"dtype": AttrValue(type=dtype.as_datatype_enum),
                                                 "value": AttrValue(tensor=make_tensor_proto(array))})


def _parse_example_nodes(op) -> list | None:
    """tftk's batched ParseExample as TF's: keys, the names vector and dense defaults become Const
    inputs. TF lists all sparse indices, then all values, then all shapes; tftk one sparse feature's
    three at a time — with more than one sparse feature an IdentityN named as the op puts TF's outputs
    in tftk's order. A single record's parse (or a sequence feature) keeps tftk's form."""
    from tftk.proto.tensorflow import NodeDef
    sparse, dense = op.get_attr("sparse"), op.get_attr("dense")
    if not op.get_attr("batched") or any(spec.sequence for spec in dense):
        return None
    node_name = op.name if len(sparse) <= 1 else f"{op.name}/tf_order"
    nodes = []
    if len(op.inputs) > 1:
        names_input = _input(op.inputs[1])
    else:
        names_input = f"{op.name}/names"
        nodes.append(_const_node(names_input, np.zeros(0, dtype=object)))
    key_inputs, default_inputs = [], []
    for group, specs in (("sparse_keys", sparse), ("dense_keys", dense)):
        for i, spec in enumerate(specs):
            nodes.append(_const_node(f"{op.name}/{group}_{i}", np.array(spec.key.encode(), dtype=object)))
            key_inputs.append(nodes[-1].name)
    for i, spec in enumerate(dense):
        default = spec.default if spec.default is not None else np.zeros(0, dtype=spec.np_dtype)
        nodes.append(_const_node(f"{op.name}/dense_defaults_{i}", np.asarray(default, dtype=spec.np_dtype)))
        default_inputs.append(nodes[-1].name)
    parse = NodeDef(name=node_name, op="ParseExample", input=[_input(op.inputs[0]), names_input] + key_inputs
                    + default_inputs)
    parse.attr["Nsparse"].i, parse.attr["Ndense"].i = len(sparse), len(dense)
    parse.attr["sparse_types"].list.type.extend(spec.dtype.as_datatype_enum for spec in sparse)
    parse.attr["Tdense"].list.type.extend(spec.dtype.as_datatype_enum for spec in dense)
    for spec in dense:
        shape = parse.attr["dense_shapes"].list.shape.add()
        for dim in spec.shape.as_list():
            shape.dim.add(size=dim)
    nodes.append(parse)
    if len(sparse) > 1:
        n = len(sparse)
        order = [j * n + i for i in range(n) for j in range(3)] + [3 * n + i for i in range(len(dense))]
        regroup = NodeDef(name=op.name, op="IdentityN", input=[f"{node_name}:{k}" if k else node_name for k in order])
        regroup.attr["T"].list.type.extend(t.dtype.as_datatype_enum for t in op.outputs)
        nodes.append(regroup)
    return nodes
