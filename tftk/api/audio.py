"""The `tf.audio` namespace: 16-bit PCM WAV decoding and encoding."""

from tftk.ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
