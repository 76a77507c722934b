"""The attrs TensorFlow's OpDef requires of a node, worked out from the op's inputs and outputs.

`tf_op_signatures.json` holds, for each TF op type tftk registers, its input and output args and
its attrs with their defaults, as TensorFlow declares them (made by tools/tf_op_signatures.py in
a TensorFlow venv). An op written to a GraphDef gets its type attrs (`T`, `Tidx`, `SrcT`, ...)
from its tensors' dtypes, its number attrs (`N`) from how many tensors a list arg took, tftk's
own value for an attr TF also has (same name, same kind), and TF's default for the rest, so TF
can import the node without tftk having an exporter written for each op type.
"""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["has_tf_signature", "tf_node_form", "tf_input_names", "ATTR_INPUTS", "ATTR_ALIASES", "ATTR_FOR_INPUT"]

_TABLE = Path(__file__).with_name("tf_op_signatures.json")
_KINDS = {"type": "type", "bool": "b", "int": "i", "float": "f", "string": "s", "shape": "shape",
          "list(int)": "list", "list(float)": "list", "list(type)": "list", "list(string)": "list",
          "list(shape)": "list", "list(bool)": "list"}


@functools.lru_cache(maxsize=1)
def _signatures() -> dict:
    return json.loads(_TABLE.read_text())


def has_tf_signature(op_type: str) -> bool:
    """Whether TensorFlow has an op of this type (among those tftk registers)."""
    return op_type in _signatures()


# TF's input arg name -> the tftk attr holding its value at build time, where the names differ.
ATTR_FOR_INPUT = {"dim": "axis", "reduction_indices": "axis", "dimension": "axis", "tags": "tag"}
# Op types that declare no input names but keep some TF inputs as attrs: those args' names.
ATTR_INPUTS: dict[str, tuple[str, ...]] = {
    "Cumsum": ("axis",), "Cumprod": ("axis",), "TopKV2": ("k",), "InTopKV2": ("k",), "OneHot": ("depth",),
    "Pad": ("paddings",), "MirrorPad": ("paddings",), "MirrorPadGrad": ("paddings",),
    "ReverseV2": ("axis",), "ResizeBilinear": ("size",), "ResizeNearestNeighbor": ("size",),
    "ResizeBicubic": ("size",), "ResizeArea": ("size",),
    "RegexFullMatch": ("pattern",), "RegexReplace": ("pattern", "rewrite"),
    "ScalarSummary": ("tags",), "HistogramSummary": ("tag",), "ImageSummary": ("tag",),
}
# TF's attr name -> the tftk attr holding its value, where the names differ.
ATTR_ALIASES = {"seq_dim": "seq_axis", "batch_dim": "batch_axis", "max_images": "max_outputs"}
# Op types whose tftk op has TF's form only in some uses (tftk's StringSplit is also TF's
# StringSplitV2, which splits at a whole separator; TF's StringSplit at any of its characters).
_TF_FORM_WHEN = {"StringSplit": lambda op: bool(op.attrs.get("char_set")),
                 "TileGrad": lambda op: False,  # TF's takes (grad, multiples), tftk's (grad, x)
                 "NonMaxSuppression": lambda op: False}  # tftk's is TF's NonMaxSuppressionV3
# (a Pad with non-zero constant_values is TF's PadV2: gradient_export writes it)
# TF's input arg name -> tftk's input name (as declared in OpKind.extra["input_names"]).
_INPUT_ALIASES = {"rho": ("decay",), "grad": ("values",), "alpha": ("lr",), "delta": ("grad",)}


def _declared_input_names(op_type: str) -> tuple | None:
    """The input names an op type declares (OpKind.extra["input_names"]); None if it declares none."""
    from tftk.framework import registry
    try:
        return registry.lookup(op_type).extra.get("input_names")
    except KeyError:  # not a tftk op type (a stand-in graph): TF's order is taken as is
        return None


def tf_input_names(op_type: str) -> list[str]:
    """TF's input arg names of `op_type`, each as the tftk input name it stands for."""
    own = set(_declared_input_names(op_type) or ())
    return [next((n for n in (arg[0], *_INPUT_ALIASES.get(arg[0], ())) if n in own), arg[0])
            for arg in _signatures()[op_type]["inputs"]]


def _arity(args: list, count: int) -> list[int]:
    """How many tensors each arg takes: one each, the rest to the single list arg (if any)."""
    lists = [i for i, a in enumerate(args) if a[3] or a[4]]
    sizes = [1] * len(args)
    if lists:
        sizes[lists[0]] = max(count - (len(args) - 1), 0)
    return sizes


class _ConstInput:
    """A TF input tftk holds as an attr: written as a Const node `<op>/<arg name>`."""

    def __init__(self, arg: str, value: Any, dtype) -> None:
        self.arg, self.dtype = arg, dtype
        self.value = np.asarray(value, dtype=dtype.as_numpy_dtype)


def _const_dtype(arg: list, signature: dict):
    from tftk.framework import dtypes
    if arg[2]:
        return dtypes.as_dtype(arg[2])
    default = signature["attrs"].get(arg[1], [None, None])[1]
    return _default(default) if default else dtypes.int32


def _tf_inputs(op, signature: dict) -> tuple[list, list[int]] | None:
    """The op's inputs in TF's arg order (attrs TF takes as inputs become _ConstInput), and where
    each tftk input went; None when an arg has no tensor or attr to fill it."""
    from tftk.framework import registry
    args = signature["inputs"]
    names = _declared_input_names(op.type)
    if names is None and op.type in ATTR_INPUTS:
        names = [a[0] for a in args if a[0] not in ATTR_INPUTS[op.type]]
    if names is None or any(a[3] or a[4] for a in args):
        if len(op.inputs) == len(args) or any(a[3] or a[4] for a in args):
            return list(op.inputs), list(range(len(op.inputs)))
        names = [a[0] for a in args[:len(op.inputs)]]  # leading tensors, trailing attrs
    by_name = dict(zip(names, op.inputs))
    position = {name: i for i, name in enumerate(names)}
    inputs, order = [], [0] * len(op.inputs)
    for arg in args:
        name = next((n for n in (arg[0], *_INPUT_ALIASES.get(arg[0], ())) if n in by_name), None)
        if name is not None:
            order[position[name]] = len(inputs)
            inputs.append(by_name[name])
            continue
        attr = ATTR_FOR_INPUT.get(arg[0], arg[0])
        if op.attrs.get(attr) is None:
            return None
        inputs.append(_ConstInput(arg[0], op.attrs[attr], _const_dtype(arg, signature)))
    return (inputs, order) if sorted(order) == list(range(len(op.inputs))) else None


def _from_tensors(args: list, tensors: list, attrs: dict) -> None:
    position = 0
    for (name, type_attr, _fixed, number_attr, list_attr), size in zip(args, _arity(args, len(tensors))):
        taken = tensors[position:position + size]
        position += size
        if number_attr:
            attrs[number_attr] = len(taken)
        if list_attr:
            attrs[list_attr] = [t.dtype for t in taken]
        if type_attr and taken:
            attrs.setdefault(type_attr, taken[0].dtype)


def _default(spec: Any) -> Any:
    """A JSON AttrValue default (protobuf's JSON form) as a Python value attr_value() writes back."""
    (kind, value), = spec.items() if spec else (("list", {}),)
    if kind == "list":
        return [_scalar(k, v) for k, values in value.items() for v in values]
    return _scalar(kind, value)


def _scalar(kind: str, value: Any) -> Any:
    from tftk.framework import dtypes
    from tftk.proto.tensorflow import DataType
    if kind == "type":
        return dtypes.as_dtype(DataType.Value(value))
    if kind == "i":
        return int(value)
    if kind == "s":
        return base64.b64decode(value)
    if kind == "shape":
        from tftk.framework.tensor_shape import TensorShape
        return TensorShape(None) if value.get("unknownRank") else TensorShape([int(d.get("size", 0))
                                                                               for d in value.get("dim", [])])
    return value


def _same_kind(tf_kind: str, value: Any) -> bool:
    from tftk.summary.graph_def import attr_value
    written = attr_value(value)
    return written is not None and written.WhichOneof("value") == _KINDS.get(tf_kind)


def tf_node_form(op) -> tuple[dict, list, list[int]] | None:
    """(TF's attrs, the inputs in TF's order, where each tftk input went) for `op`, or None when
    TF has no op of its type or its inputs cannot be put in TF's form.

    Attrs come from the tensors (type and number attrs), from tftk's attrs of the same name and
    kind, else TF's defaults; attrs TF's OpDef lacks are left out. Inputs are tftk's tensors, by
    name where the op declares names, and `_ConstInput`s for attrs TF takes as tensors.
    """
    signature = _signatures().get(op.type)
    if signature is None or not _TF_FORM_WHEN.get(op.type, lambda _: True)(op):
        return None
    placed = _tf_inputs(op, signature)
    if placed is None:
        return None
    inputs, order = placed
    attrs: dict = {}
    _from_tensors(signature["inputs"], inputs, attrs)
    _from_tensors(signature["outputs"], list(op.outputs), attrs)
    for name, (kind, default) in signature["attrs"].items():
        if name in attrs:
            continue
        own = op.attrs.get(ATTR_ALIASES.get(name, name))
        if kind == "shape" and name in op.attrs:  # tftk keeps a shape as a dims list, None if unknown
            from tftk.framework.tensor_shape import TensorShape
            own = TensorShape(own)
        if own is not None and _same_kind(kind, own):
            attrs[name] = own
        elif default is not None:
            attrs[name] = _default(default)
    return attrs, inputs, order
