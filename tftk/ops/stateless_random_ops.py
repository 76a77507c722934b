"""Stateless random ops (`tf.random.stateless_uniform`, `_normal`, `_truncated_normal`, `_categorical`,
`_gamma`, `_poisson`): values fixed by
a `seed` tensor of two integers, the same in every run and session, and the same as TF's.

TF derives a Philox key and counter from the seed pair (one Philox block of the seed under a fixed
key) and fills the output as its stateful ops do (`kernels/philox.py`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.kernels import philox
from tftk.ops import math_ops
from tftk.ops.op_builder import make_op, op_scope
from tftk.ops.random_ops import (gamma_alpha_grad, gamma_parameters, gamma_scaled, multinomial_kernel,
                                  multinomial_node, per_output_draws, shape_input)

__all__ = ["stateless_random_uniform", "stateless_random_normal", "stateless_truncated_normal",
           "stateless_multinomial", "stateless_categorical", "stateless_random_gamma", "stateless_random_poisson"]

_SEED_KEY = (0x3EC8F720, 0x02461E29)  # TF's fixed key for turning a seed pair into a key and counter
_MASK64 = (1 << 64) - 1


def key_and_counter(seed: np.ndarray) -> tuple[tuple[int, int], int]:
    """TF's GenerateKey: the Philox key and 128-bit counter a seed pair stands for."""
    seed = np.asarray(seed).astype(np.int64).reshape(-1)
    if seed.shape != (2,):
        raise ValueError(f"seed must have shape [2], not {list(np.shape(seed))}")
    words = (int(seed[0]) & _MASK64) | ((int(seed[1]) & _MASK64) << 64)
    mix = philox.philox_blocks(_SEED_KEY, words, np.zeros(1, np.uint64))[0]
    return (int(mix[0]), int(mix[1])), (int(mix[2]) << 64) | (int(mix[3]) << 96)


def _stateless_op(op_type: str, draw) -> None:
    """Register `op_type(shape, seed, *extra)`: `draw(key, counter, n, dtype, *extra)` gives n values."""

    def factory(op, ctx):
        dtype = op.outputs[0].dtype.as_numpy_dtype

        def kernel(shape, seed, *extra):
            dims = tuple(int(d) for d in shape)
            key, counter = key_and_counter(seed)
            return draw(key, counter, int(np.prod(dims, dtype=np.int64)), dtype, *extra).reshape(dims)
        return kernel

    registry.register_op(op_type, factory)
    registry.not_differentiable(op_type)


def _uniform_int(key, counter, n, dtype, low, high):
    if not low < high:
        raise ValueError(f"Need minval < maxval, got {low} >= {high}")
    return philox.uniform_int(key, counter, n, int(low), int(high), dtype)


_stateless_op("StatelessRandomUniform", philox.uniform_float)
_stateless_op("StatelessRandomNormal", philox.standard_normal)
_stateless_op("StatelessTruncatedNormal", philox.truncated_normal)
_stateless_op("StatelessRandomUniformInt", _uniform_int)


def _seed(seed: Any) -> Tensor:
    tensor = convert_to_tensor(seed, name="seed")
    if not tensor.dtype.is_integer or not tensor.shape.is_compatible_with([2]):
        raise ValueError(f"seed must be a shape [2] integer tensor, got {tensor.dtype.name} {tensor.shape}")
    return tensor


def _draw(op_type: str, shape: Any, seed: Any, dtype: dtypes.DType, extra: tuple = ()) -> Tensor:
    shape_t, static = shape_input(shape, "shape")
    return make_op(op_type, [shape_t, _seed(seed), *extra], dtype, static, op_type, {"dtype": dtype})


def stateless_random_uniform(shape: Any, seed: Any, minval: Any = 0, maxval: Any = None,
                             dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Uniform values in [minval, maxval) fixed by `seed` (maxval defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
        maxval = 1
    with op_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        low = convert_to_tensor(minval, dtype=dtype, name="min")
        high = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _draw("StatelessRandomUniformInt", shape, seed, dtype, (low, high))
        unit = _draw("StatelessRandomUniform", shape, seed, dtype)
        return math_ops.add(math_ops.multiply(unit, math_ops.subtract(high, low)), low, name=scope)


def _scaled(op_type: str, default_name: str, shape: Any, seed: Any, mean: Any, stddev: Any, dtype: Any,
            name: str | None) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        raw = _draw(op_type, shape, seed, dtype)
        return math_ops.add(math_ops.multiply(raw, stddev_t), mean_t, name=scope)


def stateless_random_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                            dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Normal values fixed by `seed`."""
    return _scaled("StatelessRandomNormal", "stateless_random_normal", shape, seed, mean, stddev, dtype, name)


def stateless_truncated_normal(shape: Any, seed: Any, mean: Any = 0.0, stddev: Any = 1.0,
                               dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """Normal values within two standard deviations, fixed by `seed`."""
    return _scaled("StatelessTruncatedNormal", "stateless_truncated_normal", shape, seed, mean, stddev, dtype, name)


_NEVER_FOLDED = {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault"}


def _folded_by_tensorflow(op) -> bool:
    """Whether TF's session would constant-fold `op` (no placeholder, variable or stateful op
    upstream): it then runs the kernel once, on one thread, which fixes how Multinomial shards."""
    seen, pending = set(), [t.op for t in op.inputs] + list(op.control_inputs)
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        kind = registry.lookup(node.type)
        if node.type in _NEVER_FOLDED or kind.stateful or kind.holds_state:
            return False
        pending += [t.op for t in node.inputs] + list(node.control_inputs)
    return True


def _bind_stateless_multinomial(op, ctx):
    threads = 1 if _folded_by_tensorflow(op) else None
    return multinomial_kernel(op, ctx, lambda n_values, seed: key_and_counter(seed), threads)


registry.register_op("StatelessMultinomial", _bind_stateless_multinomial)
registry.not_differentiable("StatelessMultinomial")


def stateless_multinomial(logits: Any, num_samples: Any, seed: Any, output_dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """Class indices drawn from the rows of `logits`, fixed by the seed pair (TF's draws)."""
    with op_scope(name, "stateless_multinomial", [logits, seed]):
        return multinomial_node("StatelessMultinomial", logits, num_samples, (_seed(seed),), output_dtype, {})


def stateless_categorical(logits: Any, num_samples: Any, seed: Any, dtype: Any = dtypes.int64,
                          name: str | None = None) -> Tensor:
    """tf.random.stateless_categorical: stateless_multinomial with TF2's argument name for the dtype."""
    with op_scope(name, "stateless_categorical", [logits, seed]):
        return multinomial_node("StatelessMultinomial", logits, num_samples, (_seed(seed),), dtype, {})


def _bind_stateless_per_output(op, ctx):
    """StatelessRandomGammaV2 / StatelessRandomPoisson: the output's trailing dims are the
    parameter's; each parameter value gets the leading dims' worth of draws."""
    def kernel(shape, seed, parameter):
        dims = tuple(int(d) for d in shape)
        n = int(np.prod(dims, dtype=np.int64))
        if n == 0:
            return np.zeros(dims, op.outputs[0].dtype.as_numpy_dtype)
        if dims[len(dims) - parameter.ndim:] != parameter.shape or parameter.ndim > len(dims):
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Shape passed in must end with broadcasted "
                                              f"shape (shape {list(dims)}, parameter {list(parameter.shape)})")
        key, counter = key_and_counter(seed)
        return per_output_draws(op, key, counter, parameter, n // parameter.size).reshape(dims)
    return kernel


registry.register_op("StatelessRandomGammaV2", _bind_stateless_per_output)
registry.register_op("StatelessRandomPoisson", _bind_stateless_per_output)
registry.not_differentiable("StatelessRandomPoisson")


@registry.register_gradient("StatelessRandomGammaV2")
def _stateless_gamma_grad(op, grad):
    return [None, None, gamma_alpha_grad(op.inputs[2], op.outputs[0], grad)]


def stateless_random_gamma(shape: Any, seed: Any, alpha: Any, beta: Any = None, dtype: Any = dtypes.float32,
                           name: str | None = None) -> Tensor:
    """Gamma(alpha, beta) draws of shape `shape` (ending with broadcast(alpha, beta).shape), fixed by
    the seed pair: TF's values."""
    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        shape_t, static = shape_input(shape, "shape")
        a_broadcast, b = gamma_parameters(alpha, beta, dtype)
        draws = make_op("StatelessRandomGammaV2", [shape_t, _seed(seed), a_broadcast], dtype, static,
                        "StatelessRandomGammaV2", {"dtype": dtype})
        return gamma_scaled(draws, b)


def stateless_random_poisson(shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32,
                             name: str | None = None) -> Tensor:
    """Poisson(lam) draws of shape `shape` (ending with lam's shape), fixed by the seed pair: TF's values."""
    dtype = dtypes.as_dtype(dtype)
    with op_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        shape_t, static = shape_input(shape, "shape")
        rate = convert_to_tensor(lam, name="lam")
        return make_op("StatelessRandomPoisson", [shape_t, _seed(seed), rate], dtype, static,
                       "StatelessRandomPoisson", {"dtype": dtype})
