"""`tf.signal` framing and short-time Fourier transforms: frame, overlap_and_add, windows, stft, inverse_stft.

All are compositions of gather, unsorted_segment_sum, rfft/irfft and element-wise ops, so their
gradients are those ops' rules. Frame counts need the signal length known when the graph is built.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_op import constant
from tftk.ops.constant_value import constant_value
from tftk.ops.gather_ops import gather, gather_nd
from tftk.ops.segment_ops import unsorted_segment_sum
from tftk.ops.spectral_ops import irfft, rfft
from tftk.ops.tile_pad_ops import pad

__all__ = ["frame", "overlap_and_add", "hann_window", "hamming_window", "stft", "inverse_stft",
           "inverse_stft_window_fn"]


def _static_int(value: Any, what: str) -> int:
    static = constant_value(value)
    if static is None:
        raise ValueError(f"{what} must be known when the graph is built")
    return int(static)


def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False, pad_value: Any = 0,
          axis: int = -1, name: str | None = None) -> Tensor:
    """Frames of `frame_length` samples every `frame_step` along `axis`: [..., frames, frame_length, ...]."""
    with name_scope(name, "frame", [signal]):
        x = convert_to_tensor(signal)
        length, step = _static_int(frame_length, "frame: frame_length"), _static_int(frame_step, "frame: frame_step")
        if length < 1 or step < 1:
            raise ValueError(f"frame: frame_length and frame_step must be positive, got {length} and {step}")
        rank = x.shape.ndims
        if rank is None or x.shape.as_list()[axis] is None:
            raise ValueError(f"frame needs the signal's length known when the graph is built, got shape {x.shape}")
        axis = axis % rank
        samples = x.shape.as_list()[axis]
        if pad_end:
            frames = -(-samples // step) if samples else 0
            padded = max(0, (frames - 1) * step + length - samples)
            x = pad(x, [[0, padded if i == axis else 0] for i in range(rank)],
                    constant_values=pad_value)
        else:
            frames = max(0, 1 + (samples - length) // step)
        positions = step * np.arange(frames)[:, None] + np.arange(length)[None, :]
        positions = constant(positions.astype(np.int32))
        if axis == 0:  # gather_nd: a dense gradient (gather's along axis 0 is IndexedSlices)
            return gather_nd(x, array_ops.expand_dims(positions, -1))
        return gather(x, positions, axis=axis)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Tensor:
    """The sum of frames [..., frames, frame_length] placed frame_step apart: [..., output_length]."""
    with name_scope(name, "overlap_and_add", [signal]):
        x = convert_to_tensor(signal)
        step = _static_int(frame_step, "overlap_and_add: frame_step")
        if x.shape.ndims is None or x.shape.ndims < 2 or None in x.shape.as_list()[-2:]:
            raise ValueError(f"overlap_and_add needs [..., frames, frame_length] of known sizes, got {x.shape}")
        frames, length = x.shape.as_list()[-2:]
        out_length = (frames - 1) * step + length if frames else 0
        positions = (step * np.arange(frames)[:, None] + np.arange(length)[None, :]).astype(np.int32)
        rank = x.shape.ndims
        moved = array_ops.transpose(x, [rank - 2, rank - 1] + list(range(rank - 2)))
        summed = unsorted_segment_sum(moved, constant(positions), out_length)
        return array_ops.transpose(summed, list(range(1, rank - 1)) + [0])


def _window(name: str, a: float, b: float):
    def window(window_length: Any, periodic: bool = True, dtype: Any = dtypes.float32,
               name: str | None = None) -> Tensor:
        n = _static_int(window_length, f"{name}: window_length")
        dt = dtypes.as_dtype(dtype)
        if not dt.is_floating:
            raise ValueError(f"{name}: dtype must be a float type, got {dt.name}")
        even = 1 - n % 2
        denominator = n + even - 1 if periodic else n - 1
        if n == 1:
            values = np.ones(1)
        else:
            values = a - b * np.cos(2 * np.pi * np.arange(n) / denominator)
        return constant(values.astype(dt.as_numpy_dtype), name=name)
    window.__name__ = name
    window.__doc__ = f"A {name.split('_')[0].capitalize()} window of window_length samples ({a} - {b} cos)."
    return window


hann_window = _window("hann_window", 0.5, 0.5)
hamming_window = _window("hamming_window", 0.54, 0.46)


def _default_fft_length(frame_length: int) -> int:
    return 1 << max(0, int(np.ceil(np.log2(frame_length))))


def stft(signals: Any, frame_length: int, frame_step: int, fft_length: int | None = None,
         window_fn: Callable | None = hann_window, pad_end: bool = False, name: str | None = None) -> Tensor:
    """Short-time Fourier transform: rfft of windowed frames, [..., frames, fft_length // 2 + 1]."""
    with name_scope(name, "stft", [signals]):
        x = convert_to_tensor(signals)
        n = fft_length if fft_length is not None else _default_fft_length(int(frame_length))
        frames = frame(x, frame_length, frame_step, pad_end=pad_end)
        if window_fn is not None:
            frames = math_ops.multiply(frames, window_fn(frame_length, dtype=x.dtype))
        return rfft(frames, [n])


def inverse_stft_window_fn(frame_step: int, forward_window_fn: Callable = hann_window,
                           name: str | None = None) -> Callable:
    """The window that makes inverse_stft invert stft with `forward_window_fn` (overlap-add normalised)."""
    def window_fn(frame_length: int, dtype: Any = dtypes.float32) -> Tensor:
        with name_scope(name, "inverse_stft_window_fn"):
            forward = forward_window_fn(frame_length, dtype=dtype)
            squared = np.square(_window_values(forward))
            step = int(frame_step)
            padded = np.pad(squared, (0, -len(squared) % step)).reshape(-1, step)
            denominator = np.tile(padded.sum(axis=0), padded.shape[0])[:frame_length]
            return math_ops.realdiv(forward, constant(denominator.astype(dtypes.as_dtype(dtype).as_numpy_dtype)))
    return window_fn


def _window_values(window: Tensor) -> np.ndarray:
    values = constant_value(window)
    if values is None:
        raise ValueError("inverse_stft_window_fn needs a forward window known when the graph is built")
    return np.asarray(values, dtype=np.float64)


def inverse_stft(stfts: Any, frame_length: int, frame_step: int, fft_length: int | None = None,
                 window_fn: Callable | None = hann_window, name: str | None = None) -> Tensor:
    """Overlap-add of the windowed irfft of each frame (pair with inverse_stft_window_fn to invert stft)."""
    with name_scope(name, "inverse_stft", [stfts]):
        y = convert_to_tensor(stfts)
        n = fft_length if fft_length is not None else _default_fft_length(int(frame_length))
        frames = irfft(y, [n])
        frames = frames[..., :frame_length] if n >= frame_length else pad(
            frames, [[0, 0]] * (frames.shape.ndims - 1) + [[0, frame_length - n]])
        if window_fn is not None:
            frames = math_ops.multiply(frames, window_fn(frame_length, dtype=frames.dtype))
        return overlap_and_add(frames, frame_step)
