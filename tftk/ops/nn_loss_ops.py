"""Cross-entropy losses and sampled losses (tf.nn.*_cross_entropy_with_logits, nce_loss, ...).

Softmax cross-entropy is one fused op returning the per-row loss and `softmax - labels`; its gradient
reuses that backprop output instead of recomputing the softmax. Sampled losses follow TF's
`_compute_sampled_logits`: true and sampled class logits from an embedding lookup of the weights,
corrected by log Q (the sampler's expected counts), accidental hits masked with -FLOAT_MAX.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops, nn_ops, random_ops, reduction_ops
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = [
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "log_uniform_candidate_sampler", "nce_loss",
    "sampled_softmax_loss", "sequence_loss_by_example", "sequence_loss",
]


def _labels_logits(args: tuple, labels: Any, logits: Any, who: str) -> tuple[Tensor, Any]:
    """TF1 takes named labels=/logits=; positional arguments are TF 0.x's order (logits, labels)."""
    if args:
        if len(args) > 2 or labels is not None or logits is not None:
            raise ValueError(f"{who}: pass labels= and logits= by name")
        logits, labels = (list(args) + [None])[:2]
    if labels is None or logits is None:
        raise ValueError(f"{who}: both labels and logits are required")
    logits = convert_to_tensor(logits, name="logits")
    if not logits.dtype.is_floating:
        raise TypeError(f"{who}: logits must be floating point, got {logits.dtype.name}")
    return logits, labels


# ---- fused softmax cross-entropy ------------------------------------------------------------

def _bind_xent(op, ctx):
    from tftk.kernels.softmax_xent import softmax_cross_entropy
    return softmax_cross_entropy


def _bind_sparse_xent(op, ctx):
    from tftk.kernels.softmax_xent import sparse_softmax_cross_entropy
    return sparse_softmax_cross_entropy


registry.register_op("SoftmaxCrossEntropyWithLogits", _bind_xent, rows=batch_rows.per_example(0, 1))
registry.register_op("SparseSoftmaxCrossEntropyWithLogits", _bind_sparse_xent, rows=batch_rows.per_example(0, 1))


def _scale_rows(grad_loss: Tensor, rows: Tensor) -> Tensor:
    return math_ops.multiply(array_ops.expand_dims(grad_loss, -1), rows)


@registry.register_gradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, _grad_backprop):
    logits = op.inputs[0]
    return [_scale_rows(grad_loss, op.outputs[1]),
            _scale_rows(grad_loss, math_ops.negative(nn_ops.log_softmax(logits)))]


@registry.register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, _grad_backprop):
    return [_scale_rows(grad_loss, op.outputs[1]), None]


def _to_last_axis(x: Tensor, axis: int) -> Tensor:
    rank = x.shape.ndims
    axis = axis % rank
    if axis == rank - 1:
        return x
    perm = [i for i in range(rank) if i != axis] + [axis]
    return array_ops.transpose(x, perm)


def _rows_op(op_type: str, logits: Tensor, labels: Tensor, name: str | None) -> Tensor:
    """Run a 2-D [rows, classes] loss op on logits of any rank >= 1, giving logits.shape[:-1]."""
    rank = logits.shape.ndims
    if rank == 2:
        batch = logits.shape.as_list()[0]
        op = make_multi_op(op_type, [logits, labels], [(logits.dtype, [batch]), (logits.dtype, logits.shape)], name)
        return op.outputs[0]
    classes = logits.shape.as_list()[-1]
    flat_logits = array_ops.reshape(logits, [-1, classes])
    flat_labels = array_ops.reshape(labels, [-1] if labels.dtype.is_integer else [-1, classes])
    batch = flat_logits.shape.as_list()[0]
    op = make_multi_op(op_type, [flat_logits, flat_labels],
                       [(logits.dtype, [batch]), (logits.dtype, flat_logits.shape)])
    lead = logits.shape.as_list()[:-1]
    target = lead if None not in lead else array_ops.shape(logits)[:-1]
    return array_ops.reshape(op.outputs[0], target, name=name)


def _known_rank(x: Tensor, who: str) -> int:
    if x.shape.ndims is None or x.shape.ndims < 1:
        raise ValueError(f"{who}: logits need a known rank >= 1, got shape {x.shape}")
    return x.shape.ndims


def softmax_cross_entropy_with_logits_v2(*args: Any, labels: Any = None, logits: Any = None, axis: int | None = None,
                                         name: str | None = None, dim: int = -1) -> Tensor:
    """-sum(labels * log_softmax(logits), axis) per example, computed stably; labels get a gradient too."""
    who = "softmax_cross_entropy_with_logits"
    logits, labels = _labels_logits(args, labels, logits, who)
    labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"{who}: labels shape {labels.shape} must equal logits shape {logits.shape}")
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]):
        rank = _known_rank(logits, who)
        axis = dim if axis is None else axis
        if not -rank <= axis < rank:
            raise ValueError(f"{who}: axis {axis} is out of range for logits of rank {rank}")
        # TF's helper reshapes its result last: the loss is `<scope>/Reshape_2` at any rank
        return _rows_op("SoftmaxCrossEntropyWithLogits", _to_last_axis(logits, axis), _to_last_axis(labels, axis),
                        "Reshape_2")


def softmax_cross_entropy_with_logits(*args: Any, labels: Any = None, logits: Any = None, dim: int = -1,
                                      name: str | None = None, axis: int | None = None) -> Tensor:
    """TF1's v1 op: as v2, but no gradient flows into labels (they are wrapped in stop_gradient)."""
    logits, labels = _labels_logits(args, labels, logits, "softmax_cross_entropy_with_logits")
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = array_ops.stop_gradient(convert_to_tensor(labels, dtype=logits.dtype, name="labels"),
                                         name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis, dim=dim, name=scope)


def sparse_softmax_cross_entropy_with_logits(*args: Any, labels: Any = None, logits: Any = None,
                                             name: str | None = None) -> Tensor:
    """-log_softmax(logits)[label] per example; labels are class ids of shape logits.shape[:-1]."""
    who = "sparse_softmax_cross_entropy_with_logits"
    logits, labels = _labels_logits(args, labels, logits, who)
    labels = convert_to_tensor(labels, name="labels")
    if not labels.dtype.is_integer:
        raise TypeError(f"{who}: labels must be int32 or int64 class ids, got {labels.dtype.name}")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [logits, labels]):
        rank = _known_rank(logits, who)
        if labels.shape.ndims is not None and labels.shape.ndims != rank - 1:
            raise ValueError(f"{who}: rank mismatch: labels rank {labels.shape.ndims} should be logits rank "
                             f"minus 1 ({rank - 1}) (labels {labels.shape}, logits {logits.shape})")
        if labels.shape.ndims is not None and not labels.shape.is_compatible_with(
                TensorShape(logits.shape.as_list()[:-1])):
            raise ValueError(f"{who}: labels shape {labels.shape} must match logits shape {logits.shape} "
                             f"without its last dimension")
        return _rows_op("SparseSoftmaxCrossEntropyWithLogits", logits, labels, None)


# ---- sigmoid cross-entropy ------------------------------------------------------------------

def _same_shape(logits: Tensor, labels: Tensor, who: str) -> None:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"{who}: logits and labels must have the same shape ({logits.shape} vs {labels.shape})")


def _sigmoid_xent(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """TF's stable form max(x, 0) - x * z + log1p(exp(-|x|)): no cancellation for large |x|."""
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


registry.register_op("SigmoidCrossEntropyWithLogits", lambda op, ctx: _sigmoid_xent, rows=batch_rows.elementwise)


@registry.register_gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_grad(op, grad):
    x, z = op.inputs
    return [math_ops.multiply(grad, math_ops.subtract(math_ops.sigmoid(x), z)),
            math_ops.negative(math_ops.multiply(grad, x))]


def sigmoid_cross_entropy_with_logits(*args: Any, labels: Any = None, logits: Any = None,
                                      name: str | None = None, targets: Any = None) -> Tensor:
    """labels * -log(sigmoid(x)) + (1 - labels) * -log(1 - sigmoid(x)), computed stably."""
    who = "sigmoid_cross_entropy_with_logits"
    logits, labels = _labels_logits(args, labels if labels is not None else targets, logits, who)
    labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
    _same_shape(logits, labels, who)
    return make_op("SigmoidCrossEntropyWithLogits", [logits, labels], logits.dtype, logits.shape,
                   name or "logistic_loss")


def weighted_cross_entropy_with_logits(targets: Any = None, logits: Any = None, pos_weight: Any = None,
                                       name: str | None = None, labels: Any = None) -> Tensor:
    """targets * -log(sigmoid(x)) * pos_weight + (1 - targets) * -log(1 - sigmoid(x)), stably:
    (1 - targets) * x + (1 + (pos_weight - 1) * targets) * softplus(-x)."""
    who = "weighted_cross_entropy_with_logits"
    targets = targets if targets is not None else labels
    if pos_weight is None:
        raise ValueError(f"{who}: pos_weight is required")
    logits, targets = _labels_logits((), targets, logits, who)
    with name_scope(name, "logistic_loss", [logits, targets]):
        z = convert_to_tensor(targets, dtype=logits.dtype, name="targets")
        _same_shape(logits, z, who)
        q = convert_to_tensor(pos_weight, dtype=logits.dtype, name="pos_weight")
        log_weight = math_ops.add(1.0, math_ops.multiply(math_ops.subtract(q, 1.0), z))
        return math_ops.add(math_ops.multiply(math_ops.subtract(1.0, z), logits),
                            math_ops.multiply(log_weight, nn_ops.softplus(math_ops.negative(logits))))


# ---- log-uniform candidate sampler ------------------------------------------------------------

def _log_uniform_prob(ids: np.ndarray, range_max: int) -> np.ndarray:
    """P(k) = log((k + 2) / (k + 1)) / log(range_max + 1)."""
    ids = ids.astype(np.float64)
    return np.log1p(1.0 / (ids + 1.0)) / np.log(range_max + 1.0)


def expected_count(p: np.ndarray, num_sampled: int, num_tries: int) -> np.ndarray:
    """TF's ExpectedCountHelper: p * num_sampled without rejection, else 1 - (1 - p) ** num_tries."""
    if num_tries == num_sampled:
        return p * num_sampled
    return -np.expm1(num_tries * np.log1p(-p))


def draw_candidates(draw: Callable[[int], np.ndarray], n: int, unique: bool) -> tuple[np.ndarray, int]:
    """`n` candidate ids from `draw(count)` (distinct ones when `unique`, redrawing as TF's samplers
    do) and how many draws that took (the expected counts depend on it)."""
    if not unique:
        return draw(n).astype(np.int64), n
    picked: dict[int, None] = {}
    tries = 0
    while len(picked) < n:
        for v in draw(2 * (n - len(picked)) + 8).tolist():
            tries += 1
            picked.setdefault(v)
            if len(picked) == n:
                break
    return np.fromiter(picked, dtype=np.int64, count=n), tries


def _bind_log_uniform(op, ctx):
    rng = random_ops.generator_for(op, ctx)
    a = op.attrs
    n, range_max, unique = a["num_sampled"], a["range_max"], a["unique"]
    log_range = np.log(range_max + 1.0)

    def draw(count: int) -> np.ndarray:
        return np.minimum((np.exp(rng.random(count) * log_range)).astype(np.int64) - 1, range_max - 1)

    def kernel(true_classes):
        sampled, tries = draw_candidates(draw, n, unique)
        true_count = expected_count(_log_uniform_prob(true_classes, range_max), n, tries)
        sampled_count = expected_count(_log_uniform_prob(sampled, range_max), n, tries)
        return sampled, true_count.astype(np.float32), sampled_count.astype(np.float32)
    return kernel


registry.register_op("LogUniformCandidateSampler", _bind_log_uniform, stateful=True)
registry.not_differentiable("LogUniformCandidateSampler")


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: int | None = None,
                                  name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Sample num_sampled class ids from P(k) = log((k+2)/(k+1)) / log(range_max+1) (Zipfian).

    Returns (sampled_candidates int64 [num_sampled], true_expected_count [batch, num_true],
    sampled_expected_count [num_sampled]); with unique=True the ids are distinct (rejection
    sampling) and expected counts are 1 - (1 - P(k)) ** num_tries, else P(k) * num_sampled.
    """
    t = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    if t.shape.ndims not in (None, 2) or (t.shape.ndims == 2 and t.shape.as_list()[1] not in (None, num_true)):
        raise ValueError(f"log_uniform_candidate_sampler: true_classes must be [batch, num_true={num_true}], "
                         f"got shape {t.shape}")
    if unique and num_sampled > range_max:
        raise ValueError(f"log_uniform_candidate_sampler: cannot draw {num_sampled} unique ids from "
                         f"range_max={range_max}")
    s1, s2 = random_ops.get_seed(seed)
    attrs = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique),
             "range_max": int(range_max), "seed": s1, "seed2": s2}
    op = make_multi_op("LogUniformCandidateSampler", [t],
                       [(dtypes.int64, [num_sampled]), (dtypes.float32, t.shape), (dtypes.float32, [num_sampled])],
                       name, attrs)
    return op.outputs[0], op.outputs[1], op.outputs[2]


# ---- sampled logits (TF's _compute_sampled_logits) -------------------------------------------

def _bind_accidental_hits(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype
    lowest = np.asarray(-np.finfo(np.float32).max, dtype=npd)

    def kernel(true_classes, sampled):
        hits = (true_classes[:, :, None] == sampled[None, None, :]).any(axis=1)
        return np.where(hits, lowest, np.zeros((), dtype=npd))
    return kernel


registry.register_op("AccidentalHitsMask", _bind_accidental_hits)
registry.not_differentiable("AccidentalHitsMask")


def _compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                            num_classes: int, num_true: int, sampled_values: Any,
                            subtract_log_q: bool, remove_accidental_hits: bool,
                            partition_strategy: str, seed: int | None) -> tuple[Tensor, Tensor]:
    """(logits [batch, num_true + num_sampled], labels of the same shape: 1/num_true for true classes)."""
    from tftk.ops.embedding_ops import embedding_lookup
    inputs = convert_to_tensor(inputs, name="inputs")
    labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
    if labels.shape.ndims == 1:
        labels = array_ops.expand_dims(labels, -1)
    if inputs.shape.ndims != 2:
        raise ValueError(f"sampled loss: inputs must be [batch, dim], got shape {inputs.shape}")
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (array_ops.stop_gradient(convert_to_tensor(v)) for v in sampled_values)
    sampled = math_ops.cast(sampled, dtypes.int64)
    dim = inputs.shape.as_list()[1]
    flat_labels = array_ops.reshape(labels, [-1])
    true_w = array_ops.reshape(embedding_lookup(weights, flat_labels, partition_strategy), [-1, num_true, dim])
    true_b = array_ops.reshape(embedding_lookup(biases, flat_labels, partition_strategy), [-1, num_true])
    true_logits = math_ops.add(
        reduction_ops.reduce_sum(math_ops.multiply(array_ops.expand_dims(inputs, 1), true_w), -1), true_b)
    sampled_w = embedding_lookup(weights, sampled, partition_strategy)
    sampled_b = embedding_lookup(biases, sampled, partition_strategy)
    sampled_logits = math_ops.add(math_ops.matmul(inputs, sampled_w, transpose_b=True), sampled_b)
    if remove_accidental_hits:
        mask = make_op("AccidentalHitsMask", [labels, sampled], sampled_logits.dtype, sampled_logits.shape)
        sampled_logits = math_ops.add(sampled_logits, mask)
    if subtract_log_q:
        true_logits = math_ops.subtract(true_logits, math_ops.log(math_ops.cast(true_expected, inputs.dtype)))
        sampled_logits = math_ops.subtract(sampled_logits,
                                           math_ops.log(math_ops.cast(sampled_expected, inputs.dtype)))
    out_logits = array_ops.concat([true_logits, sampled_logits], 1)
    out_labels = array_ops.concat([math_ops.multiply(array_ops.ones_like(true_logits), 1.0 / num_true),
                                   array_ops.zeros_like(sampled_logits)], 1)
    return out_logits, out_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss", seed: int | None = None) -> Tensor:
    """Noise-contrastive estimation loss per example [batch]: logistic loss of the true classes
    against num_sampled classes drawn by log_uniform_candidate_sampler (log Q subtracted)."""
    with name_scope(name, "nce_loss", [inputs, labels]):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, seed)
        per_class = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
        return reduction_ops.reduce_sum(per_class, 1)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                         num_classes: int, num_true: int = 1, sampled_values: Any = None,
                         remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss", seed: int | None = None) -> Tensor:
    """Softmax cross-entropy per example [batch] over the true classes and num_sampled sampled ones."""
    with name_scope(name, "sampled_softmax_loss", [inputs, labels]):
        logits, targets = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                                  num_true, sampled_values, True, remove_accidental_hits,
                                                  partition_strategy, seed)
        return softmax_cross_entropy_with_logits_v2(labels=array_ops.stop_gradient(targets), logits=logits)


# ---- sequence losses (legacy_seq2seq) ---------------------------------------------------------

def sequence_loss_by_example(logits: Sequence[Any], targets: Sequence[Any], weights: Sequence[Any],
                             average_across_timesteps: bool = True,
                             softmax_loss_function: Callable | None = None, name: str | None = None) -> Tensor:
    """Weighted cross-entropy per example [batch], summed over the time steps of the lists
    (divided by the summed weights when average_across_timesteps)."""
    if not len(logits) == len(targets) == len(weights):
        raise ValueError(f"sequence_loss_by_example: logits, targets and weights must have one entry per "
                         f"time step, got {len(logits)}, {len(targets)}, {len(weights)}")
    with name_scope(name, "sequence_loss_by_example", list(logits) + list(targets) + list(weights)):
        per_step = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                target = array_ops.reshape(convert_to_tensor(target), [-1])
                crossent = sparse_softmax_cross_entropy_with_logits(labels=target, logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            per_step.append(math_ops.multiply(crossent, weight))
        log_perps = math_ops.add_n(per_step)
        if average_across_timesteps:
            total = math_ops.add(math_ops.add_n([convert_to_tensor(w, dtype=log_perps.dtype) for w in weights]), 1e-12)
            log_perps = math_ops.realdiv(log_perps, total)
        return log_perps


def sequence_loss(logits: Sequence[Any], targets: Sequence[Any], weights: Sequence[Any],
                  average_across_timesteps: bool = True, average_across_batch: bool = True,
                  softmax_loss_function: Callable | None = None, name: str | None = None) -> Tensor:
    """Scalar: sequence_loss_by_example summed over the batch (divided by the batch size if averaging)."""
    with name_scope(name, "sequence_loss", list(logits) + list(targets) + list(weights)):
        per_example = sequence_loss_by_example(logits, targets, weights, average_across_timesteps,
                                               softmax_loss_function)
        cost = reduction_ops.reduce_sum(per_example)
        if average_across_batch:
            batch = math_ops.cast(array_ops.shape(convert_to_tensor(targets[0]))[0], cost.dtype)
            cost = math_ops.realdiv(cost, batch)
        return cost

