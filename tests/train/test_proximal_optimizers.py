"""ProximalGradientDescentOptimizer and ProximalAdagradOptimizer against real TF: dense and sparse
(gather) gradients, with and without L1/L2, several steps. float32 only: TF's proximal optimizers
build float32 hyperparameters and so raise TypeError on float64 variables."""

from __future__ import annotations

import numpy as np
import pytest

import tftk as tf
from tests.tf_oracle import both_succeeded, run_in_tf

OPTIMIZERS = {
    "pgd_plain": "tf.train.ProximalGradientDescentOptimizer(0.1)",
    "pgd_l1_l2": "tf.train.ProximalGradientDescentOptimizer(0.2, l1_regularization_strength=0.3, "
                 "l2_regularization_strength=0.5)",
    "pgd_l2_only": "tf.train.ProximalGradientDescentOptimizer(0.2, l2_regularization_strength=0.7)",
    "padagrad_plain": "tf.train.ProximalAdagradOptimizer(0.3)",
    "padagrad_l1_l2": "tf.train.ProximalAdagradOptimizer(0.5, initial_accumulator_value=0.4, "
                      "l1_regularization_strength=0.05, l2_regularization_strength=0.2)",
}
GRADIENTS = {
    # loss whose gradient is dense over all of var
    "dense": "loss = tf.reduce_sum(tf.square(var - target) * weights)",
    # gather with a repeated row: an IndexedSlices gradient with duplicate indices
    "sparse": "loss = tf.reduce_sum(tf.square(tf.gather(var, [2, 0, 2]) - target[:3]))",
}


def _snippet(optimizer: str, gradient: str, dtype: str) -> str:
    return (f"var = tf.Variable(inputs['init'].astype(np.{dtype}))\n"
            f"target = tf.constant(inputs['target'].astype(np.{dtype}))\n"
            f"weights = tf.constant(inputs['weights'].astype(np.{dtype}))\n"
            f"{gradient}\n"
            f"opt = {optimizer}\n"
            "train = opt.minimize(loss)\n"
            "with tf.Session() as sess:\n"
            "    sess.run(tf.global_variables_initializer())\n"
            "    history = []\n"
            "    for _ in range(4):\n"
            "        sess.run(train)\n"
            "        history.append(sess.run(var))\n"
            "    slots = {n: sess.run(opt.get_slot(var, n)) for n in opt.get_slot_names()}\n"
            "outputs = {'history': np.array(history), 'slot_names': np.array(sorted(slots) + ['<end>']),\n"
            "           **{'slot_' + n: v for n, v in slots.items()}}\n")


INPUTS = {"init": np.array([[0.5, -1.0], [0.05, 2.0], [-0.3, 0.01], [1.0, -0.02]]),
          "target": np.array([[0.2, 0.3], [-0.1, 1.0], [0.4, -0.5], [0.0, 0.0]]),
          "weights": np.array([[1.0, 0.5], [2.0, 1.0], [0.3, 3.0], [1.0, 1.0]])}
CASES = {f"{o}-{g}-{d}": (_snippet(OPTIMIZERS[o], GRADIENTS[g], d), INPUTS)
         for o in OPTIMIZERS for g in GRADIENTS for d in ("float32",)}


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    assert sorted(got.outputs) == sorted(expected.outputs)
    rtol = 1e-5
    for key, value in expected.outputs.items():
        if value.dtype.kind == "f":
            assert got.outputs[key].dtype == value.dtype, key
            np.testing.assert_allclose(got.outputs[key], value, rtol=rtol, atol=rtol * 1e-2, err_msg=key)
        else:
            np.testing.assert_array_equal(got.outputs[key], value, err_msg=key)


def test_l1_drives_small_weights_to_exact_zero():
    var = tf.Variable([0.05, -0.05, 2.0])
    opt = tf.train.ProximalGradientDescentOptimizer(1.0, l1_regularization_strength=0.1)
    train = opt.minimize(tf.reduce_sum(var * 0.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_array_equal(sess.run(var), np.float32([0.0, 0.0, 1.9]))


def test_proximal_adagrad_rejects_non_positive_initial_accumulator():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: 0.0"):
        tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0)
