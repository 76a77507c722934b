"""tf.audio: 16-bit PCM WAV decoding and encoding, with TensorFlow's sample conversion.

Samples map to floats as x = s / 32768 (so decoded audio lies in [-1, 1)); encoding rounds x * 32768
half away from zero and clamps to the int16 range. The RIFF container is read and written by the
standard library's `wave` module (the same 44-byte header TensorFlow writes).
"""

from __future__ import annotations

import io
import wave
from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["decode_wav", "encode_wav"]

_SCALE = 32768.0


def _read_wav(op, contents: bytes) -> tuple[np.ndarray, int]:
    """The int16 samples [frames, channels] and the sample rate of a 16-bit PCM WAV file."""
    try:
        with wave.open(io.BytesIO(contents), "rb") as wav:
            if wav.getsampwidth() != 2:
                raise errors.InvalidArgumentError(
                    None, op, f"{op.name}: DecodeWav supports 16-bit PCM only, got {8 * wav.getsampwidth()} bits")
            channels, rate = wav.getnchannels(), wav.getframerate()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise errors.InvalidArgumentError(None, op, f"{op.name}: contents is not a 16-bit PCM WAV file ({exc})")
    samples = np.frombuffer(frames, dtype="<i2")
    return samples[:samples.size - samples.size % channels].reshape(-1, channels), rate


def _bind_decode_wav(op, ctx):
    want_channels, want_samples = op.get_attr("desired_channels"), op.get_attr("desired_samples")

    def kernel(contents):
        samples, rate = _read_wav(op, bytes(contents.item()))
        audio = samples.astype(np.float32) / np.float32(_SCALE)
        n_samples = audio.shape[0] if want_samples == -1 else want_samples
        n_channels = audio.shape[1] if want_channels == -1 else want_channels
        # Missing channels repeat the last stored one; missing samples are zeros (TF's rule).
        source = np.minimum(np.arange(n_channels), audio.shape[1] - 1)
        out = np.zeros((n_samples, n_channels), np.float32)
        kept = min(n_samples, audio.shape[0])
        out[:kept] = audio[:kept][:, source]
        return out, np.int32(rate)
    return kernel


def _wav_bytes(audio: np.ndarray, rate: int) -> bytes:
    scaled = np.asarray(audio, np.float32) * np.float32(_SCALE)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))  # roundf: half away from zero
    samples = np.clip(rounded, -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(audio.shape[1])
        wav.setsampwidth(2)
        wav.setframerate(int(rate))
        wav.writeframes(samples.tobytes())
    return buffer.getvalue()


def _bind_encode_wav(op, ctx):
    def kernel(audio, sample_rate):
        if audio.ndim != 2:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: audio must be [samples, channels], "
                                                        f"got shape {list(audio.shape)}")
        return np.asarray(_wav_bytes(audio, int(sample_rate)), dtype=object)
    return kernel


registry.register_op("DecodeWav", _bind_decode_wav)
registry.register_op("EncodeWav", _bind_encode_wav)
registry.not_differentiable("DecodeWav", "EncodeWav")


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1,
               name: str | None = None) -> tuple[Tensor, Tensor]:
    """(audio float32 [samples, channels] in [-1, 1), sample_rate int32) from a 16-bit PCM WAV string.

    desired_channels / desired_samples (-1: as stored) fix the output size: extra channels copy the
    last stored channel, extra samples are zeros, surplus ones are dropped."""
    c = contents if isinstance(contents, Tensor) else convert_to_tensor(contents, dtype=dtypes.string)
    if c.dtype is not dtypes.string or c.shape.ndims not in (None, 0):
        raise ValueError(f"DecodeWav: contents must be a string scalar, got {c.dtype.name} {c.shape}")
    for label, value in (("desired_channels", desired_channels), ("desired_samples", desired_samples)):
        if int(value) < -1:
            raise ValueError(f"DecodeWav: {label} must be -1 (as stored) or >= 0, got {value}")
    shape = [None if desired_samples == -1 else int(desired_samples),
             None if desired_channels == -1 else int(desired_channels)]
    op = make_multi_op("DecodeWav", [c], [(dtypes.float32, shape), (dtypes.int32, [])], name,
                       {"desired_channels": int(desired_channels), "desired_samples": int(desired_samples)})
    return op.outputs[0], op.outputs[1]


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> Tensor:
    """A 16-bit PCM WAV file (string scalar) holding float32 audio [samples, channels], clamped to [-1, 1]."""
    x = convert_to_tensor(audio)
    if x.dtype is not dtypes.float32:
        raise TypeError(f"EncodeWav: audio must be float32, got {x.dtype.name}")
    if x.shape.ndims not in (None, 2):
        raise ValueError(f"EncodeWav: audio must be [samples, channels], got shape {x.shape}")
    rate = convert_to_tensor(sample_rate, dtype=dtypes.int32)
    return make_op("EncodeWav", [x, rate], dtypes.string, [], name)
