"""TensorFlow op types -> tftk graph builders: how `import_graph_def` rebuilds each NodeDef.

Each entry takes the node's input tensors, its attrs (decoded to Python values) and its name,
and builds the equivalent tftk op(s) through the ops layer's own constructors, returning the node's
outputs in TF's order. Where TF passes a tensor that tftk takes as a build-time argument
(Reshape's shape, a reduction's axis), the input must be constant: `_static` folds it, and a
non-constant one is an error naming the node. Op types missing here are not supported.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import dtypes, registry, tensor_shape
from tftk.framework.constant_op import constant
from tftk.framework.ops import Tensor
from tftk.ops import (array_ops, constant_op, control_flow_ops, conv_pool_ops, custom_gradient, gather_ops, index_ops,
                      logging_ops, math_ops, nn_ops, random_ops, reduction_ops, scan_ops, scatter_ops, segment_ops,
                      sequence_ops, slicing_ops, state_ops, tensor_scatter_extremum_ops, tile_pad_ops)
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.train.training_ops import UPDATE_KINDS

__all__ = ["BUILDERS", "UnsupportedNodeError", "update_builder"]

Builder = Callable[[Sequence[Tensor], dict, str], Any]


class UnsupportedNodeError(ValueError):
    """A NodeDef tftk cannot rebuild (unknown op type, or a dynamic input tftk needs constant)."""


def _static(tensor: Tensor, name: str, what: str):
    value = constant_value(tensor)
    if value is None and tensor.shape.ndims == 1:  # a vector built from constants (a Range of constants)
        known = _partial_vector(tensor)
        value = None if known is None or None in known else np.asarray(known, tensor.dtype.as_numpy_dtype)
    if value is None:
        raise UnsupportedNodeError(f"node {name!r}: its {what} input must be constant in tftk")
    return value


def _partial_vector(tensor: Tensor) -> list | None:
    """A 1-D int tensor's value where known at build time, None for unknown entries (TF's
    constant_value_as_shape): enough to keep static shapes through TF's dynamic Reshape idioms."""
    value = constant_value(tensor)
    if value is not None:
        return [int(v) for v in np.atleast_1d(value).tolist()]
    op = tensor.op
    if op.type in ("Shape", "ShapeDynamic"):
        return None if op.inputs[0].shape.ndims is None else op.inputs[0].shape.as_list()
    if op.type in ("Identity", "Cast"):
        return _partial_vector(op.inputs[0])
    if op.type == "Pack":
        scalars = [constant_value(t) for t in op.inputs]
        return [None if v is None else int(v) for v in scalars]
    if op.type == "ConcatV2":
        parts = [_partial_vector(t) for t in op.inputs]
        return None if any(p is None for p in parts) else [d for p in parts for d in p]
    if op.type == "InvertPermutation":  # a Transpose's gradient transposes back
        perm = _partial_vector(op.inputs[0])
        return None if perm is None or None in perm else np.argsort(perm).tolist()
    if op.type == "Range":
        bounds = [constant_value(t) for t in op.inputs]
        return None if any(b is None for b in bounds) else list(range(*(int(b) for b in bounds)))
    if op.type == "Slice":
        whole, begin, size = _partial_vector(op.inputs[0]), constant_value(op.inputs[1]), constant_value(op.inputs[2])
        if whole is None or begin is None or size is None:
            return None
        start = int(begin[0])
        return whole[start:] if int(size[0]) == -1 else whole[start:start + int(size[0])]
    return None


def _transpose(x, a, name):
    """TF's Transpose; a perm built at run time from constants (dynamic_rnn's concat of a range) is folded."""
    perm = _partial_vector(x[1])
    if perm is None or None in perm:
        raise UnsupportedNodeError(f"node {name!r}: its perm input must be constant in tftk")
    return array_ops.transpose(x[0], perm, name=name)


def _tile(x, a, name):
    """TF's Tile; multiples known only at run time (TF's Mean gradient) make tftk's TileDynamic."""
    multiples = constant_value(x[1])
    return tile_pad_ops.tile(x[0], x[1] if multiples is None else multiples.tolist(), name=name)


def _pad(x, a, name):
    """TF's Pad / PadV2; paddings known only at run time make tftk's PadDynamic."""
    paddings = constant_value(x[1])
    value = _static(x[2], name, "constant_values") if len(x) > 2 else 0
    return tile_pad_ops.pad(x[0], x[1] if paddings is None else paddings, constant_values=value, name=name)


def _broadcast_gradient_args(s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's BroadcastGradientArgs: the axes each of two broadcast shapes was stretched along."""
    rank = max(len(s0), len(s1))
    padded = [[1] * (rank - len(s)) + [int(d) for d in s] for s in (s0, s1)]
    axes = [[i for i in range(rank) if padded[k][i] == 1 and padded[1 - k][i] != 1
             or i < rank - len((s0, s1)[k])] for k in (0, 1)]
    return tuple(np.asarray(a, s0.dtype) for a in axes)


registry.register_op("BroadcastGradientArgs", lambda op, ctx: _broadcast_gradient_args)
registry.register_op("SumDynamic", lambda op, ctx: _sum_dynamic(op.get_attr("keepdims")))
registry.not_differentiable("BroadcastGradientArgs", "SumDynamic")


def _sum_dynamic(keep: bool):
    return lambda x, axes: np.sum(x, axis=tuple(int(a) for a in np.atleast_1d(axes)), keepdims=keep)


def _concat_offset(axis: np.ndarray, *shapes: np.ndarray) -> tuple:
    """TF's ConcatOffset: where each input starts along `axis` in the concatenation."""
    starts = np.cumsum([0] + [int(s[int(axis)]) for s in shapes[:-1]])
    out = []
    for start, shape in zip(starts, shapes):
        offset = np.zeros_like(shape)
        offset[int(axis)] = start
        out.append(offset)
    return tuple(out)


registry.register_op("ConcatOffset", lambda op, ctx: _concat_offset)
registry.not_differentiable("ConcatOffset")


def _concat_offsets(x, a, name):
    op = make_multi_op("ConcatOffset", list(x), [(t.dtype, t.shape) for t in x[1:]], name)
    return op.outputs


def _split_v(x, a, name):
    sizes = [int(v) for v in np.atleast_1d(_static(x[1], name, "size_splits"))]
    return array_ops.split(x[0], sizes, axis=_axis(x[2], name), name=name)


def _lstm_block_cell_grad(x, a, name):
    """TF's LSTMBlockCellGrad: tftk's takes all but x, h_prev, w and b (used by TF for shapes only)."""
    cs_prev, wci, wcf, wco = x[1], x[4], x[5], x[6]
    op = make_multi_op("LSTMBlockCellGrad", [cs_prev, wci, wcf, wco, *x[8:16]],
                       [(cs_prev.dtype, cs_prev.shape), (cs_prev.dtype, [cs_prev.shape[0], x[3].shape[1]]),
                        (cs_prev.dtype, wci.shape), (cs_prev.dtype, wcf.shape), (cs_prev.dtype, wco.shape)],
                       name, {"use_peephole": bool(a.get("use_peephole", False))})
    return op.outputs


def _gradient_args(x, a, name):
    op = make_multi_op("BroadcastGradientArgs", [x[0], x[1]], [(x[0].dtype, [None]), (x[0].dtype, [None])], name)
    return op.outputs


def _sum(x, a, name):
    """TF's Sum; axes only known at run time (BroadcastGradientArgs' output) get a numpy-kernel op."""
    if constant_value(x[1]) is not None:
        return reduction_ops.reduce_sum(x[0], axis=_axis(x[1], name), keepdims=a.get("keep_dims", False), name=name)
    return make_op("SumDynamic", [x[0], x[1]], x[0].dtype, None, name, {"keepdims": a.get("keep_dims", False)})


def _broadcast_to(x, a, name):
    """TF's BroadcastTo; a shape known only at run time broadcasts as tftk's BroadcastLike."""
    if constant_value(x[1]) is not None:
        return tile_pad_ops.broadcast_to(x[0], x[1], name=name)
    return make_op("BroadcastLike", [x[0], x[1]], x[0].dtype, _partial_vector(x[1]), name)


def _reshape(x, a, name):
    out = array_ops.reshape(x[0], x[1], name=name)
    dims = _partial_vector(x[1])
    if dims is not None and out.shape.ndims is None:
        out.set_shape([None if d is None or d < 0 else d for d in dims])
    return out


def _axis(tensor: Tensor, name: str):
    value = _static(tensor, name, "axis")
    return value.tolist() if np.ndim(value) else int(value)


def _unary(fn: Callable) -> Builder:
    return lambda x, a, name: fn(x[0], name=name)


def _binary(fn: Callable) -> Builder:
    return lambda x, a, name: fn(x[0], x[1], name=name)


def _reduce(fn: Callable) -> Builder:
    return lambda x, a, name: fn(x[0], axis=_axis(x[1], name), keepdims=a.get("keep_dims", False), name=name)


def _same(op_type: str, *keep: str) -> Builder:
    """A tftk op of the same type, inputs and (listed) attrs as TF's, one output like its first input."""
    def build(x, a, name):
        attrs = {k: tuple(a[k]) if isinstance(a[k], list) else a[k] for k in keep if k in a}
        return make_op(op_type, list(x), x[0].dtype, x[0].shape if op_type != "BiasAddGrad" else None,
                       name, attrs)
    return build


def update_builder(op_type: str) -> Builder:
    """TF's Apply* / SparseApply* optimizer update: its inputs (TF's order, by TF's arg names) in
    tftk's order."""
    kind = UPDATE_KINDS[op_type.removeprefix("Sparse")]

    def build(x, a, name):
        from tftk.formats.op_signatures import tf_input_names
        position = {arg: i for i, arg in enumerate(tf_input_names(op_type))}
        tftk_names = registry.lookup(op_type).extra["input_names"]
        attrs = {k: a[k] for k in kind.static + ("use_locking",) if k in a}
        return make_multi_op(op_type, [x[position[n]] for n in tftk_names], [], name, attrs)
    return build


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _slice_key(x: Sequence[Tensor], a: dict, name: str) -> tuple:
    from tftk.ops.slicing_ops import masked_key
    bounds = [[int(v) for v in np.atleast_1d(_static(t, name, what))] for t, what in zip(x, ("begin", "end", "strides"))]
    return masked_key(*bounds, *(int(a.get(m, 0)) for m in _MASKS), op_name=name)


def _bounds_known(x: Sequence[Tensor]) -> bool:
    return all(constant_value(t) is not None or _partial_vector(t) is not None and None not in _partial_vector(t)
               for t in x)


def _strided_slice(x, a, name):
    """TF's StridedSlice(input, begin, end, strides): tftk's keyed StridedSlice when the bounds are
    constant, else a slice keyed at run time."""
    from tftk.ops.slicing_ops import sliced_shape, strided_slice_at_run_time
    if not _bounds_known(x[1:4]):
        return strided_slice_at_run_time(*x[:4], tuple(int(a.get(m, 0)) for m in _MASKS), name)
    key = _slice_key(x[1:4], a, name)
    return make_op("StridedSlice", [x[0]], x[0].dtype, sliced_shape(x[0].shape, key), name, {"key": key})


def _strided_slice_grad(x, a, name):
    """TF's StridedSliceGrad(shape, begin, end, strides, dy): tftk's takes the forward input, which
    is the tensor `shape` was taken of (TF's gradient passes Shape(x))."""
    if not _bounds_known(x[1:4]):
        masks = tuple(int(a.get(m, 0)) for m in _MASKS)
        shape = _partial_vector(x[0])
        return make_op("StridedSliceGradDynamic", list(x), x[4].dtype, None if shape is None else shape, name,
                       {"masks": masks})
    if x[0].op.type not in ("Shape", "ShapeDynamic"):
        raise UnsupportedNodeError(f"node {name!r}: StridedSliceGrad whose shape is not a Shape op's output")
    forward = x[0].op.inputs[0]
    key = _slice_key(x[1:4], a, name)
    return make_op("StridedSliceGrad", [forward, x[4]], x[4].dtype, forward.shape, name, {"key": key})


def _hw(values) -> tuple:
    """TF's NHWC [1, h, w, 1] as tftk's (h, w)."""
    values = tuple(int(v) for v in values)
    return values[1:3] if len(values) == 4 else values


def _conv_attrs(a: dict) -> dict:
    return {"strides": _hw(a["strides"]), "padding": a["padding"], "dilations": _hw(a.get("dilations") or (1, 1))}


def _conv_backprop(op_type: str) -> Builder:
    def build(x, a, name):
        if a.get("data_format", "NHWC") != "NHWC":
            raise UnsupportedNodeError(f"node {name!r}: {op_type} with data_format {a['data_format']}")
        return make_op(op_type, list(x), x[2].dtype, None, name, _conv_attrs(a))
    return build


def _max_pool_grad(x, a, name):
    """TF's MaxPoolGrad(orig_input, orig_output, grad): tftk's takes the forward op's argmax."""
    forward = x[1].op
    if forward.type != "MaxPool":
        raise UnsupportedNodeError(f"node {name!r}: MaxPoolGrad whose orig_output is not a MaxPool output")
    return make_op("MaxPoolGrad", [x[2], forward.outputs[1], x[0]], x[2].dtype, x[0].shape, name)


def _xent(x, a, name):
    op = make_multi_op("SoftmaxCrossEntropyWithLogits", [x[0], x[1]],
                       [(x[0].dtype, x[0].shape[:1]), (x[0].dtype, x[0].shape)], name)
    return op.outputs


def _scatter(fn: Callable) -> Builder:
    return lambda x, a, name: fn(x[0], x[1], x[2], name=name)


def _variable(x, a, name):
    return state_ops.variable_op(tensor_shape.TensorShape(a["shape"]), a["dtype"], name)


def _const(x, a, name):
    return constant(a["value"], dtype=a["dtype"], name=name)


def _placeholder(x, a, name):
    return constant_op.placeholder(a["dtype"], a.get("shape"), name=name)


def _random(op_type: str) -> Builder:
    """TF's random ops keep their seeds (0 means none, as tftk stores None)."""
    def build(x, a, name):
        dims = _partial_vector(x[0])
        return make_op(op_type, [x[0]], a["dtype"], None if dims is None else dims, name,
                       _seeds(a))
    return build


def _seeds(a: dict) -> dict:
    """A random node's seed attrs: TF's (0, 0) means "seeded at random", tftk's (None, None)."""
    seed, seed2 = int(a.get("seed") or 0), int(a.get("seed2") or 0)
    return {"seed": None, "seed2": None} if seed == seed2 == 0 else {"seed": seed, "seed2": seed2}


def _uniform_int(x, a, name):
    return make_op("RandomUniformInt", list(x), a["Tout"], _partial_vector(x[0]), name,
                   _seeds(a))


def _per_parameter_random(op_type: str, dtype_attr: str) -> Builder:
    """RandomGamma / RandomPoissonV2(shape, parameter): `shape` draws of each parameter, seeds kept."""
    def build(x, a, name):
        dims = _partial_vector(x[0])
        shape = tensor_shape.TensorShape(dims).concatenate(x[1].shape) if dims is not None else None
        return make_op(op_type, list(x), a[dtype_attr], shape, name, _seeds(a))
    return build


def _parse_example(x, a, name):
    """TF's ParseExample (keys and defaults as Const inputs) rebuilt as tftk's, its outputs in TF's order
    (all sparse indices, all sparse values, all sparse shapes, then the dense values)."""
    from tftk.ops.parsing_ops import FixedLenFeature, VarLenFeature, parse_example_op
    n_sparse, n_dense = a["Nsparse"], a["Ndense"]
    keys = [_static(t, name, "feature key") for t in x[2:2 + n_sparse + n_dense]]
    keys = [k.item().decode() if isinstance(k.item(), bytes) else str(k.item()) for k in keys]
    defaults = [_static(t, name, "dense default") for t in x[2 + n_sparse + n_dense:]]
    features = {key: VarLenFeature(dtype) for key, dtype in zip(keys[:n_sparse], a.get("sparse_types") or [])}
    for key, dtype, shape, default in zip(keys[n_sparse:], a.get("Tdense") or [], a.get("dense_shapes") or [],
                                          defaults):
        features[key] = FixedLenFeature(shape, dtype, None if np.size(default) == 0 else default)
    names = None if x[1].shape.num_elements() == 0 else x[1]
    outputs = parse_example_op(x[0], features, names, name).outputs
    n = n_sparse
    return [outputs[3 * i] for i in range(n)] + [outputs[3 * i + 1] for i in range(n)] + \
        [outputs[3 * i + 2] for i in range(n)] + list(outputs[3 * n:])


BUILDERS: dict[str, Builder] = {
    "ParseExample": _parse_example,
    "IdentityN": lambda x, a, name: custom_gradient.identity_n(list(x), name=name),
    "Placeholder": _placeholder,
    "PlaceholderWithDefault": lambda x, a, name: constant_op.placeholder_with_default(x[0], a["shape"], name=name),
    "Const": _const,
    "Identity": _unary(array_ops.identity),
    "StopGradient": _unary(array_ops.stop_gradient),
    "NoOp": lambda x, a, name: control_flow_ops.no_op(name=name),
    "VariableV2": _variable,
    "Variable": _variable,
    "Assign": lambda x, a, name: state_ops.assign(x[0], x[1], validate_shape=a.get("validate_shape", True),
                                                  name=name),
    "AssignAdd": lambda x, a, name: state_ops.assign_add(x[0], x[1], name=name),
    "AssignSub": lambda x, a, name: state_ops.assign_sub(x[0], x[1], name=name),
    "MatMul": lambda x, a, name: math_ops.matmul(x[0], x[1], transpose_a=a.get("transpose_a", False),
                                                 transpose_b=a.get("transpose_b", False), name=name),
    "BiasAdd": lambda x, a, name: nn_ops.bias_add(x[0], x[1], name=name),
    "Add": _binary(math_ops.add), "AddV2": _binary(math_ops.add), "Sub": _binary(math_ops.subtract),
    "Mul": _binary(math_ops.multiply), "RealDiv": _binary(math_ops.realdiv), "FloorMod": _binary(math_ops.floormod),
    "FloorDiv": _binary(math_ops.floordiv), "Maximum": _binary(math_ops.maximum),
    "Minimum": _binary(math_ops.minimum),
    "Pow": _binary(math_ops.pow), "SquaredDifference": _binary(math_ops.squared_difference),
    "Equal": _binary(math_ops.equal), "NotEqual": _binary(math_ops.not_equal), "Less": _binary(math_ops.less),
    "Greater": _binary(math_ops.greater), "LessEqual": _binary(math_ops.less_equal),
    "GreaterEqual": _binary(math_ops.greater_equal), "LogicalAnd": _binary(math_ops.logical_and),
    "Neg": _unary(math_ops.negative), "Square": _unary(math_ops.square), "Sqrt": _unary(math_ops.sqrt),
    "Rsqrt": _unary(math_ops.rsqrt), "Exp": _unary(math_ops.exp), "Log": _unary(math_ops.log),
    "Abs": _unary(math_ops.abs),
    "Sin": _unary(math_ops.sin), "Cos": _unary(math_ops.cos),
    "Tanh": _unary(math_ops.tanh), "Sigmoid": _unary(math_ops.sigmoid), "Relu": _unary(nn_ops.relu),
    "Relu6": _unary(nn_ops.relu6), "Elu": _unary(nn_ops.elu), "Softplus": _unary(nn_ops.softplus),
    "Softmax": _unary(nn_ops.softmax), "LogSoftmax": _unary(nn_ops.log_softmax),
    "ZerosLike": _unary(array_ops.zeros_like), "OnesLike": _unary(array_ops.ones_like),
    "Cast": lambda x, a, name: math_ops.cast(x[0], a["DstT"], name=name),
    "Shape": lambda x, a, name: array_ops.shape(x[0], out_type=a.get("out_type", dtypes.int32), name=name),
    "ShapeN": lambda x, a, name: [array_ops.shape(t, out_type=a.get("out_type", dtypes.int32), name=name) for t in x],
    "Size": lambda x, a, name: array_ops.size(x[0], out_type=a.get("out_type", dtypes.int32), name=name),
    "Reshape": _reshape,
    "Squeeze": lambda x, a, name: array_ops.squeeze(x[0], axis=a.get("squeeze_dims") or None, name=name),
    "ExpandDims": lambda x, a, name: array_ops.expand_dims(x[0], _axis(x[1], name), name=name),
    "ConcatV2": lambda x, a, name: array_ops.concat(list(x[:-1]), _axis(x[-1], name), name=name),
    "Pack": lambda x, a, name: array_ops.stack(list(x), axis=a.get("axis", 0), name=name),
    "Tile": _tile, "Pad": _pad, "PadV2": _pad,
    "Slice": lambda x, a, name: slicing_ops.slice(x[0], x[1], x[2], name=name),
    "GatherV2": lambda x, a, name: gather_ops.gather(x[0], x[1], axis=_axis(x[2], name), name=name),
    "ScatterNd": lambda x, a, name: scatter_ops.scatter_nd(x[0], x[1], x[2], name=name),
    "Fill": lambda x, a, name: array_ops.fill(x[0], x[1], name=name),
    "Mean": _reduce(reduction_ops.reduce_mean), "Sum": _sum, "BroadcastTo": _broadcast_to,
    "BroadcastGradientArgs": _gradient_args, "Prod": _reduce(reduction_ops.reduce_prod),
    "Max": _reduce(reduction_ops.reduce_max), "Min": _reduce(reduction_ops.reduce_min),
    "ArgMax": lambda x, a, name: scan_ops.argmax(x[0], _axis(x[1], name),
                                                 output_type=a.get("output_type", dtypes.int64), name=name),
    "ArgMin": lambda x, a, name: scan_ops.argmin(x[0], _axis(x[1], name),
                                                 output_type=a.get("output_type", dtypes.int64), name=name),
    "Conv2D": lambda x, a, name: conv_pool_ops.conv2d(x[0], x[1], a["strides"], a["padding"],
                                                      data_format=a.get("data_format", "NHWC"),
                                                      dilations=a.get("dilations") or [1, 1, 1, 1], name=name),
    "MaxPool": lambda x, a, name: conv_pool_ops.max_pool(x[0], a["ksize"], a["strides"], a["padding"], name=name),
    "AvgPool": lambda x, a, name: conv_pool_ops.avg_pool(x[0], a["ksize"], a["strides"], a["padding"], name=name),
    "SoftmaxCrossEntropyWithLogits": _xent,
    "TruncatedNormal": _random("TruncatedNormal"), "RandomStandardNormal": _random("RandomStandardNormal"),
    "RandomUniform": _random("RandomUniform"), "RandomUniformInt": _uniform_int,
    "RandomShuffle": lambda x, a, name: make_op("RandomShuffle", [x[0]], x[0].dtype, x[0].shape, name, _seeds(a)),
    "Multinomial": lambda x, a, name: random_ops.multinomial_node("Multinomial", x[0], x[1], (),
                                                                  a.get("output_dtype", dtypes.int64), _seeds(a), name),
    "RandomGamma": _per_parameter_random("RandomGamma", "T"),
    "BroadcastArgs": lambda x, a, name: tensor_scatter_extremum_ops.broadcast_dynamic_shape(x[0], x[1]),
    "RandomPoissonV2": _per_parameter_random("RandomPoissonV2", "dtype"),
    "ReluGrad": _same("ReluGrad"),
    "BiasAddGrad": _same("BiasAddGrad"),
    "MaxPoolGrad": _max_pool_grad,
    "Conv2DBackpropInput": _conv_backprop("Conv2DBackpropInput"),
    "Conv2DBackpropFilter": _conv_backprop("Conv2DBackpropFilter"),
    "Select": lambda x, a, name: gather_ops.where(x[0], x[1], x[2], name=name),
    "StridedSlice": _strided_slice, "StridedSliceGrad": _strided_slice_grad,
    "ConcatOffset": _concat_offsets, "Log1p": _unary(math_ops.log1p),
    "Split": lambda x, a, name: array_ops.split(x[1], a["num_split"], axis=_axis(x[0], name), name=name),
    "SplitV": _split_v, "LSTMBlockCellGrad": _lstm_block_cell_grad,
    "SelectV2": lambda x, a, name: index_ops.where_v2(x[0], x[1], x[2], name=name),
    "ReverseSequence": lambda x, a, name: index_ops.reverse_sequence(x[0], x[1], seq_axis=a["seq_dim"],
                                                                     batch_axis=a.get("batch_dim", 0), name=name),
    "Transpose": _transpose,
    "Range": lambda x, a, name: sequence_ops.range(x[0], x[1], x[2], dtype=a.get("Tidx"), name=name),
    "All": _reduce(reduction_ops.reduce_all), "Any": _reduce(reduction_ops.reduce_any),
    "AddN": lambda x, a, name: math_ops.add_n(list(x), name=name),
    "SigmoidGrad": lambda x, a, name: math_ops.sigmoid_grad(x[0], x[1]),
    "TanhGrad": lambda x, a, name: math_ops.tanh_grad(x[0], x[1]),
    "RsqrtGrad": lambda x, a, name: math_ops.rsqrt_grad(x[0], x[1]),
    "InvertPermutation": lambda x, a, name: sequence_ops.invert_permutation(x[0], name=name),
    "DynamicStitch": lambda x, a, name: scatter_ops.dynamic_stitch(list(x[:len(x) // 2]), list(x[len(x) // 2:]),
                                                                   name=name),
    "Unique": lambda x, a, name: sequence_ops.unique(x[0], out_idx=a.get("out_idx", dtypes.int32), name=name),
    "UnsortedSegmentSum": lambda x, a, name: segment_ops.unsorted_segment_sum(x[0], x[1], x[2], name=name),
    "Assert": lambda x, a, name: logging_ops.Assert(x[0], list(x[1:]), summarize=a.get("summarize"), name=name),
}
BUILDERS.update({op_type: update_builder(op_type) for op_type in UPDATE_KINDS})
BUILDERS.update({"Scatter" + kind: _scatter(getattr(state_ops, "scatter_" + kind.lower()))
                 for kind in ("Add", "Sub", "Update")})
