"""Random ops with TF1's seeding rules: graph seed + op seed give the same values in every run.

Each random op owns one generator per session, seeded from (graph seed, op seed), so a fresh
session replays the same sequence, and successive runs in one session draw new values.
"""

from __future__ import annotations

import random as _py_random
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op

__all__ = ["set_random_seed", "get_seed", "random_normal", "random_uniform", "truncated_normal",
           "random_shuffle", "multinomial", "random_gamma", "categorical", "random_poisson", "DEFAULT_GRAPH_SEED"]

DEFAULT_GRAPH_SEED = 87654321


def set_random_seed(seed: int | None) -> None:
    """Set the default graph's seed: ops created afterwards become reproducible."""
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """TF1's rule: the (graph seed, op seed) pair a new random op uses (None, None = nondeterministic)."""
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        return graph_seed, op_seed if op_seed is not None else graph._last_id
    if op_seed is not None:
        return DEFAULT_GRAPH_SEED, op_seed
    return None, None


def generator_for(op, ctx) -> np.random.Generator:
    """The per-session generator of a random op."""
    seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")

    def create() -> np.random.Generator:
        if seed is None:
            return np.random.default_rng(_py_random.SystemRandom().getrandbits(64))
        return np.random.default_rng([seed & 0xFFFFFFFF, seed2 & 0xFFFFFFFF])

    return ctx.resource(op, "rng", create)


def _shape_input(shape: Any, name: str | None = None) -> tuple[Tensor, TensorShape]:
    static = constant_value(shape) if isinstance(shape, Tensor) else np.asarray(shape)
    tensor = convert_to_tensor(shape, dtype=dtypes.int32, name=name)
    return tensor, TensorShape(None if static is None else [int(d) for d in np.atleast_1d(static)]
                               if np.ndim(static) else [])


def _random_op(op_type: str, draw: Callable) -> None:
    """Register a random op whose kernel is `draw(rng, shape_tuple, op, *extra_inputs)`."""

    def factory(op, ctx):
        rng = generator_for(op, ctx)
        return lambda shape, *extra: draw(rng, tuple(int(d) for d in shape), op, *extra)

    registry.register_op(op_type, factory, stateful=True)
    registry.not_differentiable(op_type)


def _normal(rng, shape, op):
    npd = op.outputs[0].dtype.as_numpy_dtype
    out = rng.standard_normal(shape, dtype=npd if npd in (np.float32, np.float64) else np.float64)
    return out.astype(npd, copy=False)


def _truncated(rng, shape, op):
    """Standard normal values, redrawing any outside two standard deviations."""
    npd = op.outputs[0].dtype.as_numpy_dtype
    out = rng.standard_normal(shape)
    bad = np.abs(out) > 2.0
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out.astype(npd)


def _uniform(rng, shape, op, lo, hi):
    npd = op.outputs[0].dtype.as_numpy_dtype
    if np.issubdtype(npd, np.integer):
        if not lo < hi:
            raise ValueError(f"Need minval < maxval, got {lo} >= {hi}")
        return rng.integers(lo, hi, size=shape, dtype=npd)
    return (lo + (hi - lo) * rng.random(shape)).astype(npd)


_random_op("RandomStandardNormal", _normal)
_random_op("TruncatedNormal", _truncated)
_random_op("RandomUniform", _uniform)


def _scaled(op_type: str, default_name: str, shape: Any, dtype: Any, seed: int | None, name: str | None,
            mean: Any, scale: Any) -> Tensor:
    """`raw * scale + mean` in TF1's scope: `<name>/shape`, `/mean`, `/stddev`, `/<op_type>`, `/mul`,
    and the result named as the scope itself (`truncated_normal`), so programs see TF's names."""
    from tftk.ops.math_ops import add, multiply
    dtype = dtypes.as_dtype(dtype)
    with get_default_graph().name_scope(name or default_name) as scope:
        shape_t, static = _shape_input(shape, "shape")
        s1, s2 = get_seed(seed)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        scale_t = convert_to_tensor(scale, dtype=dtype, name="stddev")
        raw = make_op(op_type, [shape_t], dtype, static, None, {"seed": s1, "seed2": s2})
        return add(multiply(raw, scale_t), mean_t, name=scope)


def random_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                  seed: int | None = None, name: str | None = None) -> Tensor:
    """Normal values with `mean` and `stddev`."""
    return _scaled("RandomStandardNormal", "random_normal", shape, dtype, seed, name, mean, stddev)


def truncated_normal(shape: Any, mean: Any = 0.0, stddev: Any = 1.0, dtype: Any = dtypes.float32,
                     seed: int | None = None, name: str | None = None) -> Tensor:
    """Normal values, redrawn when more than two standard deviations from the mean."""
    return _scaled("TruncatedNormal", "truncated_normal", shape, dtype, seed, name, mean, stddev)


def random_uniform(shape: Any, minval: Any = 0, maxval: Any = None, dtype: Any = dtypes.float32,
                   seed: int | None = None, name: str | None = None) -> Tensor:
    """Uniform values in [minval, maxval) (maxval defaults to 1 for floats; required for ints).

    Built in TF1's `random_uniform` scope, the result named as the scope."""
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        maxval = 1
    with get_default_graph().name_scope(name or "random_uniform") as scope:
        shape_t, static = _shape_input(shape, "shape")
        s1, s2 = get_seed(seed)
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        return make_op("RandomUniform", [shape_t, lo, hi], dtype, static, scope, {"seed": s1, "seed2": s2})


def _bind_shuffle(op, ctx):
    rng = generator_for(op, ctx)
    return lambda x: x[rng.permutation(x.shape[0])] if x.ndim else x


registry.register_op("RandomShuffle", _bind_shuffle, stateful=True)
registry.not_differentiable("RandomShuffle")


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """Shuffle along the first dimension."""
    x = convert_to_tensor(value)
    s1, s2 = get_seed(seed)
    return make_op("RandomShuffle", [x], x.dtype, x.shape, name, {"seed": s1, "seed2": s2})


def _bind_multinomial(op, ctx):
    rng = generator_for(op, ctx)
    npd = op.outputs[0].dtype.as_numpy_dtype

    def kernel(logits, num_samples):
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z.astype(np.float64))
        p /= p.sum(axis=1, keepdims=True)
        cdf = np.cumsum(p, axis=1)
        u = rng.random((logits.shape[0], int(num_samples)))
        return np.minimum((u[:, :, None] > cdf[:, None, :]).sum(axis=2), logits.shape[1] - 1).astype(npd)
    return kernel


registry.register_op("Multinomial", _bind_multinomial, stateful=True)
registry.not_differentiable("Multinomial")


def multinomial(logits: Any, num_samples: Any, seed: int | None = None, name: str | None = None,
                output_dtype: Any = dtypes.int64) -> Tensor:
    """Draw class indices from the categorical distributions given by rows of `logits`."""
    x = convert_to_tensor(logits)
    n = convert_to_tensor(num_samples, dtype=dtypes.int32)
    nv = constant_value(n)
    s1, s2 = get_seed(seed)
    rows = x.shape.as_tuple()[0] if x.shape.ndims else None
    return make_op("Multinomial", [x, n], dtypes.as_dtype(output_dtype),
                   [rows, None if nv is None else int(nv)], name, {"seed": s1, "seed2": s2})


def _gamma(rng, shape, op, alpha):
    npd = op.outputs[0].dtype.as_numpy_dtype
    return rng.gamma(alpha, size=tuple(shape) + alpha.shape).astype(npd)


_random_op("RandomGamma", _gamma)


def random_gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                 seed: int | None = None, name: str | None = None) -> Tensor:
    from tftk.ops.math_ops import realdiv
    dtype = dtypes.as_dtype(dtype)
    a = convert_to_tensor(alpha, dtype=dtype)
    shape_t, static = _shape_input(shape)
    s1, s2 = get_seed(seed)
    out_shape = static.concatenate(a.shape)
    draws = make_op("RandomGamma", [shape_t, a], dtype, out_shape, name, {"seed": s1, "seed2": s2})
    return draws if beta is None else realdiv(draws, beta)


def stream_states(session, ops) -> dict[str, dict]:
    """Op name -> generator state of each random op in `ops` within `session`, so that a checkpoint can
    carry the random streams (dropout masks, sampled candidates) and a resumed run draws what it would have."""
    context = session._context  # where generator_for keeps each op's per-session generator
    return {op.name: generator_for(op, context).bit_generator.state for op in ops}


def restore_stream_states(session, graph, states: dict[str, dict]) -> None:
    """Put back what `stream_states` returned (the generators are the ones the kernels already hold)."""
    context = session._context
    for name, state in states.items():
        generator_for(graph.get_operation_by_name(name), context).bit_generator.state = state


def categorical(logits: Any, num_samples: Any, dtype: Any = None, seed: int | None = None,
                name: str | None = None) -> Tensor:
    """tf.random.categorical: class indices drawn from the rows of `logits` (int64 unless `dtype`)."""
    return multinomial(logits, num_samples, seed=seed, name=name, output_dtype=dtype or dtypes.int64)


def _poisson(rng, shape, op, lam):
    npd = op.outputs[0].dtype.as_numpy_dtype
    if (lam < 0).any():
        raise ValueError(f"random_poisson: lam must be >= 0, got {float(lam.min())}")
    return rng.poisson(lam.astype(np.float64), size=tuple(shape) + lam.shape).astype(npd)


_random_op("RandomPoissonV2", _poisson)


def random_poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: int | None = None,
                   name: str | None = None) -> Tensor:
    """Samples of Poisson(lam): shape `shape` + lam.shape."""
    rate = convert_to_tensor(lam)
    if not (rate.dtype.is_floating or rate.dtype.is_integer):
        raise TypeError(f"random_poisson: lam must be numeric, got {rate.dtype.name}")
    shape_t, static = _shape_input(shape)
    s1, s2 = get_seed(seed)
    return make_op("RandomPoissonV2", [shape_t, rate], dtypes.as_dtype(dtype), static.concatenate(rate.shape),
                   name, {"seed": s1, "seed2": s2})
