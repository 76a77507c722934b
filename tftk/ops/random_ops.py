"""Random ops with TF1's seeding rules: graph seed + op seed give the same values in every run.

Each random op owns one generator per session, seeded from (graph seed, op seed), so a fresh
session replays the same sequence, and successive runs in one session draw new values.
Every op here draws from TF's own Philox stream (`kernels/philox.py`, the rejection samplers in
`kernels/philox_rejection.py`): random_uniform/normal, truncated_normal (and with them the
initializers and dropout), random_shuffle, multinomial/categorical, random_gamma and
random_poisson give, for the same seeds, TF's values run after run; the orthogonal initializer
(init_ops) is built on random_normal as TF builds it. `generator_for` remains for the candidate
samplers, which draw from a numpy generator with the same seeding rules.
"""

from __future__ import annotations

import math
import os
import random as _py_random
import weakref
from typing import Any, Callable

import numpy as np

from tftk.framework import batch_rows, dtypes, errors, registry
from tftk.framework.ops import Tensor, convert_to_tensor, get_default_graph
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels import philox
from tftk.ops import math_ops
from tftk.ops.constant_value import constant_value
from tftk.ops.array_ops import pack_shape_list, partial_shape, reshape
from tftk.ops.op_builder import make_op, op_scope
from tftk.ops.reduction_ops import reduce_sum
from tftk.ops.special_math_ops import _digamma
from tftk.ops.tile_pad_ops import broadcast_to

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
    """A random op's shape argument as an int32 tensor (a list holding tensors packed, as TF does) and
    what is known of it at build time."""
    shape = pack_shape_list(shape)
    static = constant_value(shape) if isinstance(shape, Tensor) else np.asarray(shape)
    tensor = convert_to_tensor(shape, dtype=dtypes.int32, name=name)
    if static is None:
        return tensor, partial_shape(tensor)
    return tensor, TensorShape([int(d) for d in np.atleast_1d(static)] if np.ndim(static) else [])


def _register_random(op_type: str, factory: Callable, shaped: bool = False) -> None:
    """`shaped`: the op's first input is the shape of what it draws (a dropout mask's is its input's)."""
    registry.register_op(op_type, factory, stateful=True, rows=batch_rows.random if shaped else None)
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
    _register_random(op_type, factory, shaped=True)


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
    """TF's RandomShuffle: Fisher-Yates over the first axis, one 32-bit sample per swap, the
    stream moved on by ceil((n - 1) / 4) blocks a run (nothing when there is nothing to shuffle)."""
    stream = philox_for(op, ctx)

    def kernel(x):
        if x.size <= 1 or x.shape[0] <= 1:
            return x
        size = x.shape[0]
        if size >= 2**31:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: cannot shuffle {size} rows (2**31 at most)")
        (k0, k1), counter = stream.reserve_blocks((size + 2) // 4)
        from tftk.kernels import philox_rejection  # lazy: Numba loads when a draw runs
        return x[philox_rejection.fisher_yates(np.uint64(k0), np.uint64(k1), np.uint64(counter & _LOW64),
                                               np.uint64(counter >> 64), size)]
    return kernel


_PHILOX_TYPES.add("RandomShuffle")
_register_random("RandomShuffle", _bind_shuffle)


def random_shuffle(value: Any, seed: int | None = None, name: str | None = None) -> Tensor:
    """Shuffle along the first dimension."""
    x = convert_to_tensor(value)
    s1, s2 = get_seed(seed)
    return make_op("RandomShuffle", [x], x.dtype, x.shape, name, {"seed": s1, "seed2": s2})


def _intra_op_threads(ctx) -> int:
    """The threads TF would shard a kernel over: the session's intra-op setting, else the CPUs."""
    configured = getattr(getattr(ctx.session, "_config", None), "intra_op_parallelism_threads", 0)
    return configured if configured and configured > 0 else len(os.sched_getaffinity(0))


def multinomial_kernel(op, ctx, stream_for: Callable, threads: int | None = None) -> Callable:
    """The kernel of Multinomial-like `op`: checks its input as TF does, then draws from the
    (key, counter) that `stream_for(n_values, *extra_inputs)` reserves for the run, its rows
    sharded as TF shards them over `threads` (default: the session's intra-op threads)."""
    npd = _numpy_dtype(op)
    threads = threads or _intra_op_threads(ctx)

    def fail(message: str):
        raise errors.InvalidArgumentError(None, op, f"{op.name}: {message}")

    def kernel(logits, num_samples, *extra):
        if logits.ndim != 2:
            fail(f"logits should be a matrix, got shape {list(logits.shape)}")
        if np.ndim(num_samples) != 0:
            fail(f"num_samples should be a scalar, got shape {list(np.shape(num_samples))}")
        n = int(num_samples)
        if n < 0:
            fail(f"num_samples should be non-negative, got {n}")
        batch, classes = logits.shape
        if classes == 0:
            fail("num_classes should be positive, got 0")
        if batch * n == 0:
            return np.zeros((batch, n), npd)
        key, counter = stream_for(batch * ((n + 3) // 4 * 4) * 2, *extra)  # two 32-bit samples a double
        return philox.multinomial(key, counter, logits, n, threads).astype(npd)
    return kernel


def _bind_multinomial(op, ctx):
    return multinomial_kernel(op, ctx, philox_for(op, ctx).reserve)


_PHILOX_TYPES.add("Multinomial")
_register_random("Multinomial", _bind_multinomial)


def multinomial(logits: Any, num_samples: Any, seed: int | None = None, name: str | None = None,
                output_dtype: Any = dtypes.int64) -> Tensor:
    """Draw class indices from the categorical distributions given by rows of `logits`."""
    return _multinomial("multinomial", logits, num_samples, seed, name, output_dtype)


def _multinomial(default_name: str, logits: Any, num_samples: Any, seed: int | None, name: str | None,
                 output_dtype: Any) -> Tensor:
    with op_scope(name, default_name, [logits]):
        s1, s2 = get_seed(seed)
        return multinomial_node("Multinomial", logits, num_samples, (), output_dtype, {"seed": s1, "seed2": s2})


def multinomial_node(op_type: str, logits: Any, num_samples: Any, extra: tuple, output_dtype: Any,
                     attrs: dict, name: str | None = None) -> Tensor:
    """A Multinomial-like node [batch, num_samples], its logits and constant num_samples checked as TF
    checks them when it builds the graph."""
    x = convert_to_tensor(logits, name="logits")
    if x.shape.ndims is not None and x.shape.ndims != 2:
        raise ValueError(f"Shape must be rank 2 but is rank {x.shape.ndims} for {op_type} (logits of shape {x.shape})")
    n = convert_to_tensor(num_samples, dtype=dtypes.int32, name="num_samples")
    nv = constant_value(n)
    if nv is not None and int(nv) < 0:
        raise ValueError(f"{op_type}: num_samples must be non-negative but is {int(nv)}")
    rows = x.shape.as_tuple()[0] if x.shape.ndims else None
    return make_op(op_type, [x, n, *extra], dtypes.as_dtype(output_dtype), [rows, None if nv is None else int(nv)],
                   name or op_type, attrs)


def _float_as(values: np.ndarray, npd) -> np.ndarray:
    """A double result as TF's static_cast<T> gives it (Eigen::half rounds through float)."""
    if npd == np.float16:
        return values.astype(np.float32).astype(np.float16)
    return values.astype(npd)


def per_output_draws(op, key: tuple[int, int], counter: int, parameter: np.ndarray, num_samples: int) -> np.ndarray:
    """`num_samples` Gamma (op type with "Gamma") or Poisson draws of each parameter value, flat and
    sample-major in the op's dtype, output i read from block 256 * i on (RandomGamma, RandomPoissonV2
    and their stateless twins)."""
    from tftk.kernels import philox_rejection  # lazy: Numba loads when a draw runs

    npd = np.dtype(_numpy_dtype(op))
    values = np.ascontiguousarray(parameter, dtype=np.float64).reshape(-1)
    words = np.uint64(key[0]), np.uint64(key[1]), np.uint64(counter & _LOW64), np.uint64(counter >> 64)
    if "Gamma" in op.type:
        return _float_as(philox_rejection.gamma_samples(*words, values, num_samples), npd)
    unbounded = np.isnan(values) | (values > _HIGHEST[npd])  # TF's kernel would loop forever on these
    if unbounded.any():
        raise errors.InvalidArgumentError(None, op, f"{op.name}: rate {values[unbounded][0]} has no draws that fit "
                                          f"{npd.name}: give a finite rate below {_HIGHEST[npd]:g}")
    return _float_as(philox_rejection.poisson_samples(*words, values, num_samples, _HIGHEST[npd]), npd)


def _bind_per_output(op, ctx):
    """RandomGamma / RandomPoissonV2: `shape` draws of each parameter, shape + parameter.shape."""
    stream = philox_for(op, ctx)

    def kernel(shape, parameter):
        dims = tuple(int(d) for d in shape)
        num_samples = int(np.prod(dims, dtype=np.int64))
        if num_samples == 0 or parameter.size == 0:
            return np.zeros(dims + parameter.shape, _numpy_dtype(op))
        key, counter = stream.reserve(num_samples * parameter.size)
        return per_output_draws(op, key, counter, parameter, num_samples).reshape(dims + parameter.shape)
    return kernel


_PHILOX_TYPES.add("RandomGamma")
registry.register_op("RandomGamma", _bind_per_output, stateful=True)


def _gamma_sample_grad(alpha: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """RandomGammaGrad: d sample / d alpha of Gamma(alpha, 1) samples (alpha broadcast to the samples)."""
    from tftk.kernels.gamma_sample_grad import gamma_sample_grad  # lazy: Numba loads when it runs

    alphas = np.broadcast_to(alpha, np.broadcast_shapes(alpha.shape, sample.shape)).astype(np.float64)
    samples = np.broadcast_to(sample, alphas.shape).astype(np.float64)
    distinct, where_in = np.unique(alphas, return_inverse=True)  # digamma once per distinct alpha
    digammas = np.array([_digamma(a) if a > 0 else math.nan for a in distinct.tolist()])[where_in.reshape(-1)]
    grads = gamma_sample_grad(alphas.reshape(-1), samples.reshape(-1), digammas)
    return grads.reshape(alphas.shape).astype(np.result_type(alpha, sample))


registry.register_op("RandomGammaGrad", lambda op, ctx: _gamma_sample_grad)
registry.not_differentiable("RandomGammaGrad")


@registry.register_gradient("RandomGamma")
def _random_gamma_grad(op, grad):
    return [None, gamma_alpha_grad(op.inputs[1], op.outputs[0], grad)]


def gamma_alpha_grad(alpha: Tensor, sample: Tensor, grad: Tensor) -> Tensor:
    """The implicit reparameterisation gradient: sum over the sample dimensions of grad * dx/dalpha."""
    sample_dims = sample.shape.ndims - alpha.shape.ndims
    alpha_leading = reshape(alpha, [1] * sample_dims + alpha.shape.as_list())
    partial = make_op("RandomGammaGrad", [alpha_leading, sample], sample.dtype, sample.shape, "RandomGammaGrad")
    return reduce_sum(math_ops.multiply(grad, partial), axis=list(range(sample_dims)))


def random_gamma(shape: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                 seed: int | None = None, name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) samples of shape `shape` + broadcast(alpha, beta).shape, as TF builds it:
    RandomGamma of the broadcast alpha, divided by beta, kept above the dtype's smallest normal."""
    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, "random_gamma", [shape, alpha, beta]):
        shape_t, static = shape_input(shape, "shape")
        a_broadcast, b = gamma_parameters(alpha, beta, dtype)
        s1, s2 = get_seed(seed)
        draws = make_op("RandomGamma", [shape_t, a_broadcast], dtype, static.concatenate(a_broadcast.shape),
                        "RandomGamma", {"seed": s1, "seed2": s2})
        return gamma_scaled(draws, b)


def gamma_parameters(alpha: Any, beta: Any, dtype: dtypes.DType) -> tuple[Tensor, Tensor]:
    """(alpha broadcast against beta, beta), both of `dtype`, as TF's random_gamma builds them."""
    a = convert_to_tensor(alpha, dtype=dtype, name="alpha")
    b = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
    a_dims, b_dims = a.shape.as_tuple(), b.shape.as_tuple()
    known = a_dims is not None and b_dims is not None and None not in a_dims + b_dims
    return (broadcast_to(a, np.broadcast_shapes(a_dims, b_dims)) if known else a), b


def gamma_scaled(draws: Tensor, beta: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws / beta, kept above the dtype's smallest normal number (TF's rule)."""
    return math_ops.maximum(np.finfo(draws.dtype.as_numpy_dtype).tiny, math_ops.realdiv(draws, beta))


_LOW64 = (1 << 64) - 1
_HIGHEST = {np.dtype(t): float(np.finfo(t).max if np.dtype(t).kind == "f" else np.iinfo(t).max)
            for t in (np.float16, np.float32, np.float64, np.int32, np.int64)}


_PHILOX_TYPES.add("RandomPoissonV2")
_register_random("RandomPoissonV2", _bind_per_output)


def random_poisson(lam: Any, shape: Any, dtype: Any = dtypes.float32, seed: int | None = None,
                   name: str | None = None) -> Tensor:
    """Samples of Poisson(lam): shape `shape` + lam.shape (lam of any float or int type)."""
    with op_scope(name, "random_poisson", [lam, shape]):
        shape_t, static = shape_input(shape, "shape")
        rate = convert_to_tensor(lam, name="rate")
        if not (rate.dtype.is_floating or rate.dtype.is_integer):
            raise TypeError(f"random_poisson: lam must be numeric, got {rate.dtype.name}")
        s1, s2 = get_seed(seed)
        return make_op("RandomPoissonV2", [shape_t, rate], dtypes.as_dtype(dtype), static.concatenate(rate.shape),
                       "RandomPoissonV2", {"seed": s1, "seed2": s2})


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
    return _multinomial("categorical", logits, num_samples, seed, name, dtype or dtypes.int64)
