"""Text ops on string tensors: length, lower/upper, strip, regex_replace, regex_full_match, split,
string_split, to_number, format.

Strings are bytes, as in TF. Regular expressions are Python's `re` on bytes: RE2's syntax for the
patterns TF1 programs use (classes, groups, anchors, \\1 in rewrites) means the same there; RE2-only
constructs such as \\pL are refused by `re` with its error.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.errors import InvalidArgumentError
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.ops.string_ops import _as_bytes, _map_strings, _string_input

__all__ = ["string_length", "lower", "upper", "strip", "regex_replace", "regex_full_match", "strings_split",
           "string_split", "string_to_number", "string_format"]


def _elementwise(op_type: str, input: Any, out: dtypes.DType, name: str | None, attrs: dict | None = None) -> Tensor:
    x = _string_input(input, op_type)
    return make_op(op_type, [x], out, x.shape, name, attrs or {})


def _bind_length(op, ctx):
    utf8 = op.get_attr("unit") == "UTF8_CHAR"
    return _map_strings(lambda s: len(_as_bytes(s).decode("utf-8")) if utf8 else len(_as_bytes(s)), np.int32)


def _bind_case(op, ctx):
    upper = op.type == "StringUpper"
    return _map_strings(lambda s: _as_bytes(s).upper() if upper else _as_bytes(s).lower())


def _bind_regex_replace(op, ctx):
    pattern = re.compile(_as_bytes(op.get_attr("pattern")))
    rewrite, count = _as_bytes(op.get_attr("rewrite")), 0 if op.get_attr("replace_global") else 1
    return _map_strings(lambda s: pattern.sub(rewrite, _as_bytes(s), count=count))


def _bind_full_match(op, ctx):
    pattern = re.compile(_as_bytes(op.get_attr("pattern")))
    return _map_strings(lambda s: pattern.fullmatch(_as_bytes(s)) is not None, np.bool_)


def _bind_to_number(op, ctx):
    out = op.outputs[0].dtype
    parse = int if out.is_integer else float

    def one(s):
        text = _as_bytes(s).decode("utf-8", "replace").strip()
        try:
            value = parse(text)
        except ValueError:
            raise InvalidArgumentError(None, op, f"StringToNumberOp could not correctly convert string: "
                                                 f"{text}") from None
        if out.is_integer and not np.iinfo(out.as_numpy_dtype).min <= value <= np.iinfo(out.as_numpy_dtype).max:
            raise InvalidArgumentError(None, op, f"StringToNumberOp could not correctly convert string: {text}")
        return value
    npd = out.as_numpy_dtype
    return lambda x: _map_strings(one, object)(x).astype(npd)


registry.register_op("StringLength", _bind_length)
registry.register_op("StringLower", _bind_case)
registry.register_op("StringUpper", _bind_case)
registry.register_op("StringStrip", lambda op, ctx: _map_strings(lambda s: _as_bytes(s).strip()))
registry.register_op("RegexReplace", _bind_regex_replace)
registry.register_op("RegexFullMatch", _bind_full_match)
registry.register_op("StringToNumber", _bind_to_number)


def string_length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:
    """Length of each string in bytes (unit="BYTE") or UTF-8 characters (unit="UTF8_CHAR")."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError(f"string_length: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return _elementwise("StringLength", input, dtypes.int32, name, {"unit": unit})


def lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string with ASCII letters lower-cased."""
    return _elementwise("StringLower", input, dtypes.string, name)


def upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:
    """Each string with ASCII letters upper-cased."""
    return _elementwise("StringUpper", input, dtypes.string, name)


def strip(input: Any, name: str | None = None) -> Tensor:
    """Each string without leading and trailing whitespace."""
    return _elementwise("StringStrip", input, dtypes.string, name)


def _pattern(pattern: Any, what: str) -> bytes:
    if isinstance(pattern, Tensor):
        value = constant_value(pattern)
        if value is None:
            raise ValueError(f"{what}: the pattern must be known when the graph is built")
        pattern = value.item() if hasattr(value, "item") else value
    try:
        re.compile(_as_bytes(pattern))
    except re.error as e:
        raise ValueError(f"{what}: invalid regular expression {pattern!r}: {e}") from None
    return _as_bytes(pattern)


def regex_replace(input: Any, pattern: Any, rewrite: Any, replace_global: bool = True,
                  name: str | None = None) -> Tensor:
    """Each string with matches of `pattern` replaced by `rewrite` (all, or the first)."""
    return _elementwise("RegexReplace", input, dtypes.string, name,
                        {"pattern": _pattern(pattern, "regex_replace"), "rewrite": _as_bytes(rewrite),
                         "replace_global": bool(replace_global)})


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Tensor:
    """Whether each whole string matches `pattern`."""
    return _elementwise("RegexFullMatch", input, dtypes.bool, name,
                        {"pattern": _pattern(pattern, "regex_full_match")})


def string_to_number(string_tensor: Any, out_type: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Each string parsed as a number of `out_type` (float32/64, int32/64)."""
    out = dtypes.as_dtype(out_type)
    if out not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"string_to_number: out_type must be float32, float64, int32 or int64, got {out.name}")
    return _elementwise("StringToNumber", string_tensor, out, name)


# ---- split ---------------------------------------------------------------------------------------

def _bind_split(op, ctx):
    skip_empty, maxsplit = op.get_attr("skip_empty"), op.get_attr("maxsplit")

    def kernel(source, delimiter):
        sep = _as_bytes(delimiter.item() if hasattr(delimiter, "item") else delimiter)
        indices, values, width = [], [], 0
        for row, s in enumerate(source.reshape(-1)):
            s = _as_bytes(s)
            if op.get_attr("char_set"):  # string_split: every byte of sep is a delimiter
                parts = re.split(b"[" + re.escape(sep) + b"]", s) if sep else [bytes([c]) for c in s]
            elif sep:
                parts = s.split(sep, maxsplit)
            else:
                parts = s.split(None, maxsplit)
            if skip_empty:
                parts = [p for p in parts if p]
            for col, part in enumerate(parts):
                indices.append((row, col))
                values.append(part)
            width = max(width, len(parts))
        idx = np.asarray(indices, np.int64).reshape(-1, 2)
        vals = np.empty(len(values), dtype=object)
        vals[:] = values
        return idx, vals, np.asarray([source.size, width], np.int64)
    return kernel


registry.register_op("StringSplit", _bind_split)
registry.not_differentiable("StringLength", "StringLower", "StringUpper", "StringStrip", "RegexReplace",
                            "RegexFullMatch", "StringToNumber", "StringSplit")


def _split(source: Any, sep: Any, skip_empty: bool, maxsplit: int, char_set: bool, name: str | None) -> SparseTensor:
    x = _string_input(source, "StringSplit")
    if x.shape.ndims is not None and x.shape.ndims != 1:
        raise ValueError(f"string split: input must be a vector, got shape {x.shape}")
    delimiter = convert_to_tensor(b" " if sep is None and char_set else (sep if sep is not None else b""),
                                  dtype=dtypes.string)
    op = make_multi_op("StringSplit", [x, delimiter], [(dtypes.int64, [None, 2]), (dtypes.string, [None]),
                                                       (dtypes.int64, [2])], name or "StringSplit",
                       {"skip_empty": skip_empty, "maxsplit": int(maxsplit), "char_set": char_set})
    return SparseTensor(*op.outputs)


def string_split(source: Any, delimiter: Any = " ", skip_empty: bool = True, name: str | None = None,
                 sep: Any = None, result_type: str = "SparseTensor") -> SparseTensor:
    """TF1's tf.string_split: split each string at any of the characters of `delimiter`."""
    if result_type != "SparseTensor":
        raise ValueError("string_split: only result_type='SparseTensor' is supported (no RaggedTensor)")
    return _split(source, sep if sep is not None else delimiter, skip_empty, -1, True, name)


def strings_split(input: Any = None, sep: Any = None, maxsplit: int = -1, result_type: str = "SparseTensor",
                  source: Any = None, name: str | None = None) -> SparseTensor:
    """tf.strings.split: split at `sep` (runs of whitespace when None), at most `maxsplit` times."""
    if result_type != "SparseTensor":
        raise ValueError("strings.split: only result_type='SparseTensor' is supported (no RaggedTensor)")
    return _split(input if input is not None else source, sep, sep is None, maxsplit, False, name)


# ---- format --------------------------------------------------------------------------------------

def _format_element(v: Any) -> str:
    """One element as TF prints it: strings quoted, floats without a trailing '.0'."""
    if isinstance(v, bytes):
        return '"' + v.decode("utf-8", "replace") + '"'
    if isinstance(v, (float, np.floating)):
        return np.format_float_positional(v, trim="-")
    return str(v)


def _format_value(value: np.ndarray, summarize: int) -> str:
    if value.ndim == 0:
        return _format_element(value.item())
    return np.array2string(value, separator=" ", threshold=2 * summarize if summarize >= 0 else 10 ** 9,
                           edgeitems=summarize if summarize >= 0 else 3, max_line_width=10 ** 9,
                           formatter={"all": _format_element}).replace("\n", "")


def _bind_format(op, ctx):
    template, placeholder, summarize = op.get_attr("template"), op.get_attr("placeholder"), op.get_attr("summarize")
    pieces = template.split(placeholder)

    def kernel(*values):
        text = pieces[0]
        for value, piece in zip(values, pieces[1:]):
            text += _format_value(np.asarray(value), summarize) + piece
        return np.asarray(text.encode(), dtype=object)
    return kernel


registry.register_op("StringFormat", _bind_format)
registry.not_differentiable("StringFormat")


def string_format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3,
                  name: str | None = None) -> Tensor:
    """A scalar string: `template` with each `placeholder` replaced by the next input's value."""
    tensors = [convert_to_tensor(t) for t in (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
    if template.count(placeholder) != len(tensors):
        raise ValueError(f"{len(tensors)} tensor(s) given but {template.count(placeholder)} placeholder(s) "
                         f"'{placeholder}' in the template {template!r}")
    return make_op("StringFormat", tensors, dtypes.string, TensorShape([]), name,
                   {"template": template, "placeholder": placeholder, "summarize": int(summarize)})
