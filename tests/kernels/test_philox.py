"""Philox4x32-10 and TF's conversions: known-answer vectors, the 128-bit counter, the stream state."""

import json

import numpy as np
import pytest

from tftk.kernels import philox


def _counter(words):
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


KNOWN_ANSWERS = [  # Random123's published philox4x32_10 vectors: (counter words, key words, output)
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_philox_known_answers(counter, key, expected):
    assert philox.philox_blocks(key, _counter(counter), np.array([0])).tolist() == [list(expected)]


def test_block_offsets_carry_into_the_high_words():
    low_end = (1 << 64) - 1
    blocks = philox.philox_blocks((5, 6), low_end, np.array([0, 1]))
    np.testing.assert_array_equal(blocks[1], philox.philox_blocks((5, 6), 1 << 64, np.array([0]))[0])


def test_a_run_reserves_256_blocks_per_value_and_the_state_round_trips_through_json():
    stream = philox.PhiloxState(seed=2**40 + 7, seed2=9)
    assert stream.key == (7, 256)
    key, start = stream.reserve(10)
    assert start == 9 << 64 and stream.counter == start + 2560
    copy = philox.PhiloxState(0, 0)
    copy.state = json.loads(json.dumps(stream.state))
    assert (copy.key, copy.counter) == (stream.key, stream.counter)


DISTRIBUTIONS = [  # (name, draw of n values, check on the values)
    ("uniform_f32", lambda n: philox.uniform_float((1, 2), 3, n, np.float32), lambda v: (v >= 0).all() and (v < 1).all()),
    ("uniform_f64", lambda n: philox.uniform_float((1, 2), 3, n, np.float64), lambda v: (v >= 0).all() and (v < 1).all()),
    ("normal_f32", lambda n: philox.standard_normal((1, 2), 3, n, np.float32), lambda v: abs(v.std() - 1) < 0.02),
    ("truncated_f32", lambda n: philox.truncated_normal((1, 2), 3, n, np.float32), lambda v: (np.abs(v) < 2).all()),
    ("truncated_f64", lambda n: philox.truncated_normal((1, 2), 3, n, np.float64), lambda v: (np.abs(v) < 2).all()),
    ("int32", lambda n: philox.uniform_int((1, 2), 3, n, -3, 4, np.int32), lambda v: set(v.tolist()) == set(range(-3, 4))),
]


@pytest.mark.parametrize("draw, check", [row[1:] for row in DISTRIBUTIONS], ids=[row[0] for row in DISTRIBUTIONS])
def test_distributions_have_their_range_and_any_length(draw, check):
    values = draw(20003)  # not a multiple of any group size
    assert values.shape == (20003,) and check(values)
    np.testing.assert_array_equal(draw(7), values[:7])  # a prefix of the groups is the same values


def test_stateless_draws_repeat_in_every_run_and_refuse_a_bad_seed():
    import tftk as tf

    with tf.Graph().as_default():
        draw = tf.random.stateless_normal([4], seed=[11, 12])
        with tf.Session() as first, tf.Session() as second:
            np.testing.assert_array_equal(first.run(draw), first.run(draw))
            np.testing.assert_array_equal(first.run(draw), second.run(draw))
        with pytest.raises(ValueError, match="seed must be a shape \\[2\\] integer tensor"):
            tf.random.stateless_uniform([2], seed=[1, 2, 3])
        with pytest.raises(ValueError, match="seed must be a shape \\[2\\] integer tensor"):
            tf.random.stateless_uniform([2], seed=[1.0, 2.0])
