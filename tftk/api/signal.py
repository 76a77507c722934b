"""The `tf.signal` namespace."""

from tftk.ops.signal_ops import (frame, hamming_window, hann_window, inverse_stft, inverse_stft_window_fn,
                                 overlap_and_add, stft)
from tftk.ops.spectral_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d, irfft, rfft

__all__ = ["fft", "fft2d", "fft3d", "frame", "hamming_window", "hann_window", "ifft", "ifft2d", "ifft3d",
           "inverse_stft", "inverse_stft_window_fn", "irfft", "overlap_and_add", "rfft", "stft"]

from tftk.ops.signal_more_ops import (dct, fftshift, idct, ifftshift, inverse_mdct, irfft2d, irfft3d,  # noqa: E402
                                      kaiser_bessel_derived_window, kaiser_window, linear_to_mel_weight_matrix,
                                      mdct, mfccs_from_log_mel_spectrograms, rfft2d, rfft3d, vorbis_window)
from tftk.ops.fftnd_ops import fftnd, ifftnd, irfftnd, rfftnd  # noqa: E402
