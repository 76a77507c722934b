"""tftk's gradient helper ops written as the TF ops TensorFlow's own gradients use.

tftk's gradient rules build small helper ops (SumToShape, BroadcastLike, ExpandReduced, ...) that
run as one numpy call each. TensorFlow has no such op types, so a GraphDef holding them could not
be imported by TF. On export each helper becomes the composition TF's math_grad.py builds
(Sum over BroadcastGradientArgs' axes + Reshape, BroadcastTo, ExpandDims, Size/Maximum/FloorDiv,
MaxPoolGrad on the forward output); the last node keeps the helper's name, so consumers' inputs
are unchanged, and the nodes it adds are named under it. tftk's importer maps these TF ops back.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["helper_nodes", "key_operands"]


def _attr_node(name: str, op_type: str, inputs: list[str], device: str, **attrs: Any):
    from tftk.proto.tensorflow import NodeDef
    from tftk.summary.graph_def import attr_value
    node = NodeDef(name=name, op=op_type, input=inputs, device=device)
    for key, value in attrs.items():
        node.attr[key].CopyFrom(attr_value(value))
    return node


def _const_node(name: str, value: Any, device: str, dtype=None):
    from tftk.framework import dtypes
    from tftk.proto.tensorflow import AttrValue
    from tftk.summary.tensor_proto import make_tensor_proto
    dtype = dtype or dtypes.int32
    array = np.asarray(value, dtype.as_numpy_dtype)
    node = _attr_node(name, "Const", [], device, dtype=dtype)
    node.attr["value"].CopyFrom(AttrValue(tensor=make_tensor_proto(array)))
    return node


def _source(tensor) -> str:
    return tensor.op.name + (f":{tensor.value_index}" if tensor.value_index else "")


class _Builder:
    """Collects the TF nodes of one helper op: `add` names them `<op>/<suffix>`, `finish` makes the
    node named as the op itself (with the op's control inputs)."""

    def __init__(self, op):
        self.op, self.nodes, self.device = op, [], op.device or ""
        from tftk.framework import dtypes
        self.int32 = dtypes.int32

    def add(self, suffix: str, op_type: str, inputs: list[str], **attrs: Any) -> str:
        name = f"{self.op.name}/{suffix}"
        self.nodes.append(_attr_node(name, op_type, inputs, self.device, **attrs))
        return name

    def const(self, suffix: str, value: Any, dtype=None) -> str:
        name = f"{self.op.name}/{suffix}"
        self.nodes.append(_const_node(name, value, self.device, dtype))
        return name

    def finish(self, op_type: str, inputs: list[str], **attrs: Any) -> list:
        controls = [f"^{c.name}" for c in self.op.control_inputs]
        self.nodes.append(_attr_node(self.op.name, op_type, inputs + controls, self.device, **attrs))
        return self.nodes

    def sum_to(self, grad: str, dtype, target: str) -> list:
        """Sum `grad` over the axes BroadcastGradientArgs finds against shape `target`, then Reshape."""
        shape = self.add("Shape", "Shape", [grad], T=dtype, out_type=self.int32)
        axes = self.add("BroadcastGradientArgs", "BroadcastGradientArgs", [shape, target], T=self.int32)
        summed = self.add("Sum", "Sum", [grad, f"{axes}:1"], T=dtype, Tidx=self.int32, keep_dims=False)
        return self.finish("Reshape", [summed, target], T=dtype, Tshape=self.int32)


def _sum_to_shape(op) -> list:
    """SumToShape(g) with a static target: Sum over axes known now (or found at run time) + Reshape."""
    b, grad, dtype = _Builder(op), _source(op.inputs[0]), op.inputs[0].dtype
    target = list(op.attrs["shape"])
    rank = op.inputs[0].shape.ndims
    shape = b.const("shape", target)
    if rank is None:
        return b.sum_to(grad, dtype, shape)
    lead = rank - len(target)
    axes = list(range(lead)) + [i + lead for i, d in enumerate(target) if d == 1]
    summed = b.add("Sum", "Sum", [grad, b.const("axes", axes)], T=dtype, Tidx=b.int32, keep_dims=False)
    return b.finish("Reshape", [summed, shape], T=dtype, Tshape=b.int32)


def _sum_to_shape_of(op) -> list:
    b = _Builder(op)
    return b.sum_to(_source(op.inputs[0]), op.inputs[0].dtype, _source(op.inputs[1]))


def _broadcast_like(op) -> list:
    x, shape = op.inputs
    return _Builder(op).finish("BroadcastTo", [_source(x), _source(shape)], T=x.dtype, Tidx=shape.dtype)


def _reshape_to_input(op) -> list:
    """ReshapeLike / ReshapeDynamic(x, shape): TF's Reshape, whose shape is a tensor anyway."""
    x, shape = op.inputs
    return _Builder(op).finish("Reshape", [_source(x), _source(shape)], T=x.dtype, Tshape=shape.dtype)


def _tile_dynamic(op) -> list:
    """TileDynamic(x, multiples): TF's Tile, whose multiples are a tensor anyway."""
    x, multiples = op.inputs
    return _Builder(op).finish("Tile", [_source(x), _source(multiples)], T=x.dtype, Tmultiples=multiples.dtype)


def _pad_dynamic(op) -> list:
    """PadDynamic(x, paddings, value): TF's PadV2, whose paddings and value are tensors anyway."""
    x, paddings, value = op.inputs
    return _Builder(op).finish("PadV2", [_source(x), _source(paddings), _source(value)], T=x.dtype,
                               Tpaddings=paddings.dtype)


def _pad_v2(op) -> list | None:
    """A Pad whose constant_values is not zero: TF's PadV2 (TF's Pad pads with zeros only, and is
    written from its signature)."""
    x, value = op.inputs[0], op.attrs["constant_values"]
    if not np.any(value):
        return None
    b = _Builder(op)
    return b.finish("PadV2", [_source(x), b.const("paddings", [list(p) for p in op.attrs["paddings"]]),
                              b.const("constant_values", value, x.dtype)], T=x.dtype, Tpaddings=b.int32)


def _one_hot_dynamic(op) -> list:
    """OneHotDynamic(indices, depth, on, off): TF's OneHot, whose depth is a tensor anyway."""
    indices = op.inputs[0]
    return _Builder(op).finish("OneHot", [_source(t) for t in op.inputs], T=op.outputs[0].dtype, TI=indices.dtype,
                               axis=int(op.attrs["axis"]) if op.attrs["axis"] != indices.shape.ndims else -1)


def _expand_reduced(op) -> list:
    """The reduced axes put back as size-1 dims: one ExpandDims per axis (front-counted ones in
    increasing order, then back-counted ones from the end), as np.expand_dims(g, axes) does."""
    b, grad, dtype = _Builder(op), _source(op.inputs[0]), op.inputs[0].dtype
    axes = op.attrs["axis"]
    if axes is None:
        return b.finish("Identity", [grad], T=dtype)
    order = sorted(a for a in axes if a >= 0) + sorted((a for a in axes if a < 0), reverse=True)
    for k, axis in enumerate(order[:-1]):
        grad = b.add(f"ExpandDims_{k}", "ExpandDims", [grad, b.const(f"dim_{k}", axis)], T=dtype, Tdim=b.int32)
    return b.finish("ExpandDims", [grad, b.const("dim", order[-1])], T=dtype, Tdim=b.int32)


def _reduced_count(op) -> list:
    """ReducedCount(x, y) = size(x) // max(size(y), 1), cast to the gradient's dtype (TF's Mean grad)."""
    b = _Builder(op)
    x, y = op.inputs
    sizes = [b.add(f"Size{suffix}", "Size", [_source(t)], T=t.dtype, out_type=b.int32)
             for suffix, t in (("", x), ("_1", y))]
    safe = b.add("Maximum", "Maximum", [sizes[1], b.const("one", 1)], T=b.int32)
    count = b.add("FloorDiv", "FloorDiv", [sizes[0], safe], T=b.int32)
    return b.finish("Cast", [count], SrcT=b.int32, DstT=op.outputs[0].dtype, Truncate=False)


def _sum_keep(op) -> list:
    """SumKeep(x): TF's Sum with keep_dims; all axes of an input of unknown rank are range(rank(x))."""
    b, x = _Builder(op), op.inputs[0]
    axes = op.attrs["axis"]
    if axes is None and x.shape.ndims is None:
        rank = b.add("rank", "Rank", [_source(x)], T=x.dtype)
        axes_node = b.add("axes", "Range", [b.const("start", 0), rank, b.const("delta", 1)], Tidx=b.int32)
    else:
        axes_node = b.const("axes", list(range(x.shape.ndims)) if axes is None else list(axes))
    return b.finish("Sum", [_source(x), axes_node], T=x.dtype, Tidx=b.int32, keep_dims=True)


def _broadcast_to(op) -> list:
    b, x = _Builder(op), op.inputs[0]
    return b.finish("BroadcastTo", [_source(x), b.const("shape", list(op.attrs["shape"]))],
                    T=x.dtype, Tidx=b.int32)


def _max_pool_grad(op) -> list:
    """tftk's MaxPoolGrad(grad, argmax, x) reads the forward op's argmax output; TF's takes
    (orig_input, orig_output, grad) and the window attrs, which the forward MaxPool holds."""
    from tftk.formats.op_export import tf_form
    grad, argmax, x = op.inputs
    forward = argmax.op
    attrs, _ = tf_form(forward)
    return _Builder(op).finish("MaxPoolGrad", [_source(x), _source(forward.outputs[0]), _source(grad)], **attrs)


def _safe_log(op) -> list:
    """SafeLog(x) = log(x) where x > 0, else 0 (Pow's exponent gradient): TF's where/log form."""
    b, x = _Builder(op), op.inputs[0]
    source, dtype = _source(x), x.dtype
    positive = b.add("Greater", "Greater", [source, b.const("zero", 0, dtype)], T=dtype)
    ones = b.add("OnesLike", "OnesLike", [source], T=dtype)
    safe = b.add("Select", "Select", [positive, source, ones], T=dtype)
    return b.finish("Log", [safe], T=dtype)


def key_operands(key: tuple) -> tuple[list[int], list[int], list[int], dict] | None:
    """A numpy key (ints, slices, None, Ellipsis) as TF's StridedSlice begin, end, strides and
    masks, as TF's `tensor[...]` builds them; None when an entry is none of those."""
    begin, end, strides = [], [], []
    masks = dict.fromkeys(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"), 0)
    for i, item in enumerate(key):
        bit = 1 << i
        if item is Ellipsis:
            masks["ellipsis_mask"] |= bit
            item = slice(None)
        elif item is None:
            masks["new_axis_mask"] |= bit
            item = slice(None)
        elif isinstance(item, int):
            begin.append(item), end.append(item + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
            continue
        if not isinstance(item, slice):
            return None
        begin.append(0 if item.start is None else item.start)
        end.append(0 if item.stop is None else item.stop)
        strides.append(1 if item.step is None else item.step)
        masks["begin_mask"] |= bit if item.start is None else 0
        masks["end_mask"] |= bit if item.stop is None else 0
    return begin, end, strides, masks


def _strided_slice(op) -> list | None:
    """tftk's StridedSlice(x) with a key attr: TF's StridedSlice(x, begin, end, strides) + masks."""
    operands = key_operands(op.attrs["key"])
    if operands is None:
        return None
    b, x = _Builder(op), op.inputs[0]
    begin, end, strides, masks = operands
    inputs = [_source(x), b.const("begin", begin), b.const("end", end), b.const("strides", strides)]
    return b.finish("StridedSlice", inputs, T=x.dtype, Index=b.int32, **masks)


def _strided_slice_grad(op) -> list | None:
    """StridedSliceGrad(x, dy): TF's StridedSliceGrad(Shape(x), begin, end, strides, dy) + masks."""
    operands = key_operands(op.attrs["key"])
    if operands is None:
        return None
    b, (x, grad) = _Builder(op), op.inputs
    begin, end, strides, masks = operands
    shape = b.add("Shape", "Shape", [_source(x)], T=x.dtype, out_type=b.int32)
    inputs = [shape, b.const("begin", begin), b.const("end", end), b.const("strides", strides), _source(grad)]
    return b.finish("StridedSliceGrad", inputs, T=grad.dtype, Index=b.int32, **masks)


def _run_time_slice(tf_type: str) -> Callable:
    """StridedSliceDynamic / StridedSliceGradDynamic: TF's StridedSlice / StridedSliceGrad, whose bounds
    are tensors anyway, with the five masks as attrs."""
    def rewrite(op) -> list:
        b = _Builder(op)
        masks = dict(zip(("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"),
                         op.attrs["masks"]))
        return b.finish(tf_type, [_source(t) for t in op.inputs], T=op.outputs[0].dtype, Index=op.inputs[1].dtype,
                        **masks)
    return rewrite


def _embedding_lookup(op) -> list | None:
    """EmbeddingLookup(ids, params) of one params tensor: TF's GatherV2 on axis 0 (as TF builds it).
    Several partitions have no one-op TF form (TF uses DynamicPartition/DynamicStitch): None."""
    if len(op.inputs) != 2:
        return None
    b = _Builder(op)
    ids, params = op.inputs
    return b.finish("GatherV2", [_source(params), _source(ids), b.const("axis", 0)], Tparams=params.dtype,
                    Tindices=ids.dtype, Taxis=b.int32, batch_dims=0)


def _winner_mask(comparison: str) -> Callable:
    """MaximumMask / MinimumMask(x, y): where x wins (ties included) as 1.0, TF's GreaterEqual/LessEqual
    cast to the gradient's dtype (what TF's _MaximumMinimumGrad selects with)."""
    def rewrite(op) -> list:
        b, (x, y) = _Builder(op), op.inputs
        wins = b.add(comparison, comparison, [_source(x), _source(y)], T=x.dtype)
        return b.finish("Cast", [wins], SrcT=_bool(), DstT=op.outputs[0].dtype, Truncate=False)
    return rewrite


def _bool():
    from tftk.framework import dtypes
    return dtypes.bool


def _sigmoid_xent(op) -> list:
    """max(x, 0) - x * z + log1p(exp(-|x|)) with TF's nodes (select on x >= 0, as TF writes it)."""
    b, (x, z) = _Builder(op), op.inputs
    logits, dtype = _source(x), x.dtype
    zeros = b.add("zeros_like", "ZerosLike", [logits], T=dtype)
    cond = b.add("GreaterEqual", "GreaterEqual", [logits, zeros], T=dtype)
    relu = b.add("Select", "Select", [cond, logits, zeros], T=dtype)
    negated = b.add("Neg", "Neg", [logits], T=dtype)
    neg_abs = b.add("Select_1", "Select", [cond, negated, logits], T=dtype)
    product = b.add("mul", "Mul", [logits, _source(z)], T=dtype)
    difference = b.add("sub", "Sub", [relu, product], T=dtype)
    softplus = b.add("Log1p", "Log1p", [b.add("Exp", "Exp", [neg_abs], T=dtype)], T=dtype)
    return b.finish("AddV2", [difference, softplus], T=dtype)


def _concat_grad_slice(op) -> list:
    """ConcatGradSlice(grad, *inputs): TF's concat gradient, Slice(grad, ConcatOffset[i], Shape(x_i))."""
    b, grad, inputs = _Builder(op), op.inputs[0], op.inputs[1:]
    index = op.attrs["index"]
    shapes = [b.add(f"Shape_{j}", "Shape", [_source(x)], T=x.dtype, out_type=b.int32) for j, x in enumerate(inputs)]
    offsets = b.add("ConcatOffset", "ConcatOffset", [b.const("axis", op.attrs["axis"])] + shapes, N=len(shapes))
    begin = offsets + (f":{index}" if index else "")
    return b.finish("Slice", [_source(grad), begin, shapes[index]], T=grad.dtype, Index=b.int32)


def _split(op) -> list:
    """tftk's Split(x) with axis/num/sizes attrs: TF's Split(axis, x) or SplitV(x, sizes, axis)."""
    b, x = _Builder(op), op.inputs[0]
    axis, sizes = op.attrs["axis"], op.attrs["sizes"]
    if sizes is None:
        return b.finish("Split", [b.const("split_dim", axis), _source(x)], T=x.dtype, num_split=len(op.outputs))
    return b.finish("SplitV", [_source(x), b.const("size_splits", list(sizes)), b.const("split_dim", axis)],
                    T=x.dtype, Tlen=b.int32, num_split=len(op.outputs))


def _lstm_block_cell_grad(op) -> list:
    """tftk's LSTMBlockCellGrad leaves out the four inputs TF's kernel only checks shapes with
    (x, h_prev, w, b); they are the forward LSTMBlockCell's, which produced its `i` input."""
    cs_prev, wci, wcf, wco, i, cs, f, o, ci, co, cs_grad, h_grad = op.inputs
    x, _, h_prev, w, _, _, _, b = i.op.inputs
    inputs = [x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, cs_grad, h_grad]
    return _Builder(op).finish("LSTMBlockCellGrad", [_source(t) for t in inputs], T=x.dtype,
                               use_peephole=bool(op.attrs["use_peephole"]))


def _index_row(op) -> list:
    """IndexRow(x, i) = x[i]: TF's GatherV2 on axis 0."""
    b, (x, i) = _Builder(op), op.inputs
    return b.finish("GatherV2", [_source(x), _source(i), b.const("axis", 0)], Tparams=x.dtype, Tindices=i.dtype,
                    Taxis=b.int32, batch_dims=0)


def _index_row_grad(op) -> list:
    """IndexRowGrad(x, i, g): g scattered into row i of zeros shaped like x (ScatterNd)."""
    b, (x, i, g) = _Builder(op), op.inputs
    index = b.add("indices", "Reshape", [_source(i), b.const("index_shape", [1, 1])], T=i.dtype, Tshape=b.int32)
    row = b.add("updates", "ExpandDims", [_source(g), b.const("dim", 0)], T=g.dtype, Tdim=b.int32)
    shape = b.add("shape", "Shape", [_source(x)], T=x.dtype, out_type=i.dtype)
    return b.finish("ScatterNd", [index, row, shape], T=g.dtype, Tindices=i.dtype)


HELPERS: dict[str, Callable] = {
    "SumToShape": _sum_to_shape, "SumToShapeOf": _sum_to_shape_of, "BroadcastLike": _broadcast_like,
    "ReshapeLike": _reshape_to_input, "ReshapeDynamic": _reshape_to_input, "ExpandReduced": _expand_reduced,
    "TileDynamic": _tile_dynamic, "PadDynamic": _pad_dynamic, "Pad": _pad_v2, "OneHotDynamic": _one_hot_dynamic,
    "StridedSliceDynamic": _run_time_slice("StridedSlice"), "StridedSliceGradDynamic": _run_time_slice("StridedSliceGrad"),
    "ReducedCount": _reduced_count, "SumKeep": _sum_keep, "BroadcastTo": _broadcast_to,
    "MaxPoolGrad": _max_pool_grad, "SafeLog": _safe_log, "EmbeddingLookup": _embedding_lookup,
    "StridedSlice": _strided_slice, "StridedSliceGrad": _strided_slice_grad,
    "MaximumMask": _winner_mask("GreaterEqual"), "MinimumMask": _winner_mask("LessEqual"),
    "SigmoidCrossEntropyWithLogits": _sigmoid_xent, "ConcatGradSlice": _concat_grad_slice, "Split": _split,
    "LSTMBlockCellGrad": _lstm_block_cell_grad, "IndexRow": _index_row, "IndexRowGrad": _index_row_grad,
}


# The tftk attrs each rewrite reads: an op of that type without them (a TF-style node handed to
# the converter) is not one of tftk's helpers and keeps its own form.
_READS = {"SumToShape": ("shape",), "ExpandReduced": ("axis",), "SumKeep": ("axis",), "BroadcastTo": ("shape",),
          "ConcatGradSlice": ("axis", "index"), "Split": ("axis", "sizes"), "StridedSlice": ("key",),
          "StridedSliceGrad": ("key",), "LSTMBlockCellGrad": ("use_peephole",), "Pad": ("paddings", "constant_values")}


def helper_nodes(op) -> list | None:
    """TF's nodes for one of tftk's helper ops (the last one named as `op`), None for other ops
    (and for a helper without a TF form in this instance)."""
    rewrite = HELPERS.get(op.type)
    if rewrite is None or not all(name in op.attrs for name in _READS.get(op.type, ())):
        return None
    return rewrite(op)
