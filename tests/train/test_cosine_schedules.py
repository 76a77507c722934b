"""cosine_decay_restarts / linear_cosine_decay against real TF over a table of steps; the noisy variant by its law."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import both_succeeded, run_in_tf

STEPS = [0, 1, 7, 10, 13, 29, 30, 31, 75, 200]

SCHEDULES = {
    "restarts_default": "tf.train.cosine_decay_restarts(0.1, step, 10)",
    "restarts_flat_periods": "tf.train.cosine_decay_restarts(0.5, step, 10, t_mul=1.0, m_mul=0.5, alpha=0.1)",
    "restarts_growing_periods": "tf.train.cosine_decay_restarts(0.3, step, 7, t_mul=1.5, m_mul=0.9)",
    "linear_cosine_default": "tf.train.linear_cosine_decay(0.1, step, 100)",
    "linear_cosine_periods": "tf.train.linear_cosine_decay(0.2, step, 50, num_periods=2.0, alpha=0.1, beta=0.01)",
    "noisy_without_noise": "tf.train.noisy_linear_cosine_decay(0.2, step, 50, initial_variance=0.0, num_periods=2.0)",
}


def _snippet(expr: str) -> str:
    return ("step = tf.placeholder(tf.int64, [])\n"
            f"rate = {expr}\n"
            "with tf.Session() as sess:\n"
            "    values = [sess.run(rate, {step: s}) for s in inputs['steps']]\n"
            "outputs = {'values': np.array(values), 'name': np.array(rate.name)}\n")


CASES = {name: (_snippet(expr), {"steps": np.array(STEPS)}) for name, expr in SCHEDULES.items()}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedule_matches_tensorflow(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    assert got.outputs["values"].dtype == expected.outputs["values"].dtype
    np.testing.assert_allclose(got.outputs["values"], expected.outputs["values"], rtol=2e-6, atol=3e-8)  # atol: an ulp of the rate where cosine ~ 0


def test_noisy_linear_cosine_decay_noise_has_the_documented_variance():
    step = tf.placeholder(tf.int64, [])
    rate = tf.train.noisy_linear_cosine_decay(1.0, step, 100, initial_variance=4.0, variance_decay=1.0,
                                              num_periods=0.0, beta=0.0)
    with tf.Session() as sess:
        draws = np.array([sess.run(rate, {step: 3}) for _ in range(4000)])
    # num_periods=0 makes the cosine factor 1: rate = linear + noise, linear = 0.97, variance 4 / 4 = 1.
    assert abs(draws.mean() - 0.97) < 0.08 and abs(draws.std() - 1.0) < 0.06


@pytest.mark.parametrize("fn", ["cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay"])
def test_schedules_need_a_global_step(fn):
    with pytest.raises(ValueError, match=f"global_step is required for {fn}"):
        getattr(tf.train, fn)(0.1, None, 10)
