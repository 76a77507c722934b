"""CTC label helpers and greedy decoding: collapse_repeated, ctc_unique_labels and ctc_greedy_decoder."""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.ops.array_function import array_op, register_array_op

__all__ = ["collapse_repeated", "ctc_unique_labels", "ctc_greedy_decoder"]


def _collapse(labels: np.ndarray, seq_length: np.ndarray):
    rows = []
    for row, n in zip(labels, seq_length.tolist()):
        kept = [v for k, v in enumerate(row[:n].tolist()) if k == 0 or v != row[k - 1]]
        rows.append(kept)
    width = max((len(r) for r in rows), default=0)
    out = np.zeros((len(rows), width), labels.dtype)
    for k, r in enumerate(rows):
        out[k, :len(r)] = r
    return out, np.array([len(r) for r in rows])


register_array_op("CollapseRepeated", _collapse)


def collapse_repeated(labels: Any, seq_length: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """(labels with runs of a repeated label merged, zero-padded to the longest result; new lengths)."""
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        x = convert_to_tensor(labels, name="labels")
        n = convert_to_tensor(seq_length, name="seq_length")
        batch = x.shape.as_list()[0] if x.shape.ndims == 2 else None
        out, lengths = array_op("CollapseRepeated", [x, n], [(x.dtype, [batch, None]), (n.dtype, [batch])])
        return out, lengths


def _unique_rows(labels: np.ndarray):
    values = np.zeros(labels.shape, np.int64)
    index = np.zeros(labels.shape, labels.dtype)
    for k, row in enumerate(labels):
        seen: dict[int, int] = {}
        for j, v in enumerate(row.tolist()):
            index[k, j] = seen.setdefault(v, len(seen))
        values[k, :len(seen)] = list(seen)
    return values, index


register_array_op("CtcUniqueLabels", _unique_rows)


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Per row: its distinct labels in first-seen order (int64, zero-padded) and each label's index in them."""
    with name_scope(name, "ctc_unique_labels", [labels]):
        x = convert_to_tensor(labels, name="labels")
        values, index = array_op("CtcUniqueLabels", [x], [(dtypes.int64, x.shape), (x.dtype, x.shape)])
        return values, index


def _greedy(inputs: np.ndarray, sequence_length: np.ndarray, merge_repeated: bool, blank_index: int):
    max_time, batch, classes = inputs.shape
    blank = blank_index % classes
    indices, values, neg_sum, longest = [], [], np.zeros((batch, 1), inputs.dtype), 0
    for b in range(batch):
        n = int(sequence_length[b])
        best = inputs[:n, b].argmax(axis=-1) if n else np.zeros(0, np.int64)
        neg_sum[b, 0] = -inputs[:n, b].max(axis=-1).sum() if n else 0
        decoded, previous = [], None
        for label in best.tolist():
            if label != blank and not (merge_repeated and label == previous):
                decoded.append(label)
            previous = label
        indices += [[b, k] for k in range(len(decoded))]
        values += decoded
        longest = max(longest, len(decoded))
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.int64),
            np.array([batch, longest], np.int64), neg_sum)


register_array_op("CTCGreedyDecoder", _greedy)


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                       blank_index: int | None = None) -> tuple[list[SparseTensor], Tensor]:
    """([decoded SparseTensor], -sum of the best logits [batch, 1]) taking the top class at each step
    of time-major `inputs` [max_time, batch, classes], dropping blanks (default: the last class)."""
    x = convert_to_tensor(inputs, name="inputs")
    n = convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")
    if x.shape.ndims not in (None, 3):
        raise ValueError(f"ctc_greedy_decoder: inputs must be 3-D [max_time, batch, classes], got {x.shape}")
    batch = x.shape.as_list()[1] if x.shape.ndims == 3 else None
    indices, values, shape, neg_sum = array_op(
        "CTCGreedyDecoder", [x, n], [(dtypes.int64, [None, 2]), (dtypes.int64, [None]), (dtypes.int64, [2]),
                                     (x.dtype, [batch, 1])],
        "CTCGreedyDecoder", {"merge_repeated": bool(merge_repeated), "blank_index": -1 if blank_index is None
                             else int(blank_index)})
    return [SparseTensor(indices, values, shape)], neg_sum
