"""DCTs, FFT shifts, 2-D/3-D real FFTs, windows, mel filters, MFCCs and the MDCT against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(1306)
SIG = RNG.uniform(-1, 1, (2, 8))

# The 2-D/3-D real FFTs are compared forward only: TF has no gradient for RFFT3D/IRFFT3D, its RFFT2D
# gradient fails to build with an fft_length, and tftk's complex-product gradients do not yet
# conjugate as TF's do (see the report of issue 13's second wave).
OPS = [
    ("dct2", "tf.signal.dct(x)", {"x": SIG}, True),
    ("dct2_ortho", "tf.signal.dct(x, norm='ortho')", {"x": SIG}, True),
    ("dct1", "tf.signal.dct(x, type=1)", {"x": SIG}, True),
    ("dct3", "tf.signal.dct(x, type=3)", {"x": SIG}, True),
    ("dct3_ortho", "tf.signal.dct(x, type=3, norm='ortho')", {"x": SIG}, True),
    ("dct4", "tf.signal.dct(x, type=4)", {"x": SIG}, True),
    ("dct4_ortho", "tf.signal.dct(x, type=4, norm='ortho')", {"x": SIG}, True),
    ("dct_n_truncate", "tf.signal.dct(x, n=5)", {"x": SIG}, True),
    ("dct_n_pad", "tf.spectral.dct(x, n=11, norm='ortho')", {"x": SIG}, True),
    ("dct_f32_rank3", "tf.signal.dct(x)", {"x": RNG.uniform(-1, 1, (2, 3, 6)).astype(np.float32)}, True),
    ("idct2", "tf.signal.idct(x)", {"x": SIG}, True),
    ("idct_ortho_roundtrip", "tf.signal.idct(tf.signal.dct(x, norm='ortho'), norm='ortho')", {"x": SIG}, True),
    ("idct1", "tf.spectral.idct(x, type=1)", {"x": SIG}, True),
    ("fftshift", "tf.signal.fftshift(x)", {"x": RNG.uniform(-1, 1, (3, 5))}, True),
    ("fftshift_axes", "tf.signal.fftshift(x, axes=1)", {"x": RNG.uniform(-1, 1, (3, 5))}, True),
    ("ifftshift", "tf.signal.ifftshift(x, axes=[0, 1])", {"x": RNG.uniform(-1, 1, (3, 5))}, True),
    ("rfft2d", "tf.abs(tf.signal.rfft2d(x))", {"x": RNG.uniform(-1, 1, (2, 4, 6)).astype(np.float32)}, False),
    ("rfft2d_length", "tf.real(tf.signal.rfft2d(x, [3, 8]))", {"x": RNG.uniform(-1, 1, (4, 5)).astype(np.float32)}, False),
    ("rfft3d", "tf.imag(tf.spectral.rfft3d(x))", {"x": RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)}, False),
    ("irfft2d", "tf.signal.irfft2d(tf.complex(x, y))", {"x": RNG.uniform(-1, 1, (4, 3)).astype(np.float32),
                                                      "y": RNG.uniform(-1, 1, (4, 3)).astype(np.float32)}, False),
    ("irfft2d_roundtrip", "tf.signal.irfft2d(tf.signal.rfft2d(x), [3, 6])", {"x": RNG.uniform(-1, 1, (3, 6)).astype(np.float32)},
     False),
    ("irfft3d", "tf.spectral.irfft3d(tf.complex(x, y), [2, 3, 4])", {"x": RNG.uniform(-1, 1, (2, 3, 3)).astype(np.float32),
                                                                   "y": RNG.uniform(-1, 1, (2, 3, 3)).astype(np.float32)}, False),
    ("mfccs", "tf.signal.mfccs_from_log_mel_spectrograms(x)", {"x": RNG.uniform(-3, 3, (2, 3, 10))}, True),
    ("mdct", "tf.signal.mdct(x, 8)", {"x": RNG.uniform(-1, 1, (2, 24)).astype(np.float32)}, True),
    ("mdct_ortho_no_window", "tf.signal.mdct(x, 8, window_fn=None, norm='ortho', pad_end=True)",
     {"x": RNG.uniform(-1, 1, 21).astype(np.float32)}, True),
    ("inverse_mdct", "tf.signal.inverse_mdct(x)", {"x": RNG.uniform(-1, 1, (2, 3, 4)).astype(np.float32)}, True),
    ("inverse_mdct_ortho", "tf.signal.inverse_mdct(x, window_fn=tf.signal.vorbis_window, norm='ortho')",
     {"x": RNG.uniform(-1, 1, (3, 8)).astype(np.float32)}, True),
    ("mdct_roundtrip", "tf.signal.inverse_mdct(tf.signal.mdct(x, 16, norm='ortho'), norm='ortho')",
     {"x": RNG.uniform(-1, 1, 64).astype(np.float32)}, True),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("windows", "fetch = {'k': tf.signal.kaiser_window(9), 'k1': tf.signal.kaiser_window(1), "
        "'kb': tf.signal.kaiser_window(8, beta=3.5, dtype=tf.float64), 'kbd': tf.signal.kaiser_bessel_derived_window(10), "
        "'kbd2': tf.signal.kaiser_bessel_derived_window(8, beta=4.0, dtype=tf.float64), "
        "'v': tf.signal.vorbis_window(7), 'v64': tf.signal.vorbis_window(12, dtype=tf.float64)}\n"),
    Row("mel_matrix", "fetch = {'m': tf.signal.linear_to_mel_weight_matrix(), "
        "'m2': tf.signal.linear_to_mel_weight_matrix(8, 33, 16000, 20.0, 7000.0, tf.float64)}\n"),
    Row("dct_bad_type", "fetch = {'y': tf.signal.dct(tf.zeros([4]), type=5)}\n"),
    Row("dct1_ortho", "fetch = {'y': tf.signal.dct(tf.zeros([4]), type=1, norm='ortho')}\n"),
    Row("mdct_bad_length", "fetch = {'y': tf.signal.mdct(tf.zeros([16]), 6)}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("signal_more", ROWS)
