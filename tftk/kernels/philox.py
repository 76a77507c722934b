"""TensorFlow's random numbers: Philox4x32-10 and the distributions of its CPU random kernels.

TF1's stateful random ops (RandomUniform, RandomStandardNormal, TruncatedNormal,
RandomUniformInt) draw from a Philox4x32-10 counter-based generator whose key is the graph seed
and whose counter starts at the op seed. Reproducing the generator, TF's bit-level conversions
(23 random mantissa bits for a float in [0, 1), 52 for a double), its Box-Muller transform and
the way a kernel splits its output into groups gives, for the same seeds, the very values TF
gives. Every function here is vectorised over the output's groups (numpy, no Python loop per
element); the float32 draws (and float64 uniforms) run in `philox_fill`'s compiled loops, ~20-50x
faster, with the same values.

Layout (TF's FillPhiloxRandom): an output of n values is cut into groups of the distribution's
`group_size`; group g of a fixed-cost distribution is produced by the generator's counter advanced
by g (one 128-bit block per group); truncated normal, which rejects samples, gives each group
its own stretch of 256 blocks and takes 32-bit samples one at a time from there. Each run of an
op moves its generator on by 256 blocks per output value (TF's ReserveRandomOutputs).
"""

from __future__ import annotations

import math

import numpy as np

from tftk.kernels import philox_fill
from tftk.kernels.jit import njit

__all__ = ["PhiloxState", "uniform_float", "standard_normal", "truncated_normal", "uniform_int",
           "philox_blocks", "samples32", "tf_shards", "multinomial"]

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_LOW32 = np.uint64(0xFFFFFFFF)
_SAMPLES_RESERVED_PER_VALUE = 256  # TF's multiplier in ReserveRandomOutputs and FillPhiloxRandomTask
_BLOCK = 4  # 32-bit samples per 128-bit Philox block


class PhiloxState:
    """One op's generator in one session: key from the graph seed, counter from the op seed."""

    def __init__(self, seed: int, seed2: int):
        seed, seed2 = int(seed) & 0xFFFFFFFFFFFFFFFF, int(seed2) & 0xFFFFFFFFFFFFFFFF
        self.key = (seed & 0xFFFFFFFF, seed >> 32)
        self.counter = seed2 << 64  # the 128-bit counter: words 2 and 3 hold seed2

    @property
    def state(self) -> dict:
        """What a checkpoint keeps of the stream (JSON-ready)."""
        return {"philox_key": list(self.key), "philox_counter": str(self.counter)}

    @state.setter
    def state(self, value: dict) -> None:
        self.key = tuple(int(k) for k in value["philox_key"])
        self.counter = int(value["philox_counter"])

    def reserve(self, n_values: int) -> tuple[tuple[int, int], int]:
        """(key, counter) for one run producing `n_values` values; moves the generator past them
        (TF's ReserveRandomOutputs: 256 blocks per value)."""
        return self.reserve_blocks(n_values * _SAMPLES_RESERVED_PER_VALUE)

    def reserve_blocks(self, blocks: int) -> tuple[tuple[int, int], int]:
        """(key, counter) for one run using `blocks` 128-bit blocks; moves the generator past them."""
        start = self.counter
        self.counter = (self.counter + blocks) & ((1 << 128) - 1)
        return self.key, start


def philox_blocks(key: tuple[int, int], counter: int, offsets: np.ndarray) -> np.ndarray:
    """Philox4x32-10 of the blocks at `counter + offsets`: an array of shape (len(offsets), 4) uint32."""
    offsets = np.asarray(offsets, dtype=np.uint64)
    low = np.uint64(counter & 0xFFFFFFFFFFFFFFFF)
    words_01 = low + offsets  # 64-bit wrap-around: carry into words 2-3
    carry = (words_01 < offsets).astype(np.uint64)
    high = counter >> 64
    words_23 = np.uint64(high & 0xFFFFFFFFFFFFFFFF) + carry
    c0 = (words_01 & _LOW32).astype(np.uint32)
    c1 = (words_01 >> np.uint64(32)).astype(np.uint32)
    c2 = (words_23 & _LOW32).astype(np.uint32)
    c3 = (words_23 >> np.uint64(32)).astype(np.uint32)
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    with np.errstate(over="ignore"):
        for round_index in range(10):
            p0 = _M0 * c0.astype(np.uint64)
            p1 = _M1 * c2.astype(np.uint64)
            c0, c1, c2, c3 = ((p1 >> np.uint64(32)).astype(np.uint32) ^ c1 ^ k0,
                              (p1 & _LOW32).astype(np.uint32),
                              (p0 >> np.uint64(32)).astype(np.uint32) ^ c3 ^ k1,
                              (p0 & _LOW32).astype(np.uint32))
            if round_index < 9:
                k0, k1 = k0 + _W0, k1 + _W1
    return np.stack([c0, c1, c2, c3], axis=1)


def _to_float(bits: np.ndarray) -> np.ndarray:
    """TF's Uint32ToFloat: 23 random mantissa bits under exponent 0, minus one: [0, 1)."""
    return ((bits & np.uint32(0x7FFFFF)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1.0)


def _to_double(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """TF's Uint64ToDouble: 20 mantissa bits from `high`, 32 from `low`, in [0, 1)."""
    mantissa = ((high & np.uint32(0xFFFFF)).astype(np.uint64) << np.uint64(32)) | low.astype(np.uint64)
    return (mantissa | np.uint64(1023 << 52)).view(np.float64) - 1.0


def _fixed_groups(key, counter, n: int, group_size: int) -> np.ndarray:
    """The blocks of a fixed-cost distribution: one per group of `group_size` outputs."""
    return philox_blocks(key, counter, np.arange(-(-n // group_size), dtype=np.uint64))


def _state(key, counter: int) -> np.ndarray:
    """The generator as `philox_fill`'s kernels take it: [key0, key1, counter low, counter high]."""
    return np.array([key[0], key[1], counter & 0xFFFFFFFFFFFFFFFF, counter >> 64], np.uint64)


def _filled(kernel, key, counter, size: int, dtype) -> np.ndarray:
    out = np.empty(size, dtype)
    kernel(_state(key, counter), out)
    return out


def uniform_float(key, counter, n: int, dtype, compiled: bool = True) -> np.ndarray:
    """RandomUniform's n values in [0, 1) (float16/32 from 32-bit samples, float64 from pairs).

    float32 and float64 come from `philox_fill`'s compiled loop unless `compiled` is False (the
    numpy path: the same values, the reference the kernels are tested against)."""
    dtype = np.dtype(dtype)
    if compiled and dtype in (np.float32, np.float64):
        kernel = philox_fill.uniform_float32 if dtype == np.float32 else philox_fill.uniform_float64
        return _filled(kernel, key, counter, n, dtype)
    if dtype == np.float64:
        blocks = _fixed_groups(key, counter, n, 2)
        return _to_double(blocks[:, 0::2], blocks[:, 1::2]).reshape(-1)[:n]
    if dtype == np.float16:  # TF's Uint16ToHalf: 10 mantissa bits of the low half of each sample
        bits = _fixed_groups(key, counter, n, 4).reshape(-1)[:n]
        halves = ((bits & np.uint32(0x3FF)) | np.uint32(15 << 10)).astype(np.uint16).view(np.float16)
        return halves - np.float16(1.0)
    return _to_float(_fixed_groups(key, counter, n, 4)).reshape(-1)[:n].astype(dtype, copy=False)


@njit(cache=True, nogil=True)
def _box_muller_loop(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos branches of Box-Muller in float32 through libm's logf/sinf/cosf (what TF's
    sincosf computes), so the values agree with TF to the bit (numpy's float32 sin and log are
    vectorised approximations a few ulps away)."""
    first = np.empty(u.size, np.float32)
    second = np.empty(u.size, np.float32)
    for i in range(u.size):
        radius = math.sqrt(np.float32(-2.0) * math.log(max(u[i], np.float32(1.0e-7))))
        first[i] = math.sin(v[i]) * radius
        second[i] = math.cos(v[i]) * radius
    return first, second


def _box_muller_float(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's BoxMullerFloat of two 32-bit samples (its angle is float(2 * M_PI * u), M_PI a double)."""
    angle = (2.0 * np.pi * _to_float(x1).astype(np.float64)).astype(np.float32)
    return _box_muller_loop(np.ascontiguousarray(_to_float(x0)), angle)


@njit(cache=True, nogil=True)
def _box_muller_doubles(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos branches of Box-Muller in float64 through libm's log/sin/cos, as TF's
    BoxMullerDouble computes them: numpy's float64 log/sin/cos are vectorised on AVX-512 hosts and
    differ from libm's by an ulp in ~1 value in 700."""
    first = np.empty(u.size, np.float64)
    second = np.empty(u.size, np.float64)
    for i in range(u.size):
        radius = math.sqrt(-2.0 * math.log(max(u[i], 1.0e-7)))
        angle = 2.0 * math.pi * v[i]
        first[i] = math.sin(angle) * radius
        second[i] = math.cos(angle) * radius
    return first, second


def _box_muller_double(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TF's BoxMullerDouble of each block's four 32-bit samples: two doubles per block."""
    return _box_muller_doubles(_to_double(blocks[:, 0], blocks[:, 1]), _to_double(blocks[:, 2], blocks[:, 3]))


def standard_normal(key, counter, n: int, dtype, compiled: bool = True) -> np.ndarray:
    """RandomStandardNormal's n values: Box-Muller on pairs of uniforms from each block (float32
    through `philox_fill`'s compiled loop unless `compiled` is False)."""
    dtype = np.dtype(dtype)
    if compiled and dtype == np.float32:
        return _filled(philox_fill.normal_float32, key, counter, n, dtype)
    if dtype == np.float64:
        return np.stack(_box_muller_double(_fixed_groups(key, counter, n, 2)), axis=1).reshape(-1)[:n]
    blocks = _fixed_groups(key, counter, n, 4)
    first = _box_muller_float(blocks[:, 0], blocks[:, 1])
    second = _box_muller_float(blocks[:, 2], blocks[:, 3])
    values = np.stack([first[0], first[1], second[0], second[1]], axis=1).reshape(-1)[:n]
    return values.astype(dtype, copy=False)


def truncated_normal(key, counter, n: int, dtype, compiled: bool = True) -> np.ndarray:
    """TruncatedNormal's n values: standard normals with |x| < 2, drawn by rejection per group.

    Each group of 4 (2 for float64) outputs reads its own stretch of blocks in order, two samples
    per Box-Muller pair, and keeps the values inside the cut until the group is full. float32 runs
    in `philox_fill`'s compiled loop unless `compiled` is False.
    """
    dtype = np.dtype(dtype)
    if compiled and dtype == np.float32:
        return _filled(philox_fill.truncated_float32, key, counter, -(-n // 4) * 4, dtype)[:n]
    wide = dtype == np.float64
    group_size = 2 if wide else 4
    groups = -(-n // group_size)
    stride = group_size * _SAMPLES_RESERVED_PER_VALUE // _BLOCK  # blocks reserved per group
    out = np.empty((groups, group_size), dtype=np.float64 if wide else np.float32)
    filled = np.zeros(groups, dtype=np.int64)
    base = np.arange(groups, dtype=np.uint64) * np.uint64(stride)
    block = 0
    pending = np.arange(groups)
    while pending.size:
        samples = philox_blocks(key, counter, base[pending] + np.uint64(block))
        if wide:  # one Box-Muller pair per block: 4 samples -> 2 doubles
            candidates = np.stack(_box_muller_double(samples), axis=1)
        else:  # two pairs per block: 4 samples -> 4 floats
            a, b = _box_muller_float(samples[:, 0], samples[:, 1])
            c, d = _box_muller_float(samples[:, 2], samples[:, 3])
            candidates = np.stack([a, b, c, d], axis=1)
        for column in range(candidates.shape[1]):
            value = candidates[:, column]
            take = (np.abs(value) < 2.0) & (filled[pending] < group_size)
            rows = pending[take]
            out[rows, filled[rows]] = value[take]
            filled[rows] += 1
        pending = pending[filled[pending] < group_size]
        block += 1
    return out.reshape(-1)[:n].astype(dtype, copy=False)


def uniform_int(key, counter, n: int, low: int, high: int, dtype) -> np.ndarray:
    """RandomUniformInt's n values in [low, high): a sample modulo the range, plus low."""
    dtype = np.dtype(dtype)
    span = np.uint64((int(high) - int(low)) & 0xFFFFFFFFFFFFFFFF)
    if dtype == np.int64:
        blocks = _fixed_groups(key, counter, n, 2)
        bits = blocks[:, 0::2].astype(np.uint64) | (blocks[:, 1::2].astype(np.uint64) << np.uint64(32))
        return (np.int64(low) + (bits % span).astype(np.int64)).reshape(-1)[:n]
    bits = _fixed_groups(key, counter, n, 4).reshape(-1)[:n]
    with np.errstate(over="ignore"):
        return (np.int32(low) + (bits % np.uint32(span)).astype(np.int32)).astype(dtype)


def samples32(key, counter, n: int) -> np.ndarray:
    """The first n 32-bit samples of the stream at `counter`, in order (TF's SingleSampleAdapter)."""
    return _fixed_groups(key, counter, n, _BLOCK).reshape(-1)[:n]


def tf_shards(total: int, cost_per_unit: int, threads: int) -> list[tuple[int, int]]:
    """How TF's Shard (Eigen's ThreadPoolDevice::parallelFor) cuts `total` units of work costing
    `cost_per_unit` cycles each among `threads` threads: the [start, limit) ranges, in order.

    Multinomial's rows draw from a stream per shard, so its values depend on this cut: one shard
    while the work is under ~2e5 cycles, else blocks of Eigen's size (~40000 cycles each, at
    least total / (4 * threads) units, grown while the threads stay as busy).
    """
    if total <= 1 or threads <= 1:
        return [(0, total)] if total else []
    wanted = (total * float(cost_per_unit) - 100000) / 100000 + 0.9  # Eigen's CostModel::numThreads
    if min(threads, max(1, int(wanted))) == 1:
        return [(0, total)]
    block = min(total, max(-(-total // (4 * threads)), int(40000 / cost_per_unit)))
    longest = min(total, 2 * block)
    count = -(-total // block)
    efficiency = count / (-(-count // threads) * threads)
    previous = count
    while efficiency < 1.0 and previous > 1:  # coarser blocks while no thread idles more
        coarser = -(-total // (previous - 1))
        if coarser > longest:
            break
        coarser_count = -(-total // coarser)
        previous = coarser_count
        coarser_efficiency = coarser_count / (-(-coarser_count // threads) * threads)
        if coarser_efficiency + 0.01 >= efficiency:
            block, count = coarser, coarser_count
            efficiency = max(efficiency, coarser_efficiency)
    return [(start, min(total, start + block)) for start in range(0, total, block)]


def multinomial(key, counter, logits: np.ndarray, num_samples: int, threads: int) -> np.ndarray:
    """Multinomial's class indices, shape [batch, num_samples] int64, as TF's CPU kernel draws them.

    Each row's unnormalised CDF is exp(logit - max finite logit) summed over the finite logits in
    double; sample j is the first class whose CDF exceeds u * total, u a double from two 32-bit
    samples (high word first). Each shard of rows reads the stream from block
    start_row * (num_samples + 3) // 4 on, its rows one after the other.
    """
    from tftk.kernels.philox_rejection import upper_bounds  # lazy: Numba loads when a draw runs

    batch, classes = logits.shape
    finite = np.isfinite(logits)
    lowest = np.finfo(logits.dtype).min
    maxima = np.where(finite, logits, lowest).max(axis=1, initial=lowest).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = np.exp(logits.astype(np.float64) - maxima[:, None])
    cdf = np.cumsum(np.where(finite, weights, 0.0), axis=1)
    out = np.empty((batch, num_samples), np.int64)
    cost = int(50 * (num_samples * math.log(classes) / math.log(2) + classes))
    for start, limit in tf_shards(batch, cost, threads):
        shard_counter = (counter + start * (num_samples + 3) // 4) & ((1 << 128) - 1)
        words = samples32(key, shard_counter, (limit - start) * 2 * num_samples)
        units = _to_double(words[0::2], words[1::2]).reshape(limit - start, num_samples)
        upper_bounds(cdf, units, start, out)
    return out
