"""tf.audio.decode_wav / encode_wav against real TensorFlow: the exact WAV bytes and the decoded values."""

import numpy as np

from tests.differential.op_tables import Row, table_tests

RNG = np.random.default_rng(13)
# Values on and around the rounding and clamping edges: +-0.5/32768 steps, +-1, beyond +-1.
EDGES = np.array([0.0, 1.0, -1.0, 1.5, -1.5, 0.5 / 32768, -0.5 / 32768, 1.5 / 32768, -2.5 / 32768,
                  32767.5 / 32768, -32768.5 / 32768], np.float32)
STEREO = RNG.uniform(-1.2, 1.2, size=(9, 2)).astype(np.float32)


def wav_row(name: str, decode_args: str, audio: np.ndarray, rate: int = 16000) -> Row:
    body = (f"w = tf.audio.encode_wav(tf.constant(inputs['a']), {rate})\n"
            f"a, r = tf.audio.decode_wav(w{decode_args})\n"
            "fetch = {'wav': w, 'audio': a, 'rate': r, 'shape': tf.shape(a)}\n")
    return Row(name, body, {"a": audio})


ROWS = [
    wav_row("mono_edges", "", EDGES.reshape(-1, 1), 44100),
    wav_row("stereo", "", STEREO, 8000),
    wav_row("more_channels_fewer_samples", ", desired_channels=3, desired_samples=4", STEREO),
    wav_row("fewer_channels_more_samples", ", desired_channels=1, desired_samples=12", STEREO),
    wav_row("mono_to_stereo", ", 2", EDGES.reshape(-1, 1)),
    wav_row("empty", ", desired_samples=3", np.zeros((0, 2), np.float32)),
    Row("static_shape", "a, r = tf.audio.decode_wav(tf.constant(b''), desired_channels=2, desired_samples=5)\n"
        "fetch = {'shape': tf.constant(a.shape.as_list()), 'rate_rank': tf.constant(r.shape.ndims)}\n"),
    Row("not_a_wav", "fetch = {'y': tf.audio.decode_wav(tf.constant(b'RIFF not a wave file'))[0]}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("audio", ROWS)
