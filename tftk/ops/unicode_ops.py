"""`tf.strings.unicode_encode` and `tf.strings.unicode_transcode`, with Python's codecs.

Ill-formed input follows TF (ICU): each maximal ill-formed subsequence is one error, which
errors='replace' turns into `replacement_char`, 'ignore' drops and 'strict' reports as
InvalidArgumentError when the op runs. tftk has no RaggedTensor, so unicode_encode takes dense code
points [..., chars] and returns strings [...].
"""

from __future__ import annotations

import codecs
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework import errors as tf_errors
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.op_builder import make_op
from tftk.ops.string_ops import _as_bytes, _string_input

__all__ = ["unicode_encode", "unicode_transcode"]

_OUTPUT_CODECS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_ERROR_MODES = ("strict", "replace", "ignore")
# a decode error becomes this lone surrogate, which no well-formed decoded text contains
_MARK = "\ud800"
codecs.register_error("tftk_mark", lambda e: (_MARK, e.end))


def _check_options(op_type: str, output_encoding: str, errors_mode: str) -> None:
    if output_encoding not in _OUTPUT_CODECS:
        raise ValueError(f"Attr 'output_encoding' of '{op_type}' Op passed string '{output_encoding}' not in: "
                         f"{', '.join(repr(k) for k in _OUTPUT_CODECS)}.")
    if errors_mode not in _ERROR_MODES:
        raise ValueError(f"Attr 'errors' of '{op_type}' Op passed string '{errors_mode}' not in: "
                         f"{', '.join(repr(k) for k in _ERROR_MODES)}.")


def _resolve_errors(text: str, errors_mode: str, replacement_char: int, op: Any, what: str) -> str:
    """Turns the error marks of `text` into the replacement character, nothing, or an error."""
    if _MARK not in text:
        return text
    if errors_mode == "strict":
        raise tf_errors.InvalidArgumentError(None, op, f"Invalid {what} in input: errors='strict'")
    return text.replace(_MARK, "" if errors_mode == "ignore" else chr(replacement_char))


def _is_scalar_value(cp: int) -> bool:
    return 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF


def _bind_encode(op: Any, ctx: Any):
    codec = _OUTPUT_CODECS[op.get_attr("output_encoding")]
    errors_mode, replacement = op.get_attr("errors"), op.get_attr("replacement_char")

    def kernel(codepoints: np.ndarray) -> np.ndarray:
        rows = codepoints.reshape(-1, codepoints.shape[-1])
        out = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            text = "".join(chr(cp) if _is_scalar_value(cp) else _MARK for cp in row.tolist())
            out[i] = _resolve_errors(text, errors_mode, replacement, op, "code point").encode(codec)
        return out.reshape(codepoints.shape[:-1])

    return kernel


def _bind_transcode(op: Any, ctx: Any):
    input_encoding, codec = op.get_attr("input_encoding"), _OUTPUT_CODECS[op.get_attr("output_encoding")]
    errors_mode, replacement = op.get_attr("errors"), op.get_attr("replacement_char")
    replace_controls = op.get_attr("replace_control_characters")

    def transcode(s: Any) -> bytes:
        try:
            text = _as_bytes(s).decode(input_encoding, "tftk_mark")
        except LookupError:
            raise tf_errors.InvalidArgumentError(None, op, f"Could not create converter for input encoding: "
                                                        f"{input_encoding}") from None
        if replace_controls:  # C0 controls count as errors, as TF's
            text = "".join(_MARK if ord(c) < 0x20 else c for c in text)
        return _resolve_errors(text, errors_mode, replacement, op, "formatting").encode(codec)

    def kernel(x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape, dtype=object)
        flat_in, flat_out = x.reshape(-1), out.reshape(-1)
        for i in range(flat_in.size):
            flat_out[i] = transcode(flat_in[i])
        return out

    return kernel


registry.register_op("UnicodeEncode", _bind_encode, fresh=True)
registry.not_differentiable("UnicodeEncode")
registry.register_op("UnicodeTranscode", _bind_transcode, fresh=True)
registry.not_differentiable("UnicodeTranscode")


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002 - TF's names
                   replacement_char: int = 65533, name: str | None = None) -> Tensor:
    """Each row of integer code points [..., chars] as one string in `output_encoding` ([...])."""
    _check_options("UnicodeEncode", output_encoding, errors)
    codepoints = convert_to_tensor(input)
    if not codepoints.dtype.is_integer:
        raise TypeError(f"UnicodeEncode: input must be integer code points, got {codepoints.dtype.name}")
    if codepoints.shape.ndims == 0:
        raise ValueError("input_tensor's rank must be at least 1.")
    shape = TensorShape(None) if codepoints.shape.ndims is None else TensorShape(codepoints.shape.as_list()[:-1])
    return make_op("UnicodeEncode", [codepoints], dtypes.string, shape, name or "UnicodeEncode",
                   {"output_encoding": output_encoding, "errors": errors, "replacement_char": int(replacement_char)})


def unicode_transcode(input: Any, input_encoding: str, output_encoding: str,  # noqa: A002 - TF's names
                      errors: str = "replace", replacement_char: int = 65533,
                      replace_control_characters: bool = False, name: str | None = None) -> Tensor:
    """Each string decoded from `input_encoding` (any codec name Python knows) and encoded again."""
    _check_options("UnicodeTranscode", output_encoding, errors)
    x = _string_input(input, "UnicodeTranscode")
    return make_op("UnicodeTranscode", [x], dtypes.string, x.shape, name or "UnicodeTranscode",
                   {"input_encoding": input_encoding, "output_encoding": output_encoding, "errors": errors,
                    "replacement_char": int(replacement_char),
                    "replace_control_characters": bool(replace_control_characters)})
