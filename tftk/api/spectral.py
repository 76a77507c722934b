"""The `tf.spectral` namespace (TF 1.x's name for the FFTs that tf.signal also holds)."""

from tftk.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d, irfft, rfft

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d", "irfft", "rfft"]

from tftk.ops.signal_more_ops import dct, idct, irfft2d, irfft3d, rfft2d, rfft3d  # noqa: E402
