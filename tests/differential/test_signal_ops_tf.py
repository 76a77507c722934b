"""tf.signal (FFTs, rfft/irfft, frame, overlap_and_add, windows, stft, inverse_stft) against real TensorFlow."""

import numpy as np

from tests.differential.op_tables import Row, op_row, table_tests

RNG = np.random.default_rng(31)


def vec(*shape, dtype=np.float64):
    return RNG.normal(size=shape).astype(dtype)


def cvec(*shape):
    return vec(*shape) + 1j * vec(*shape)


OPS = [
    ("fft", "tf.signal.fft(x)", {"x": cvec(2, 6)}, True),
    ("ifft2d", "tf.signal.ifft2d(x)", {"x": cvec(2, 3, 4)}, True),
    ("fft3d", "tf.fft3d(x)", {"x": cvec(2, 2, 3)}, True),
    ("rfft", "tf.signal.rfft(x)", {"x": vec(2, 8)}, True),
    ("rfft_odd", "tf.signal.rfft(x)", {"x": vec(3, 7)}, True),
    # TF's own RFFT gradient fails when fft_length crops the input (shapes [2, 6] vs [2, 9]): forward only.
    ("rfft_cropped", "tf.signal.rfft(x, [6])", {"x": vec(2, 9)}, False),
    ("rfft_padded_f32", "tf.signal.rfft(x, [10])", {"x": vec(2, 7, dtype=np.float32)}, True),
    ("irfft", "tf.signal.irfft(x)", {"x": cvec(2, 5)}, True),
    ("irfft_odd_length", "tf.signal.irfft(x, [7])", {"x": cvec(2, 4)}, True),
    ("irfft_of_rfft", "tf.signal.irfft(tf.signal.rfft(x))", {"x": vec(3, 8)}, True),
    ("frame", "tf.signal.frame(x, 4, 2)", {"x": vec(2, 11)}, True),
    ("frame_pad_end", "tf.signal.frame(x, 4, 3, pad_end=True, pad_value=0.5)", {"x": vec(2, 11)}, True),
    ("frame_axis0", "tf.signal.frame(x, 3, 2, axis=0)", {"x": vec(9, 2)}, True),
    ("overlap_and_add", "tf.signal.overlap_and_add(x, 2)", {"x": vec(2, 5, 4)}, True),
    ("hann_window", "tf.signal.hann_window(8, dtype=tf.float64) + tf.signal.hann_window(7, periodic=False, "
                    "dtype=tf.float64)[0]", {}, False),
    ("hann_window_odd_periodic", "tf.signal.hann_window(7)", {}, False),
    ("hamming_window", "tf.signal.hamming_window(9, periodic=False)", {}, False),
    ("stft", "tf.signal.stft(x, 8, 4)", {"x": vec(2, 40)}, True),
    ("stft_fft_length_pad_end", "tf.signal.stft(x, 6, 3, fft_length=16, pad_end=True)", {"x": vec(31)}, True),
    ("stft_f32", "tf.signal.stft(x, 16, 8, window_fn=tf.signal.hamming_window)", {"x": vec(1, 64, dtype=np.float32)},
     True),
    ("spectral_rfft_irfft", "tf.spectral.irfft(tf.spectral.rfft(x) * tf.spectral.fft(tf.complex(x, x)))",
     {"x": vec(2, 6)}, True),
    ("manip_roll", "tf.manip.roll(x, [2, -1], [1, 0])", {"x": vec(3, 5)}, True),
    ("roll_negative_axis", "tf.roll(x, 3, -1)", {"x": vec(2, 4)}, True),
    ("manip_aliases", "tf.manip.tile(tf.manip.reverse(tf.manip.reshape(x, [3, 2]), [0]), [1, 2])",
     {"x": vec(6)}, True),
    ("inverse_stft", "tf.signal.inverse_stft(tf.signal.stft(x, 8, 2), 8, 2, "
                     "window_fn=tf.signal.inverse_stft_window_fn(2))", {"x": vec(2, 30)}, True),
]

ROWS = [op_row(name, build, inputs, grad) for name, build, inputs, grad in OPS] + [
    Row("rfft_of_complex", "fetch = {'y': tf.signal.rfft(tf.complex(tf.ones([4]), tf.ones([4])))}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("signal", ROWS)
