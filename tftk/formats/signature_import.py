"""Import any TF node whose op type tftk registers, from TensorFlow's OpDef signature.

`tf_op_signatures.json` says, per op type, TF's input args, output args and attrs; export
(`op_signatures.tf_node_form`) writes a tftk op in that form. This module reads it back without
the `_tftk_*` marks export adds, i.e. from a file TensorFlow wrote:

- inputs: TF's args in TF's order. Where tftk keeps a TF input as a build-time attr (Cumsum's
  axis, TopKV2's k, Pad's paddings) the input must be constant; it is folded with the importer's
  `_static` and stored under the attr's name (`ATTR_FOR_INPUT` renames, as export does).
- attrs: TF's attrs as tftk stores them (lists as tuples); a few op types whose tftk form has
  attrs TF lacks get them from `_OWN_ATTRS`.
- outputs: dtypes from the signature's output args (type attr, fixed type, number or type-list
  attr); static shapes from the node's `_output_shapes` when TF wrote them, else from the public
  tftk constructor where `CONSTRUCTORS` names one, else unknown.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, get_default_graph
from tftk.formats.op_table import UnsupportedNodeError, _static
from tftk.formats.op_signatures import ATTR_ALIASES, ATTR_FOR_INPUT
from tftk.ops.array_function import function_attrs
from tftk.ops.constant_value import constant_value

__all__ = ["signature_builder", "import_op_modules", "OP_PACKAGES", "as_bytes_where_needed", "attrs_from_inputs",
           "UNSUPPORTED"]


# Op types whose tftk form has attrs TF does not write: (TF attrs, folded inputs) -> those attrs.
_OWN_ATTRS: dict[str, Callable[[dict], dict]] = {
    "NonMaxSuppressionWithOverlaps": lambda a: {"pad": False},
    "StringSplit": lambda a: {"char_set": True, "maxsplit": -1},  # TF's StringSplit splits at any char
    "Bitcast": lambda a: {"type": np.dtype(a["type"].as_numpy_dtype).name},
}
# Op types the signature does not give enough to rebuild, and why.
UNSUPPORTED: dict[str, str] = {
    "TensorArrayScatter": "TF1's pre-V3 TensorArrayScatter does not say whether the array may grow "
                          "(tftk reads TensorArrayScatterV3)",
    "TileGrad": "TF's deprecated TileGrad(input, multiples) is not rebuilt (TF's Tile gradient is Reshape + Sum)",
    "StringNGrams": "tftk's StringNGrams takes a dense batch of token rows, not TF's ragged (data, data_splits)",
    "UnicodeEncode": "tftk's UnicodeEncode takes a dense batch of code point rows, not TF's ragged "
                     "(input_values, input_splits)",
    "MaxPoolGradGrad": "tftk's MaxPoolGradGrad takes the forward pool's argmax, not TF's (orig_input, orig_output)",
    "CropAndResizeGradImage": "tftk's CropAndResizeGradImage takes the image, not TF's image_size",
}
# String attrs tftk's kernels take as bytes (an AttrValue's string decodes to str).
_BYTES_ATTRS: dict[str, tuple[str, ...]] = {
    "StringJoin": ("separator",), "ReduceJoin": ("separator",), "UnsortedSegmentJoin": ("separator",),
    "StringNGrams": ("separator", "left_pad", "right_pad"),
}


def as_bytes_where_needed(op_type: str, attrs: dict) -> dict:
    """`attrs` with the string attrs tftk's kernel of `op_type` takes as bytes encoded."""
    return {k: v.encode() if k in _BYTES_ATTRS.get(op_type, ()) and isinstance(v, str) else v
            for k, v in attrs.items()}


def _attr_value(value: np.ndarray) -> Any:
    """A folded constant as tftk keeps such attrs: a Python scalar, str, or tuple."""
    if value.dtype == object or value.dtype.kind == "S":
        items = [v.decode() if isinstance(v, bytes) else v for v in np.ravel(value).tolist()]
        return items[0] if value.ndim == 0 else tuple(items)
    return value.item() if value.ndim == 0 else tuple(value.tolist())


def _output_specs(signature: dict, attrs: dict, name: str) -> list:
    """One dtype per output tensor, from the signature's output args and the node's attrs."""
    out = []
    for arg, type_attr, fixed, number_attr, list_attr in signature["outputs"]:
        if list_attr:
            out.extend(attrs[list_attr])
            continue
        dtype = attrs.get(type_attr) if type_attr else _fixed_dtype(fixed)
        if not isinstance(dtype, dtypes.DType):
            raise UnsupportedNodeError(f"node {name!r} ({signature['op']}): output {arg!r} is a {dtype!r} handle, "
                                       f"which tftk does not rebuild from TF's signature (queues, readers, iterators)")
        out.extend([dtype] * (int(attrs[number_attr]) if number_attr else 1))
    return out


def _fixed_dtype(enum: int) -> Any:
    from tftk.formats.importer import _numpy_name
    named = _numpy_name(enum)
    return named if named in ("resource", "variant") or isinstance(named, int) else dtypes.as_dtype(named)


def _tensor_positions(signature: dict, count: int) -> list[tuple[str, int, int]]:
    """(TF arg, start, size) of each TF input arg among the node's `count` inputs."""
    from tftk.formats.op_signatures import _arity
    args = signature["inputs"]
    spans, start = [], 0
    for arg, size in zip(args, _arity(args, count)):
        spans.append((arg[0], start, size))
        start += size
    return spans


def _tftk_inputs(op_type: str, signature: dict, inputs: Sequence[Tensor], name: str) -> tuple[list, dict]:
    """tftk's inputs (in tftk's order) and the attrs folded from TF inputs tftk keeps as attrs."""
    from tftk.formats.op_signatures import _INPUT_ALIASES, ATTR_INPUTS, _declared_input_names
    declared = _declared_input_names(op_type)
    kept_as_attrs = ATTR_INPUTS.get(op_type, ())
    tensors: dict[str, list] = {}
    attrs: dict = {}
    for arg, start, size in _tensor_positions(signature, len(inputs)):
        taken = list(inputs[start:start + size])
        tftk_name = next((n for n in (arg, *_INPUT_ALIASES.get(arg, ())) if n in declared), None) \
            if declared is not None else (None if arg in kept_as_attrs else arg)
        if tftk_name is None:
            attrs[ATTR_FOR_INPUT.get(arg, arg)] = _attr_value(np.asarray(_static(taken[0], name, arg)))
        else:
            tensors[tftk_name] = taken
    order = declared if declared is not None else list(tensors)
    missing = [n for n in order if n not in tensors]
    if missing:
        raise UnsupportedNodeError(f"node {name!r}: no TF input gives tftk's {missing[0]!r}")
    return [t for n in order for t in tensors[n]], attrs


def attrs_from_inputs(op_type: str, inputs: Sequence[Tensor], used: Sequence[int], name: str) -> dict:
    """The attrs TF's inputs other than the `used` positions stand for (Consts export wrote for
    tftk's build-time attrs), folded: tftk's own form cannot always write them as attrs."""
    from tftk.formats.op_signatures import _signatures
    folded = {}
    for arg, start, size in _tensor_positions(_signatures()[op_type], len(inputs)):
        if size == 1 and start not in used:
            folded[ATTR_FOR_INPUT.get(arg, arg)] = _attr_value(np.asarray(_static(inputs[start], name, arg)))
    return folded


# The packages whose modules register op types, imported lazily with the API that builds them.
OP_PACKAGES = ("tftk.ops", "tftk.train", "tftk.summary", "tftk.data", "tftk.debug", "tftk.feature_column")


def import_op_modules(packages: Sequence[str] = OP_PACKAGES) -> None:
    """Import every module of `packages`, so the op types they register are known (modules of an
    optional extra that is not installed are left out)."""
    for package in packages:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            try:
                importlib.import_module(info.name)
            except ImportError:
                continue


@functools.cache
def _register_every_op_type() -> None:
    """Once per process: a graph from a file may use an op type before anything built one."""
    import_op_modules()


def signature_builder(node: Any) -> Callable | None:
    """A builder for `node` from TF's signature of its op type, or None when tftk does not
    register the type or TF's signature of it is unknown."""
    from tftk.formats.op_signatures import _signatures
    from tftk.framework import registry
    signature = _signatures().get(node.op)
    if signature is not None and registry.find(node.op) is None:
        _register_every_op_type()
    kind = registry.find(node.op)
    if signature is None or kind is None or kind.kernel is None and kind.inline is None:
        return None
    shapes = None
    if "_output_shapes" in node.attr:
        from tftk.summary.tensor_proto import shape_dims
        shapes = [shape_dims(s) for s in node.attr["_output_shapes"].list.shape]

    def build(inputs: Sequence[Tensor], attrs: dict, name: str):
        from tftk.framework.tensor_shape import TensorShape
        if node.op in UNSUPPORTED:
            raise UnsupportedNodeError(f"node {name!r} ({node.op}): {UNSUPPORTED[node.op]}")
        constructor = CONSTRUCTORS.get(node.op)
        if constructor is not None:
            return constructor(list(inputs), attrs, name)
        tensors, folded = _tftk_inputs(node.op, signature, inputs, name)
        types = _output_specs(dict(signature, op=node.op), attrs, name)
        own = {ATTR_ALIASES.get(k, k): tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}
        own.update(folded)
        if node.op in _OWN_ATTRS:
            own.update(_OWN_ATTRS[node.op](own))
        own = as_bytes_where_needed(node.op, own)
        taken = function_attrs(node.op, own)
        own = own if taken is None else taken
        dims = shapes if shapes is not None and len(shapes) == len(types) else [None] * len(types)
        return get_default_graph().create_op(node.op, tensors, [(t, TensorShape(s)) for t, s in zip(types, dims)],
                                             name, own)
    return build


def _one_hot(x: Sequence[Tensor], a: dict, name: str):
    from tftk.ops.sequence_ops import one_hot
    known = constant_value(x[1])
    depth = x[1] if known is None else int(known)  # run-time depths too
    return one_hot(x[0], depth, x[2], x[3], axis=a.get("axis", -1), name=name)


def _suppression(x: Sequence[Tensor], a: dict, name: str):
    """TF's NonMaxSuppression (iou_threshold an attr) and NonMaxSuppressionWithOverlaps: tftk's
    ops also output the selected scores and their count, TF's only the indices."""
    from tftk.ops.array_function import array_op
    from tftk.framework.constant_op import constant
    inputs = list(x) if len(x) == 5 else [
        *x, constant(a["iou_threshold"], dtypes.float32, name=f"{name}/iou_threshold"),
        constant(float("-inf"), dtypes.float32, name=f"{name}/score_threshold")]
    op_type = "NonMaxSuppressionWithOverlaps" if len(x) == 5 else "NonMaxSuppression"
    return array_op(op_type, inputs, [(dtypes.int32, [None]), (x[1].dtype, [None]), (dtypes.int32, [])], name,
                    {"pad": False})[0]


def _as_string(x: Sequence[Tensor], a: dict, name: str):
    """TF's AsString attrs become tftk's printf format."""
    from tftk.ops.string_ops import as_string
    return as_string(x[0], precision=a.get("precision", -1), scientific=a.get("scientific", False),
                     shortest=a.get("shortest", False), width=a.get("width", -1), fill=a.get("fill", ""), name=name)


def _pad(x: Sequence[Tensor], a: dict, name: str):
    """TF's Pad (zeros) and MirrorPad (REFLECT or SYMMETRIC); the paddings must be constant."""
    from tftk.ops.tile_pad_ops import pad
    return pad(x[0], _static(x[1], name, "paddings"), mode=a.get("mode", "CONSTANT"), name=name)


def _reduce_join(x: Sequence[Tensor], a: dict, name: str):
    from tftk.ops.string_ops import reduce_join
    axis = np.atleast_1d(_static(x[1], name, "reduction_indices")).tolist()
    return reduce_join(x[0], axis=axis, keep_dims=a.get("keep_dims", False), separator=a.get("separator", ""),
                       name=name)


def _decode_csv(x: Sequence[Tensor], a: dict, name: str):
    from tftk.ops.io_ops import decode_csv
    return decode_csv(x[0], list(x[1:]), field_delim=a.get("field_delim", ","),
                      use_quote_delim=a.get("use_quote_delim", True), na_value=a.get("na_value", ""),
                      select_cols=a.get("select_cols") or None, name=name)


# Op types built by tftk's constructor (static shapes, tftk's attrs) rather than from the signature.
CONSTRUCTORS: dict[str, Callable] = {
    "OneHot": _one_hot, "AsString": _as_string, "Pad": _pad, "MirrorPad": _pad,
    "ReduceJoin": _reduce_join, "DecodeCSV": _decode_csv,
    "NonMaxSuppression": _suppression, "NonMaxSuppressionWithOverlaps": _suppression,
}
