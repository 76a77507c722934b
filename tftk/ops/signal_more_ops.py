"""More of tf.signal: dct / idct (types 1-4), fftshift / ifftshift, rfft2d/3d and irfft2d/3d,
kaiser, kaiser-Bessel-derived and Vorbis windows, linear_to_mel_weight_matrix,
mfccs_from_log_mel_spectrograms, mdct / inverse_mdct.

A DCT is a product with a constant cosine matrix (exact, and differentiable as a matmul); the 2-D
and 3-D real FFTs are the 1-D real FFT on the last axis followed by complex FFTs on the others.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops
from tftk.ops.bessel_erfinv_ops import _scaled_bessel
from tftk.ops.signal_ops import frame, overlap_and_add
from tftk.ops.spectral_ops import fft, ifft, irfft, rfft
from tftk.ops.tile_pad_ops import pad, reverse_v2, roll

__all__ = ["dct", "idct", "fftshift", "ifftshift", "rfft2d", "rfft3d", "irfft2d", "irfft3d", "kaiser_window",
           "kaiser_bessel_derived_window", "vorbis_window", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "mdct", "inverse_mdct"]


# ---- DCT ----------------------------------------------------------------------------------------

def _dct_matrix(kind: int, n: int, ortho: bool) -> np.ndarray:
    """[n_in, n_out] so that dct(x) = x @ M, with TF's scaling (unnormalised: twice the textbook sums)."""
    i = np.arange(n)[:, None].astype(np.float64)
    k = np.arange(n)[None, :].astype(np.float64)
    if kind == 1:
        m = 2.0 * np.cos(np.pi * i * k / (n - 1))
        m[0, :] = 1.0
        m[-1, :] = np.cos(np.pi * k[0])
        return m
    if kind == 2:
        m = 2.0 * np.cos(np.pi * (i + 0.5) * k / n)
        if ortho:
            m *= np.where(k == 0, math.sqrt(1.0 / (4 * n)), math.sqrt(1.0 / (2 * n)))
        return m
    if kind == 3:
        m = 2.0 * np.cos(np.pi * i * (k + 0.5) / n)
        m[0, :] = 1.0
        if ortho:
            m *= np.where(i == 0, math.sqrt(1.0 / n), math.sqrt(2.0 / n)) / np.where(i == 0, 1.0, 2.0)
        return m
    m = 2.0 * np.cos(np.pi * (i + 0.5) * (k + 0.5) / n)
    return m * math.sqrt(1.0 / (2 * n)) if ortho else m


def dct(input: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,  # noqa: A002
        name: str | None = None) -> Tensor:
    """The discrete cosine transform of the last axis (types 1-4; norm None or 'ortho'), truncated or
    zero-padded to `n` first."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"Types 1, 2, 3 and 4 are supported, got {type}.")
    if axis != -1:
        raise NotImplementedError("axis must be -1. Got: %s" % axis)
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization not supported for type-I DCT.")
    with name_scope(name, "dct", [input]):
        x = convert_to_tensor(input, name="input")
        if not x.dtype.is_floating:
            raise TypeError(f"dct: input must be float32 or float64, got {x.dtype.name}")
        length = x.shape.as_list()[-1] if x.shape.ndims else None
        if n is not None:
            if n < 1:
                raise ValueError(f"n should be a positive integer or None, got {n}")
            if length is not None and n < length:
                x = x[..., :n]
            elif length is not None and n > length:
                x = pad(x, [[0, 0]] * (x.shape.ndims - 1) + [[0, n - length]])
            length = n
        if length is None:
            raise ValueError("dct needs the length of the last axis when the graph is built")
        if type == 1 and length < 2:
            raise ValueError("The length of the signal must be at least 2 for a type-I DCT")
        matrix = convert_to_tensor(_dct_matrix(type, length, norm == "ortho"), dtype=x.dtype)
        return _last_axis_matmul(x, matrix)


def _last_axis_matmul(x: Tensor, matrix: Tensor) -> Tensor:
    if x.shape.ndims == 1:
        return array_ops.squeeze(math_ops.matmul(array_ops.expand_dims(x, 0), matrix), [0])
    flat = array_ops.reshape(x, [-1, matrix.shape.as_list()[0]])
    out_shape = array_ops.concat([array_ops.shape(x)[:-1], [matrix.shape.as_list()[1]]], 0)
    out = array_ops.reshape(math_ops.matmul(flat, matrix), out_shape)
    out.set_shape(x.shape[:-1].concatenate([matrix.shape.as_list()[1]]))
    return out


def idct(input: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,  # noqa: A002
         name: str | None = None) -> Tensor:
    """The inverse DCT as TF defines it: the DCT of the inverse type (scaled by 2n unless 'ortho')."""
    inverse = {1: 1, 2: 3, 3: 2, 4: 4}[type] if type in (1, 2, 3, 4) else type
    return dct(input, inverse, n, axis, norm, name)


# ---- shifts and multi-dimensional real FFTs ---------------------------------------------------------

def _shift_axes(x: Tensor, axes: Any) -> list[int]:
    if axes is None:
        return list(range(x.shape.ndims))
    return [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Move the zero-frequency term to the centre (roll by floor(n / 2) along `axes`)."""
    with name_scope(name, "fftshift", [x]):
        t = convert_to_tensor(x, name="x")
        axes = _shift_axes(t, axes)
        dims = t.shape.as_list()
        return roll(t, [dims[a] // 2 for a in axes], axes)


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of fftshift (roll by -floor(n / 2))."""
    with name_scope(name, "ifftshift", [x]):
        t = convert_to_tensor(x, name="x")
        axes = _shift_axes(t, axes)
        dims = t.shape.as_list()
        return roll(t, [-(dims[a] // 2) for a in axes], axes)


def _fit_axis(x: Tensor, axis: int, size: int) -> Tensor:
    """x cropped or zero-padded to `size` along `axis` (a negative index)."""
    have = x.shape.as_list()[axis]
    if have is None:
        raise ValueError("multi-dimensional real FFTs need the transformed dimensions' sizes")
    if have > size:
        key = [slice(None)] * x.shape.ndims
        key[axis] = slice(0, size)
        return x[tuple(key)]
    if have < size:
        paddings = [[0, 0]] * x.shape.ndims
        paddings[axis] = [0, size - have]
        return pad(x, paddings)
    return x


def _along(x: Tensor, axis: int, transform: Callable[[Tensor], Tensor]) -> Tensor:
    """`transform` (acting on the last axis) applied along `axis`."""
    rank = x.shape.ndims
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return array_ops.transpose(transform(array_ops.transpose(x, perm)), perm)


def _rfftnd(x: Any, fft_length: Any, rank: int, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [x]):
        t = convert_to_tensor(x, name="input_tensor")
        lengths = [int(v) for v in fft_length] if fft_length is not None else t.shape.as_list()[-rank:]
        for k, size in enumerate(lengths[:-1]):
            t = _fit_axis(t, -rank + k, size)
        out = rfft(t, [lengths[-1]])
        for k in range(rank - 1):
            out = _along(out, -rank + k, fft)
        return out


def _irfftnd(x: Any, fft_length: Any, rank: int, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [x]):
        t = convert_to_tensor(x, name="input_tensor")
        dims = t.shape.as_list()
        lengths = [int(v) for v in fft_length] if fft_length is not None else \
            dims[-rank:-1] + [2 * (dims[-1] - 1)]
        for k, size in enumerate(lengths[:-1]):
            t = _along(_fit_axis(t, -rank + k, size), -rank + k, ifft)
        return irfft(t, [lengths[-1]])


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """2-D FFT of a real signal over the two innermost axes (the last one halved)."""
    return _rfftnd(input_tensor, fft_length, 2, name, "rfft2d")


def rfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """3-D FFT of a real signal over the three innermost axes."""
    return _rfftnd(input_tensor, fft_length, 3, name, "rfft3d")


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The inverse of rfft2d."""
    return _irfftnd(input_tensor, fft_length, 2, name, "irfft2d")


def irfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """The inverse of rfft3d."""
    return _irfftnd(input_tensor, fft_length, 3, name, "irfft3d")


# ---- windows and mel filters ------------------------------------------------------------------------

def _window_tensor(values: np.ndarray, dtype: Any) -> Tensor:
    d = dtypes.as_dtype(dtype)
    if not d.is_floating:
        raise ValueError(f"dtype must be a floating point type, found {d.name}")
    return convert_to_tensor(values.astype(d.as_numpy_dtype), dtype=d)


def _kaiser(length: int, beta: float) -> np.ndarray:
    if length == 1:
        return np.ones(1)
    n = np.arange(length, dtype=np.float64)
    ratio = 2.0 * n / (length - 1) - 1.0
    arg = beta * np.sqrt(np.clip(1.0 - ratio ** 2, 0.0, None))
    # I0(arg) / I0(beta) with the exponential scaling of both taken out
    return _scaled_bessel(arg, 0) / _scaled_bessel(np.array([beta]), 0)[0] * np.exp(arg - abs(beta))


def kaiser_window(window_length: int, beta: float = 12.0, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """The Kaiser window I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)."""
    return _window_tensor(_kaiser(int(window_length), float(beta)), dtype)


def kaiser_bessel_derived_window(window_length: int, beta: float = 12.0, dtype: Any = dtypes.float32,
                                 name: str | None = None) -> Tensor:
    """The Kaiser-Bessel-derived window (for MDCTs): sqrt of the normalised cumulative Kaiser window."""
    length = int(window_length)
    half = length // 2
    kaiser = _kaiser(half + 1, float(beta))
    cumulative = np.cumsum(kaiser)[:half] / np.sum(kaiser)
    return _window_tensor(np.sqrt(np.concatenate([cumulative, cumulative[::-1]])), dtype)


def vorbis_window(window_length: int, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """The Vorbis power-complementary window sin(pi/2 sin^2(pi (n + 1/2) / N))."""
    n = np.arange(int(window_length), dtype=np.float64)
    return _window_tensor(np.sin(0.5 * np.pi * np.sin(np.pi * (n + 0.5) / int(window_length)) ** 2), dtype)


def _hertz_to_mel(frequencies: np.ndarray) -> np.ndarray:
    return 1127.0 * np.log1p(frequencies / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129, sample_rate: Any = 8000,
                                lower_edge_hertz: float = 125.0, upper_edge_hertz: float = 3800.0,
                                dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """[num_spectrogram_bins, num_mel_bins] triangular mel filters (the DC bin gets no weight)."""
    if num_mel_bins <= 0 or num_spectrogram_bins <= 0 or lower_edge_hertz < 0 or \
            lower_edge_hertz >= upper_edge_hertz or upper_edge_hertz > sample_rate / 2:
        raise ValueError("linear_to_mel_weight_matrix: need positive bin counts and "
                         "0 <= lower_edge_hertz < upper_edge_hertz <= sample_rate / 2")
    np_dtype = dtypes.as_dtype(dtype).as_numpy_dtype
    linear = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins, dtype=np_dtype)[1:]
    mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(_hertz_to_mel(np.array(lower_edge_hertz, np_dtype)),
                        _hertz_to_mel(np.array(upper_edge_hertz, np_dtype)), num_mel_bins + 2, dtype=np_dtype)
    lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
    weights = np.maximum(0.0, np.minimum((mel - lower) / (center - lower), (upper - mel) / (upper - center)))
    return _window_tensor(np.pad(weights, [[1, 0], [0, 0]]), dtype)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> Tensor:
    """MFCCs: the orthonormal-scaled type-II DCT of log-mel spectrograms (innermost axis)."""
    with name_scope(name, "mfccs_from_log_mel_spectrograms", [log_mel_spectrograms]):
        x = convert_to_tensor(log_mel_spectrograms, name="log_mel_spectrograms")
        bins = x.shape.as_list()[-1]
        if bins is None:
            raise ValueError("mfccs_from_log_mel_spectrograms needs a known number of mel bins")
        return dct(x, type=2) * (1.0 / math.sqrt(2.0 * bins))


# ---- MDCT ---------------------------------------------------------------------------------------------

def mdct(signals: Any, frame_length: int, window_fn: Callable | None = vorbis_window,
         pad_end: bool = False, norm: str | None = None, name: str | None = None) -> Tensor:
    """Modified DCT of frames of frame_length (a multiple of 4) with 50% overlap."""
    if frame_length % 4:
        raise ValueError("The frame length must be a multiple of 4.")
    with name_scope(name, "mdct", [signals]):
        x = convert_to_tensor(signals, name="signals")
        framed = frame(x, frame_length, frame_length // 2, pad_end=pad_end)
        framed = framed * (window_fn(frame_length, dtype=x.dtype) if window_fn is not None else 1.0 / math.sqrt(2))
        quarter = frame_length // 4
        parts = [framed[..., k * quarter:(k + 1) * quarter] for k in range(4)]
        first = -reverse_v2(parts[2], [-1]) - parts[3]
        second = parts[0] - reverse_v2(parts[1], [-1])
        return dct(array_ops.concat([first, second], -1), type=4, norm=norm)


def inverse_mdct(mdcts: Any, window_fn: Callable | None = vorbis_window, norm: str | None = None,
                 name: str | None = None) -> Tensor:
    """The inverse of mdct (perfect reconstruction with a power-complementary window)."""
    with name_scope(name, "inverse_mdct", [mdcts]):
        x = convert_to_tensor(mdcts, name="mdcts")
        half = x.shape.as_list()[-1]
        if half is None:
            raise ValueError("inverse_mdct needs the number of MDCT coefficients when the graph is built")
        result = dct(x, type=4, norm=norm)
        if norm is None:
            result = result * (0.5 / half)
        quarter = half // 2
        a, b = result[..., :quarter], result[..., quarter:]
        frames = array_ops.concat([b, -reverse_v2(b, [-1]), -reverse_v2(a, [-1]), -a], -1)
        frames = frames * (window_fn(2 * half, dtype=x.dtype) if window_fn is not None else 1.0 / math.sqrt(2))
        return overlap_and_add(frames, half)

