"""Candidate samplers for sampled losses (tf.nn / tf.random): uniform, fixed_unigram and all,
plus compute_accidental_hits.

Each sampler returns (sampled_candidates int64 [num_sampled], true_expected_count [batch, num_true],
sampled_expected_count [num_sampled]) as TF's do: with unique=True the candidates are distinct
(rejection sampling) and an id of probability p is expected 1 - (1 - p)^tries times (p * num_sampled
when no try was rejected). The draws come from the op's seeded stream (not TF's bit stream); the expected
counts are exact.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops import random_ops
from tftk.ops.array_function import array_op, register_array_op
from tftk.ops.nn_loss_ops import draw_candidates, expected_count
from tftk.ops.op_builder import make_multi_op

__all__ = ["uniform_candidate_sampler", "fixed_unigram_candidate_sampler", "all_candidate_sampler",
           "compute_accidental_hits"]


def _bind_sampler(op: Any, ctx: Any):
    rng = random_ops.generator_for(op, ctx)
    a = op.attrs
    n, unique = a["num_sampled"], a["unique"]
    probs = np.asarray(a["probs"], np.float64)

    def kernel(true_classes: np.ndarray):
        if unique and np.count_nonzero(probs) < n:
            raise ValueError(f"cannot draw {n} unique candidates from {np.count_nonzero(probs)} ids of non-zero weight")
        sampled, tries = draw_candidates(lambda count: rng.choice(probs.size, size=count, p=probs), n, unique)
        index = np.clip(true_classes, 0, probs.size - 1)
        return (sampled, expected_count(probs[index], n, tries).astype(np.float32),
                expected_count(probs[sampled], n, tries).astype(np.float32))
    return kernel


registry.register_op("CandidateSampler", _bind_sampler, stateful=True)
registry.not_differentiable("CandidateSampler")


def _sample(true_classes: Any, num_true: int, num_sampled: int, unique: bool, probs: np.ndarray,
            seed: int | None, name: str | None, what: str) -> tuple[Tensor, Tensor, Tensor]:
    t = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    if t.shape.ndims not in (None, 2) or (t.shape.ndims == 2 and t.shape.as_list()[1] not in (None, num_true)):
        raise ValueError(f"{what}: true_classes must be [batch, num_true={num_true}], got shape {t.shape}")
    if unique and num_sampled > probs.size:
        raise ValueError(f"{what}: cannot draw {num_sampled} unique ids from range_max={probs.size}")
    s1, s2 = random_ops.get_seed(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "probs": probs.tolist(), "seed": s1, "seed2": s2}
    op = make_multi_op("CandidateSampler", [t], [(dtypes.int64, [num_sampled]), (dtypes.float32, t.shape),
                                                 (dtypes.float32, [num_sampled])], name, attrs)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: int | None = None, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Candidates drawn uniformly from [0, range_max)."""
    return _sample(true_classes, num_true, num_sampled, unique, np.full(int(range_max), 1.0 / range_max), seed, name,
                   "uniform_candidate_sampler")


def fixed_unigram_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                                    vocab_file: str = "", distortion: float = 1.0, num_reserved_ids: int = 0,
                                    num_shards: int = 1, shard: int = 0, unigrams: Sequence[float] = (),
                                    seed: int | None = None, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Candidates drawn with probability proportional to unigrams[k] ** distortion (from `unigrams` or
    a vocab_file of "word,count" lines); reserved ids get weight 0. One shard only."""
    if vocab_file:
        with open(vocab_file) as f:
            weights = [float(line.rstrip("\n").split(",")[-1]) for line in f if line.strip()]
    else:
        weights = [float(w) for w in unigrams]
    weights = [0.0] * num_reserved_ids + weights
    if len(weights) != range_max:
        raise ValueError(f"fixed_unigram_candidate_sampler: range_max={range_max} but {len(weights)} weights "
                         f"(with {num_reserved_ids} reserved ids)")
    if num_shards != 1 or shard != 0:
        raise ValueError("fixed_unigram_candidate_sampler: sharded sampling (num_shards > 1) is not supported here")
    w = np.asarray(weights, np.float64) ** float(distortion)
    if w.sum() <= 0:
        raise ValueError("fixed_unigram_candidate_sampler: every weight is zero")
    return _sample(true_classes, num_true, num_sampled, unique, w / w.sum(), seed, name,
                   "fixed_unigram_candidate_sampler")


def _all_candidates(true_classes: np.ndarray, num_sampled: int, unique: bool):
    if not unique:
        raise ValueError("all_candidate_sampler needs unique=True (every candidate is drawn exactly once)")
    return (np.arange(num_sampled, dtype=np.int64), np.ones(true_classes.shape, np.float32),
            np.ones(num_sampled, np.float32))


register_array_op("AllCandidateSampler", _all_candidates)


def all_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, seed: int | None = None,
                          name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Every class 0..num_sampled-1 as a candidate, each expected once (for testing sampled losses)."""
    t = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    out = array_op("AllCandidateSampler", [t], [(dtypes.int64, [num_sampled]), (dtypes.float32, t.shape),
                                                (dtypes.float32, [num_sampled])], name,
                   {"num_sampled": int(num_sampled), "unique": bool(unique)})
    return out[0], out[1], out[2]


def _accidental_hits(true_classes: np.ndarray, sampled: np.ndarray):
    """For each row i and each of its true labels (in order), every position of that label among the samples."""
    positions: dict[int, list[int]] = {}
    for k, value in enumerate(sampled.tolist()):
        positions.setdefault(value, []).append(k)
    rows, ids = [], []
    for i, labels in enumerate(true_classes.tolist()):
        for label in labels:
            for k in positions.get(label, []):
                rows.append(i)
                ids.append(k)
    weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
    return np.array(rows, np.int32), np.array(ids, np.int64), weights


register_array_op("ComputeAccidentalHits", _accidental_hits)


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int, seed: int | None = None,
                            name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(row indices, positions in sampled_candidates, weights -FLT_MAX) of samples that are a row's true class
    (once per occurrence of the label among the row's true classes)."""
    t = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    s = convert_to_tensor(sampled_candidates, dtype=dtypes.int64, name="sampled_candidates")
    out = array_op("ComputeAccidentalHits", [t, s], [(dtypes.int32, [None]), (dtypes.int64, [None]),
                                                      (dtypes.float32, [None])], name)
    return out[0], out[1], out[2]
