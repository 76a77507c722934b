"""Initializers: callables `init(shape, dtype=None, partition_info=None) -> Tensor` (TF1's init_ops)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor
from tftk.ops import linalg_ops, math_ops, matrix_ops, random_ops
from tftk.ops.array_ops import ones, reshape, zeros
from tftk.ops.constant_op import constant

__all__ = [
    "Initializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal", "TruncatedNormal",
    "Orthogonal", "VarianceScaling", "GlorotUniform", "GlorotNormal", "Identity",
    "zeros_initializer", "ones_initializer", "constant_initializer", "random_uniform_initializer",
    "random_normal_initializer", "truncated_normal_initializer", "orthogonal_initializer",
    "variance_scaling_initializer", "glorot_uniform_initializer", "glorot_normal_initializer",
    "identity_initializer", "xavier_initializer", "he_normal", "he_uniform", "lecun_normal",
    "lecun_uniform", "uniform_unit_scaling_initializer",
]


class Initializer:
    """Base class: subclasses build the initial-value tensor for a shape and dtype."""

    dtype: dtypes.DType = dtypes.float32

    def __init__(self, dtype: Any = dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        raise NotImplementedError

    def _dtype(self, dtype: Any) -> dtypes.DType:
        return dtypes.as_dtype(dtype) if dtype is not None else self.dtype

    def get_config(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return zeros(_dims(shape), self._dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape, dtype=None, partition_info=None):
        return ones(_dims(shape), self._dtype(dtype))


class Constant(Initializer):
    """A constant value; a scalar fills the shape, a list/array must have its size (TF1)."""

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        super().__init__(dtype)
        self.value = value
        self.verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None):
        return constant(self.value, dtype=self._dtype(dtype), shape=_dims(shape),
                        verify_shape=self.verify_shape)


class RandomUniform(Initializer):
    def __init__(self, minval: float = 0.0, maxval: float | None = None, seed: int | None = None,
                 dtype: Any = dtypes.float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(_dims(shape), self.minval, self.maxval, self._dtype(dtype), self.seed)


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None,
                 dtype: Any = dtypes.float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype), self.seed)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(_dims(shape), self.mean, self.stddev, self._dtype(dtype), self.seed)


class VarianceScaling(Initializer):
    """Random values with variance scale / n, n = fan_in, fan_out or their average (TF1)."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(dtype)
        if scale <= 0.0:
            raise ValueError("`scale` must be a positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode!r}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        # a part of a partitioned variable is scaled as the whole variable (TF1's rule)
        fan_in, fan_out = _fans(_dims(partition_info.full_shape) if partition_info is not None else dims)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dt = self._dtype(dtype)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978  # std of a unit normal truncated at 2
            return random_ops.truncated_normal(dims, 0.0, stddev, dt, self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(dims, 0.0, math.sqrt(scale), dt, self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(dims, -limit, limit, dt, self.seed)


class GlorotUniform(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class Orthogonal(Initializer):
    """A (reshaped) matrix with orthonormal rows or columns, times `gain`.

    Built as TF1 builds it, so the same seeds give TF's values: a normal draw of the flattened shape
    (rows = all but the last dimension, taller than wide), its QR factorisation, Q's columns signed by
    R's diagonal (which makes the factorisation unique), transposed back when the shape is wide.
    """

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(dtype)
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(dims[:-1])), int(dims[-1])
        a = random_ops.random_normal((max(rows, cols), min(rows, cols)), dtype=self._dtype(dtype), seed=self.seed)
        q, r = linalg_ops.qr(a, full_matrices=False)
        q *= math_ops.sign(matrix_ops.diag_part(r))
        if rows < cols:
            q = matrix_ops.matrix_transpose(q)
        return self.gain * reshape(q, dims)


class Identity(Initializer):
    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32):
        super().__init__(dtype)
        self.gain = gain

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        if len(dims) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dt = self._dtype(dtype)
        return constant(self.gain * np.eye(*dims), dtype=dt)


def _dims(shape: Any) -> list[int]:
    from tftk.framework.tensor_shape import as_shape
    s = as_shape(shape)
    if not s.is_fully_defined():
        raise ValueError(f"Shape of a new variable must be fully defined, but instead was {s}.")
    return s.as_list()


def _fans(shape: list[int]) -> tuple[float, float]:
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
orthogonal_initializer = Orthogonal
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
identity_initializer = Identity


class ContribVarianceScaling(Initializer):
    """tf.contrib.layers.variance_scaling_initializer: values of standard deviation sqrt(factor / n), n the
    fan-in, fan-out or their mean ("FAN_IN", "FAN_OUT", "FAN_AVG"); uniform in +-sqrt(3 factor / n), or a
    normal truncated at two standard deviations drawn with stddev sqrt(1.3 factor / n) (contrib's
    rounding of 1 / 0.8796^2, unlike the core initializer's exact correction)."""

    def __init__(self, factor: float = 2.0, mode: str = "FAN_IN", uniform: bool = False, seed: int | None = None,
                 dtype: Any = dtypes.float32):
        super().__init__(dtype)
        if not self.dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
            raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
        self.factor, self.mode, self.uniform, self.seed = factor, mode, uniform, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dims = _dims(shape)
        dt = self._dtype(dtype)
        if not dt.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        fan_in = float(dims[-2]) if len(dims) > 1 else float(dims[-1]) if dims else 1.0
        fan_out = float(dims[-1]) if dims else 1.0
        for d in dims[:-2]:
            fan_in, fan_out = fan_in * d, fan_out * d
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return random_ops.random_uniform(dims, -limit, limit, dt, self.seed)
        return random_ops.truncated_normal(dims, 0.0, math.sqrt(1.3 * self.factor / n), dt, self.seed)


contrib_variance_scaling_initializer = ContribVarianceScaling


def xavier_initializer(uniform: bool = True, seed: int | None = None, dtype: Any = dtypes.float32) -> Initializer:
    """tf.contrib.layers.xavier_initializer: contrib's variance scaling with factor 1 over the mean fan."""
    return ContribVarianceScaling(1.0, "FAN_AVG", uniform, seed, dtype)


def he_normal(seed: int | None = None) -> Initializer:
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: int | None = None) -> Initializer:
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed: int | None = None) -> Initializer:
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: int | None = None) -> Initializer:
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def uniform_unit_scaling_initializer(factor: float = 1.0, seed: int | None = None,
                                     dtype: Any = dtypes.float32) -> Initializer:
    return VarianceScaling(factor ** 2, "fan_in", "uniform", seed, dtype)
