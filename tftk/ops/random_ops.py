"""Random ops with TF1's seeding rules: graph seed + op seed give the same values in every run.

Each random op owns one generator per session, seeded from (graph seed, op seed), so a fresh
session replays the same sequence, and successive runs in one session draw new values.
`random_uniform`, `random_normal` and `truncated_normal` (and with them the initializers and
dropout) draw from TF's own Philox stream (`kernels/philox.py`): for the same seeds they give
TF's values, run after run. The other random ops draw from numpy generators with the same
seeding rules but their own values.
"""

from __future__ import annotations

import random as _py_random
import weakref
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels import philox
from tftk.ops import math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.op_builder import make_op, op_scope

__all__ = ["set_random_seed", "get_seed", "random_normal", "random_uniform", "truncated_normal",
           "random_shuffle", "multinomial", "random_gamma", "categorical", "random_poisson", "DEFAULT_GRAPH_SEED"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_unseeded_ops_built: "weakref.WeakKeyDictionary[Any, int]" = weakref.WeakKeyDictionary()  # graph -> count


def set_random_seed(seed: int | None) -> None:
    """Set the default graph's seed: ops created afterwards become reproducible."""
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The (graph seed, op seed) pair a new random op uses (None, None = nondeterministic).

    With a graph seed and no op seed, ops take 0, 1, 2, ... in the order they are built in their
    graph, as TF's `tf.compat.v1` does (TF 1.x used the graph's op count instead, which depends
    on every op built before; the counter gives TF's values whatever else the graph holds).
    """
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = _unseeded_ops_built.setdefault(graph, 0)
            _unseeded_ops_built[graph] += 1
        seeds = graph_seed % _MAXINT32, op_seed % _MAXINT32
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, op_seed % _MAXINT32
    else:
        return None, None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds  # (0, 0) would mean "nondeterministic" to TF


def generator_for(op, ctx) -> np.random.Generator:
    """The per-session generator of a random op."""
    seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")

    def create() -> np.random.Generator:
        if seed is None:
            return np.random.default_rng(_py_random.SystemRandom().getrandbits(64))
        return np.random.default_rng([seed & 0xFFFFFFFF, seed2 & 0xFFFFFFFF])

    return ctx.resource(op, "rng", create)


def philox_for(op, ctx) -> philox.PhiloxState:
    """The per-session Philox stream of a random op drawing TF's values."""
    seed, seed2 = op.get_attr("seed"), op.get_attr("seed2")

    def create() -> philox.PhiloxState:
        if seed is None:
            entropy = _py_random.SystemRandom()
            return philox.PhiloxState(entropy.getrandbits(64), entropy.getrandbits(64))
        return philox.PhiloxState(seed, seed2)

    return ctx.resource(op, "philox", create)


def shape_input(shape: Any, name: str | None = None) -> tuple[Tensor, TensorShape]:
    static = constant_value(shape) if isinstance(shape, Tensor) else np.asarray(shape)
    tensor = convert_to_tensor(shape, dtype=dtypes.int32, name=name)
    return tensor, TensorShape(None if static is None else [int(d) for d in np.atleast_1d(static)]
                               if np.ndim(static) else [])


def _random_op(op_type: str, draw: Callable) -> None:
    """Register a random op whose kernel is `draw(rng, shape_tuple, op, *extra_inputs)`."""

    def factory(op, ctx):
        rng = generator_for(op, ctx)
        return lambda shape, *extra: draw(rng, tuple(int(d) for d in shape), op, *extra)

    _register_random(op_type, factory)


def _register_random(op_type: str, factory: Callable) -> None:
    registry.register_op(op_type, factory, stateful=True)
    registry.not_differentiable(op_type)


_PHILOX_TYPES: set[str] = set()  # op types whose per-session stream is a PhiloxState


def _philox_op(op_type: str, draw: Callable) -> None:
    """Register a random op on TF's Philox stream: `draw(key, counter, n, op, *extra)` gives n values."""

    def factory(op, ctx):
        stream = philox_for(op, ctx)

        def kernel(shape, *extra):
            dims = tuple(int(d) for d in shape)
            n = int(np.prod(dims, dtype=np.int64))
            key, counter = stream.reserve(n)
            return draw(key, counter, n, op, *extra).reshape(dims)
        return kernel

    _PHILOX_TYPES.add(op_type)
    _register_random(op_type, factory)


def _numpy_dtype(op):
    return op.outputs[0].dtype.as_numpy_dtype


def _uniform_int(key, counter, n, op, low, high):
    if not low < high:
        raise ValueError(f"Need minval < maxval, got {low} >= {high}")
    return philox.uniform_int(key, counter, n, int(low), int(high), _numpy_dtype(op))


_philox_op("RandomStandardNormal", lambda key, counter, n, op: philox.standard_normal(key, counter, n, _numpy_dtype(op)))
_philox_op("TruncatedNormal", lambda key, counter, n, op: philox.truncated_normal(key, counter, n, _numpy_dtype(op)))
_philox_op("RandomUniform", lambda key, counter, n, op: philox.uniform_float(key, counter, n, _numpy_dtype(op)))
_philox_op("RandomUniformInt", _uniform_int)


# The constructors build TF's nodes in TF's order (the shape, the parameters, then the random op):
# with a graph seed and no op seed, the op seed is the number of ops built so far, as in TF.

def _random_op_node(op_type: str, shape_t: Tensor, static: TensorShape, dtype: dtypes.DType,
                    seed: int | None, extra: tuple = ()) -> Tensor:
    s1, s2 = get_seed(seed)
    return make_op(op_type, [shape_t, *extra], dtype, static, op_type, {"seed": s1, "seed2": s2})


def _scaled(op_type: str, default_name: str, shape: Any, dtype: Any, seed: int | None, name: str | None,
            mean: Any, stddev: Any) -> Tensor:
    """`op_type`'s standard draws * stddev + mean, built as TF builds random_normal."""
    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, default_name, [shape, mean, stddev]) as scope:
        shape_t, static = shape_input(shape, "shape")
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        raw = _random_op_node(op_type, shape_t, static, dtype, seed)
        return math_ops.add(math_ops.multiply(raw, stddev_t), mean_t, name=scope)


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

    As TF builds it: RandomUniformInt(shape, min, max) for integers; for floats the unit draw,
    times maxval when minval is the Python 0, else `unit * (max - min) + min` (no bounds at all
    for the default [0, 1)).
    """
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        maxval = 1
    with op_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        shape_t, static = shape_input(shape, "shape")
        minval_is_zero = isinstance(minval, int) and minval == 0
        maxval_is_one = isinstance(maxval, int) and maxval == 1
        if not minval_is_zero or not maxval_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            s1, s2 = get_seed(seed)
            return make_op("RandomUniformInt", [shape_t, minval, maxval], dtype, static, scope,
                           {"seed": s1, "seed2": s2})
        unit = _random_op_node("RandomUniform", shape_t, static, dtype, seed)
        if minval_is_zero:
            return unit if maxval_is_one else math_ops.multiply(unit, maxval, name=scope)
        return math_ops.add(math_ops.multiply(unit, math_ops.subtract(maxval, minval)), minval, name=scope)


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
    dtype = dtypes.as_dtype(dtype)
    a = convert_to_tensor(alpha, dtype=dtype)
    shape_t, static = shape_input(shape)
    s1, s2 = get_seed(seed)
    out_shape = static.concatenate(a.shape)
    draws = make_op("RandomGamma", [shape_t, a], dtype, out_shape, name, {"seed": s1, "seed2": s2})
    return draws if beta is None else math_ops.realdiv(draws, beta)


def stream_states(session, ops) -> dict[str, dict]:
    """Op name -> generator state of each random op in `ops` within `session`, so that a checkpoint can
    carry the random streams (dropout masks, sampled candidates) and a resumed run draws what it would have."""
    context = session._context  # where generator_for / philox_for keep each op's per-session stream
    return {op.name: philox_for(op, context).state if op.type in _PHILOX_TYPES
            else generator_for(op, context).bit_generator.state for op in ops}


def restore_stream_states(session, graph, states: dict[str, dict]) -> None:
    """Put back what `stream_states` returned (the generators are the ones the kernels already hold)."""
    context = session._context
    for name, state in states.items():
        op = graph.get_operation_by_name(name)
        if op.type in _PHILOX_TYPES:
            philox_for(op, context).state = state
        else:
            generator_for(op, context).bit_generator.state = state


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
    shape_t, static = shape_input(shape)
    s1, s2 = get_seed(seed)
    return make_op("RandomPoissonV2", [shape_t, rate], dtypes.as_dtype(dtype), static.concatenate(rate.shape),
                   name, {"seed": s1, "seed2": s2})
