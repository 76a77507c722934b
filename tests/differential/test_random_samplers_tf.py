"""random_shuffle, multinomial/categorical, random_gamma and random_poisson against real TensorFlow:
for the same graph and op seeds tftk draws TF's values bit for bit, run after run in one session,
for every dtype TF's kernels take, with TF's shapes; and bad input fails as in TF."""

import numpy as np
import pytest

from tests.tf_oracle import both_succeeded, run_in_tf, run_in_tftk

THREE_RUNS = """
tf.set_random_seed({graph_seed})
y = {expr}
with tf.Session() as s:
    outputs = {{'first': s.run(y), 'second': s.run(y), 'third': s.run(y)}}
"""

DRAWS = {  # name: (graph seed, expression)
    "shuffle_1d": (1, "tf.random_shuffle(tf.range(10), seed=2)"),
    "shuffle_2d_f64": (3, "tf.random_shuffle(tf.reshape(tf.range(40, dtype=tf.float64), [8, 5]), seed=7)"),
    "shuffle_3d_int64": (4, "tf.random_shuffle(tf.reshape(tf.range(60, dtype=tf.int64), [5, 3, 4]))"),
    "shuffle_large": (5, "tf.random_shuffle(tf.range(5003), seed=1)"),
    "shuffle_strings": (6, "tf.string_to_number(tf.random_shuffle(tf.constant(['1', '2', '3', '4', '5']), seed=3))"),
    "shuffle_one_row": (7, "tf.random_shuffle(tf.ones([1, 4]), seed=3) + tf.random_shuffle(tf.range(4.0), seed=3)"),
    "shuffle_empty": (7, "tf.random_shuffle(tf.zeros([0, 3]), seed=3)"),
    "shuffle_scalar": (7, "tf.random_shuffle(5, seed=3)"),
    "multinomial": (1, "tf.multinomial([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], 5, seed=2)"),
    "multinomial_int32_f64": (2, "tf.multinomial(tf.constant([[0.1, 0.2, 0.3, 0.4]], tf.float64), 9, seed=1,"
                                 " output_dtype=tf.int32)"),
    "multinomial_f16": (2, "tf.multinomial(tf.constant([[0.1, -2.0, 0.3]], tf.float16), 7, seed=4)"),
    "multinomial_inf_logits": (3, "tf.multinomial([[-np.inf, 0.0, np.inf, 1.0]], 6, seed=1)"),
    "multinomial_zero_samples": (3, "tf.multinomial([[0.0, 1.0]], 0, seed=1)"),
    "multinomial_unseeded_op": (3, "tf.multinomial(tf.zeros([3, 10]), 4)"),
    # Enough rows for TF to shard the batch over its threads: each shard reads its own stream.
    "multinomial_sharded": (4, "tf.multinomial(tf.reshape(tf.sin(tf.range(600.0 * 7)), [600, 7]), 33, seed=5)"),
    "multinomial_many_shards": (4, "tf.multinomial(tf.reshape(tf.cos(tf.range(3000.0 * 3)), [3000, 3]), 2, seed=5)"),
    "categorical": (5, "tf.random.categorical([[0.0, 1.0], [1.0, 0.0]], 4, dtype=tf.int32, seed=2)"),
    "gamma": (1, "tf.random_gamma([3], [0.5, 1.0, 2.0], seed=2)"),
    "gamma_beta_broadcast": (2, "tf.random_gamma([2], [0.5, 2.0], beta=[[1.0], [2.0]], seed=2)"),
    "gamma_f64": (3, "tf.random_gamma([4, 2], tf.constant([[0.1], [7.5], [1.0]], tf.float64),"
                     " dtype=tf.float64, seed=9)"),
    "gamma_f16": (3, "tf.random_gamma([5], tf.constant([0.3, 3.0], tf.float16), dtype=tf.float16, seed=9)"),
    "gamma_large": (4, "tf.random_gamma([700], [0.2, 1.0, 4.0, 100.0], seed=3)"),
    "gamma_zero_and_negative_alpha": (4, "tf.random_gamma([3], [-1.0, 0.0, 2.0], seed=2)"),
    "gamma_empty": (4, "tf.random_gamma([0, 3], [1.5], seed=2)"),
    "gamma_unseeded_op": (4, "tf.random_gamma([6], 2.5)"),
    "poisson": (1, "tf.random_poisson([0.5, 20.0], [3], seed=2)"),
    "poisson_f64_rates": (2, "tf.random_poisson(tf.constant([1e-3, 9.99, 10.0, 1234.5], tf.float64), [4, 2],"
                             " dtype=tf.float64, seed=5)"),
    "poisson_int_rates": (3, "tf.random_poisson(tf.constant([3, 30]), [5], dtype=tf.int64, seed=2)"),
    "poisson_int32_out": (3, "tf.random_poisson([[2.0, 50.0]], [3], dtype=tf.int32, seed=8)"),
    "poisson_f16": (3, "tf.random_poisson(tf.constant([4.0, 40.0], tf.float16), [3], dtype=tf.float16, seed=8)"),
    "poisson_large": (4, "tf.random.poisson([0.1, 3.0, 15.0, 1e6], [500], seed=6)"),
    "poisson_negative_and_zero_rate": (4, "tf.random_poisson([-1.0, 0.0, -np.inf], [3], seed=2)"),
    "poisson_empty": (4, "tf.random_poisson([2.0], [0], seed=2)"),
    "poisson_op_seed_only": (None, "tf.random_poisson([2.0, 11.0], [3], seed=9)"),
    "gamma_op_seed_only": (None, "tf.random_gamma([3], [2.0, 0.7], seed=9)"),
    "stateless_categorical": (None, "tf.random.stateless_categorical([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]], 6,"
                                    " seed=[4, 5], dtype=tf.int32)"),
    # All-constant input: TF folds the op when it builds the session, running it on one thread.
    "stateless_multinomial_folded": (None, "tf.random.stateless_multinomial(tf.reshape(tf.sin(tf.range(400.0 * 9)),"
                                           " [400, 9]), 40, seed=tf.constant([2**40, 7], tf.int64))"),
    "stateless_gamma": (None, "tf.random.stateless_gamma([10, 2], seed=[1, 2], alpha=[0.5, 1.5])"),
    "stateless_gamma_beta_f64": (None, "tf.random.stateless_gamma([3, 2, 2], seed=[3, 2], beta=[1.0, 3.0],"
                                       " alpha=tf.constant([[0.5], [1.0]], tf.float64), dtype=tf.float64)"),
    "stateless_poisson": (None, "tf.random.stateless_poisson([10, 3], seed=[1, 2], lam=[0.5, 12.0, 400.0])"),
    "stateless_poisson_f32": (None, "tf.random.stateless_poisson([4], seed=[5, 2], lam=7.0, dtype=tf.float32)"),
    # Built on random_uniform, as TF builds them.
    "random_crop": (1, "tf.random_crop(tf.reshape(tf.range(6 * 8 * 3.0), [6, 8, 3]), [3, 4, 3], seed=2)"),
    "random_crop_unseeded_int64": (2, "tf.image.random_crop(tf.reshape(tf.range(48, dtype=tf.int64), [6, 8]), [5, 5])"),
    "flip_left_right": (1, "tf.image.random_flip_left_right(tf.reshape(tf.range(24.0), [2, 4, 3]), seed=5)"),
    "flip_up_down_batch": (2, "tf.image.random_flip_up_down(tf.reshape(tf.range(9 * 24.0), [9, 2, 4, 3]), seed=5)"),
    "flip_batch_uint8": (3, "tf.image.random_flip_left_right(tf.cast(tf.reshape(tf.range(120), [5, 2, 4, 3]),"
                            " tf.uint8))"),
    "random_brightness": (4, "tf.image.random_brightness(tf.ones([2, 2, 3]), 0.3, seed=1)"),
    "random_contrast": (4, "tf.image.random_contrast(tf.reshape(tf.range(12.0), [2, 2, 3]), 0.2, 1.8, seed=1)"),
}

CASES = {name: (THREE_RUNS.format(graph_seed=seed, expr=expr), {}) for name, (seed, expr) in DRAWS.items()}
CASES["stateless_multinomial_sharded"] = ("""
logits = tf.placeholder(tf.float32, [400, 9])
y = tf.random.stateless_multinomial(logits, 40, seed=tf.constant([2**40, 7], tf.int64))
with tf.Session() as s:
    outputs = {'fed': s.run(y, {logits: inputs['logits']})}
""", {"logits": np.sin(np.arange(400.0 * 9, dtype=np.float32)).reshape(400, 9)})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_seeds_give_tensorflows_values(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    for run in expected.outputs:
        want, have = expected.outputs[run], got.outputs[run]
        assert (have.dtype, have.shape) == (want.dtype, want.shape), f"{name}, {run} run"
        np.testing.assert_array_equal(have, want, err_msg=f"{name}, {run} run")


BAD = {  # name: snippet that TF rejects; both must raise the same error class
    "multinomial_rank1_logits": "y = tf.multinomial([0.0, 1.0], 3, seed=1)",
    "multinomial_negative_samples": "y = tf.multinomial([[0.0, 1.0]], -1, seed=1)",
    "multinomial_negative_samples_at_run": ("n = tf.placeholder(tf.int32, [])\ny = tf.multinomial([[0.0, 1.0]], n)\n"
                                            "with tf.Session() as s:\n    s.run(y, {n: -2})"),
    "multinomial_no_classes": ("y = tf.multinomial(tf.zeros([2, 0]), 3)\nwith tf.Session() as s:\n    s.run(y)"),
    "gamma_alpha_dtype": "y = tf.random_gamma([2], tf.constant([1.0], tf.float64))",
    "random_crop_too_large": ("y = tf.random_crop(tf.zeros([4, 5]), [5, 2])\nwith tf.Session() as s:\n"
                              "    s.run(y)"),
    "flip_rank2_image": "y = tf.image.random_flip_left_right(tf.zeros([4, 5]))",
    "stateless_gamma_shape_not_ending_in_alpha": ("y = tf.random.stateless_gamma(tf.placeholder_with_default([3, 4], [2]),"
                                                  " [1, 2], [1.0, 2.0])\nwith tf.Session() as s:\n    s.run(y)"),
    "stateless_poisson_bad_seed": "y = tf.random.stateless_poisson([3], seed=[1, 2, 3], lam=2.0)",
}
BAD_CASES = {name: (src + "\noutputs = {}", {}) for name, src in BAD.items()}


@pytest.fixture(scope="module")
def bad_oracle():
    return run_in_tf(BAD_CASES)


@pytest.mark.parametrize("name", sorted(BAD_CASES))
def test_bad_input_fails_as_in_tensorflow(bad_oracle, name):
    expected, got = bad_oracle[name], run_in_tftk(*BAD_CASES[name])
    assert expected.error is not None, "TensorFlow accepted it"
    assert got.error == expected.error, (got.error, got.message, expected.message)


REPARAMETERISED = {  # name: (source, relative tolerance): TF computes RandomGammaGrad in the sample's dtype
    "gamma_grad_f64": ("""
tf.set_random_seed(1)
a = tf.constant(np.geomspace(0.01, 5000.0, 40), tf.float64)
y = tf.random_gamma([], a, seed=3, dtype=tf.float64)
outputs = {'y': y, 'grad': tf.gradients(y, a)[0]}
with tf.Session() as s:
    outputs = s.run(outputs)
""", 1e-11),
    "gamma_grad_f64_sample_dims": ("""
tf.set_random_seed(2)
a = tf.constant([[0.05, 1.0], [2.0, 300.0]], tf.float64)
y = tf.random_gamma([5, 3], a, beta=[1.0, 4.0], seed=3, dtype=tf.float64)
outputs = {'y': y, 'grad': tf.gradients(y * y, a)[0]}
with tf.Session() as s:
    outputs = s.run(outputs)
""", 1e-11),
    "stateless_gamma_grad_f64": ("""
a = tf.constant([0.3, 4.0, 1.0], tf.float64)
y = tf.random.stateless_gamma([6, 3], seed=[7, 7], alpha=a, dtype=tf.float64)
outputs = {'y': y, 'grad': tf.gradients(y, a)[0]}
with tf.Session() as s:
    outputs = s.run(outputs)
""", 1e-11),
    "gamma_grad_f32": ("""
tf.set_random_seed(3)
a = tf.constant([[0.3], [4.0], [70.0]])
y = tf.random_gamma([7], a, beta=[1.0, 2.0], seed=4)
outputs = {'y': y, 'grad': tf.gradients(y, a)[0]}
with tf.Session() as s:
    outputs = s.run(outputs)
""", 2e-6),
}
REPARAMETERISED_CASES = {name: (src, {}) for name, (src, _) in REPARAMETERISED.items()}


@pytest.fixture(scope="module")
def reparameterised_oracle():
    return run_in_tf(REPARAMETERISED_CASES)


@pytest.mark.parametrize("name", sorted(REPARAMETERISED_CASES))
def test_gamma_reparameterisation_gradient_is_tensorflows(reparameterised_oracle, name):
    """The samples are TF's to the bit; d sample / d alpha agrees with TF's RandomGammaGrad to
    rounding (both evaluate the incomplete gamma function's alpha-derivative by series/fraction)."""
    expected, got = both_succeeded(reparameterised_oracle, REPARAMETERISED_CASES, name)
    np.testing.assert_array_equal(got.outputs["y"], expected.outputs["y"])
    assert got.outputs["grad"].dtype == expected.outputs["grad"].dtype
    np.testing.assert_allclose(got.outputs["grad"], expected.outputs["grad"], rtol=REPARAMETERISED[name][1])


@pytest.mark.parametrize("rate, dtype", [(np.nan, "float32"), (np.inf, "float64"), (1e10, "int32"), (1e5, "float16")])
def test_poisson_rates_tensorflow_would_loop_forever_on_fail_with_a_clear_message(rate, dtype):
    """TF's kernel redraws until a count fits the output type (or forever for a NaN/inf rate)."""
    import tftk as tf

    with tf.Graph().as_default():
        draws = tf.random_poisson([1.0, rate], [3], dtype=getattr(tf, dtype), seed=1)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="has no draws that fit"):
            sess.run(draws)
