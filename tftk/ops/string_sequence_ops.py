"""String ops over sequences of tokens: `tf.strings.ngrams` and `tf.strings.unsorted_segment_join`.

tftk has no RaggedTensor, so ngrams takes dense token tensors [..., tokens] and returns
[..., ngrams] (every row has as many tokens, so as many n-grams), as TF does for a dense input.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.constant_value import constant_value
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.op_builder import make_op
from tftk.ops.string_ops import _as_bytes, _string_input

__all__ = ["ngrams", "unsorted_segment_join"]


def _row_ngrams(row: list, widths: Sequence[int], separator: bytes, pads: tuple, padding_width: int,
                preserve_short: bool) -> list:
    """The n-grams of one row of tokens: for each width in order, windows over the padded row."""
    def pad_for(width: int) -> int:  # never wider than width - 1, as TF's kernel
        return min(width - 1 if padding_width < 0 else padding_width, width - 1)

    out = []
    for width in widths:
        pad = pad_for(width)
        padded = [pads[0]] * pad + row + [pads[1]] * pad
        out += [separator.join(padded[i:i + width]) for i in range(len(padded) - width + 1)]
    if preserve_short and not out and row:
        pad = pad_for(max(widths))
        out = [separator.join([pads[0]] * pad + row + [pads[1]] * pad)]
    return out


def _bind_ngrams(op: Any, ctx: Any):
    widths, separator = op.get_attr("ngram_widths"), op.get_attr("separator")
    pads = (op.get_attr("left_pad"), op.get_attr("right_pad"))
    padding_width, preserve = op.get_attr("pad_width"), op.get_attr("preserve_short_sequences")

    def kernel(data: np.ndarray) -> np.ndarray:
        rows = data.reshape(-1, data.shape[-1])
        grams = [_row_ngrams([_as_bytes(t) for t in row], widths, separator, pads, padding_width, preserve)
                 for row in rows]
        out = np.empty((len(rows), len(grams[0]) if grams else 0), dtype=object)
        for i, row in enumerate(grams):
            out[i, :] = row
        return out.reshape(data.shape[:-1] + (out.shape[1],))

    return kernel


registry.register_op("StringNGrams", _bind_ngrams, fresh=True)
registry.not_differentiable("StringNGrams")


def ngrams(data: Any, ngram_width: Any, separator: str = " ", pad_values: Any = None,
           padding_width: int | None = None, preserve_short_sequences: bool = False,
           name: str | None = None) -> Tensor:
    """The n-grams of the last axis of a dense string tensor, joined by `separator`.

    ngram_width: an int or a list of ints (n-grams of each width, in that order). pad_values: a
    string or a (left, right) pair padding each row by `padding_width` (default width - 1) tokens.
    preserve_short_sequences: a row too short for any n-gram gives one n-gram of the whole row.
    """
    if pad_values is None:
        pads = ("", "")
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2 or not all(isinstance(p, (str, bytes)) for p in pad_values):
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        pads = tuple(pad_values)
    elif isinstance(pad_values, (str, bytes)):
        pads = (pad_values, pad_values)
    else:
        raise TypeError("pad_values must be a string, tuple of strings, or None.")
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
    if any(w < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    data = _string_input(data, "StringNGrams")
    if data.shape.ndims is None:
        raise ValueError("Rank of data must be known.")
    if data.shape.ndims == 0:
        raise ValueError("Data must have rank>0")
    pad = 0 if pad_values is None else (-1 if padding_width is None else int(padding_width))
    tokens = data.shape.as_list()[-1]
    count = None if tokens is None else \
        len(_row_ngrams([b""] * tokens, widths, b"", (b"", b""), pad, bool(preserve_short_sequences)))
    shape = TensorShape(data.shape.as_list()[:-1] + [count])
    return make_op("StringNGrams", [data], dtypes.string, shape, name or "StringNGrams",
                   {"ngram_widths": [int(w) for w in widths], "separator": _as_bytes(separator),
                    "left_pad": _as_bytes(pads[0]), "right_pad": _as_bytes(pads[1]), "pad_width": pad,
                    "preserve_short_sequences": bool(preserve_short_sequences)})


def _bind_segment_join(op: Any, ctx: Any):
    separator = op.get_attr("separator")

    def kernel(inputs: np.ndarray, segment_ids: np.ndarray, num_segments: np.ndarray) -> np.ndarray:
        num_segments = int(num_segments)
        ids = segment_ids.reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= num_segments):
            raise errors.InvalidArgumentError(
                None, op, "segment_ids are not allowed to exceed num_segments or to have negative values.")
        inner = inputs.shape[segment_ids.ndim:]
        flat = inputs.reshape((ids.size, -1))
        parts: list = [[[] for _ in range(flat.shape[1])] for _ in range(num_segments)]
        for row, segment in zip(flat, ids):
            for j, item in enumerate(row):
                parts[segment][j].append(_as_bytes(item))
        out = np.empty((num_segments, flat.shape[1]), dtype=object)
        for s in range(num_segments):
            for j in range(flat.shape[1]):
                out[s, j] = separator.join(parts[s][j])
        return out.reshape((num_segments,) + inner)

    return kernel


registry.register_op("UnsortedSegmentJoin", _bind_segment_join, fresh=True)
registry.not_differentiable("UnsortedSegmentJoin")


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "",
                          name: str | None = None) -> Tensor:
    """Joins (with `separator`, in index order) the strings of `inputs` that share a segment id.

    segment_ids has the shape of a prefix of inputs' shape; the result is
    [num_segments] + inputs.shape[rank(segment_ids):], "" for a segment no string belongs to.
    """
    inputs = _string_input(inputs, "UnsortedSegmentJoin")
    segment_ids = convert_to_tensor(segment_ids)
    if not segment_ids.dtype.is_integer:
        raise TypeError(f"UnsortedSegmentJoin: segment_ids must be integers, got {segment_ids.dtype.name}")
    num_segments = convert_to_tensor(num_segments)
    static_segments = constant_value(num_segments)
    inner = TensorShape(None) if inputs.shape.ndims is None or segment_ids.shape.ndims is None else \
        TensorShape(inputs.shape.as_list()[segment_ids.shape.ndims:])
    segments = None if static_segments is None else int(np.asarray(static_segments))
    shape = TensorShape([segments]).concatenate(inner)
    return make_op("UnsortedSegmentJoin", [inputs, segment_ids, num_segments], dtypes.string, shape,
                   name or "UnsortedSegmentJoin", {"separator": _as_bytes(separator)})
