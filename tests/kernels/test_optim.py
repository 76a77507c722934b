"""Fused optimizer kernels vs independent numpy formulas, dense and sparse, over several steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from tftk.framework.errors import InvalidArgumentError
from tftk.kernels import optim


# --- Reference formulas, written from TF1's op docs, pure numpy, returning new arrays. -------------

def ref_sgd(var, s, g, lr):
    return var - lr * g, {}


def ref_momentum(var, s, g, lr, momentum, use_nesterov=False):
    accum = momentum * s["accum"] + g
    step = lr * (g + momentum * accum) if use_nesterov else lr * accum
    return var - step, {"accum": accum}


def ref_adagrad(var, s, g, lr):
    accum = s["accum"] + g ** 2
    return var - lr * g / np.sqrt(accum), {"accum": accum}


def ref_adadelta(var, s, g, lr, rho, epsilon):
    accum = rho * s["accum"] + (1 - rho) * g ** 2
    update = np.sqrt(s["accum_update"] + epsilon) / np.sqrt(accum + epsilon) * g
    accum_update = rho * s["accum_update"] + (1 - rho) * update ** 2
    return var - lr * update, {"accum": accum, "accum_update": accum_update}


def ref_adam(var, s, g, lr, beta1, beta2, epsilon, beta1_power, beta2_power):
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = beta1 * s["m"] + (1 - beta1) * g
    v = beta2 * s["v"] + (1 - beta2) * g ** 2
    return var - lr_t * m / (np.sqrt(v) + epsilon), {"m": m, "v": v}


def ref_ftrl(var, s, g, lr, l1, l2, lr_power, l2_shrinkage=0.0):
    accum, linear = s["accum"], s["linear"]
    accum_new = accum + g ** 2
    sigma = (accum_new ** -lr_power - accum ** -lr_power) / lr
    linear = linear + g + 2 * l2_shrinkage * var - sigma * var
    quadratic = accum_new ** -lr_power / lr + 2 * l2
    new_var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
    return new_var, {"accum": accum_new, "linear": linear}


def ref_rms_prop(var, s, g, lr, decay, momentum, epsilon, centered=False):
    ms = decay * s["ms"] + (1 - decay) * g ** 2
    slots = {"ms": ms}
    denom = ms + epsilon
    if centered:
        slots["mg"] = decay * s["mg"] + (1 - decay) * g
        denom = ms - slots["mg"] ** 2 + epsilon
    slots["mom"] = momentum * s["mom"] + lr * g / np.sqrt(denom)
    return var - slots["mom"], slots


# --- The table: one row per optimizer configuration. -----------------------------------------------

def _adam_hyper(t: int) -> dict:
    return dict(lr=0.05, beta1=0.9, beta2=0.999, epsilon=1e-8, beta1_power=0.9 ** t, beta2_power=0.999 ** t)


@dataclass
class Case:
    name: str
    slots: dict[str, float]                     # slot name -> initial value
    hyper: Callable[[int], dict]                 # step number (1-based) -> hyperparameters
    reference: Callable
    dense: Callable                              # (var, slots, grad, hyper) -> None, in place
    sparse: Callable                             # (var, slots, values, indices, hyper) -> None, in place
    sparse_moves_every_row: bool = False         # TF1 Adam: m, v decay and var moves on all rows
    kernel_hyper: Callable[[dict], dict] = lambda h: h


def _rms_kernel_hyper(h: dict) -> dict:
    return {k: v for k, v in h.items() if k != "centered"}


def _rms(var, s, g, h, fn, *rest):
    mg = s["mg"] if h.get("centered") else None
    return fn(var, s["ms"], s["mom"], g, *rest, mg=mg, **_rms_kernel_hyper(h))


CASES = [
    Case("sgd", {}, lambda t: dict(lr=0.1), ref_sgd,
         lambda var, s, g, h: optim.apply_gradient_descent(var, g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_gradient_descent(var, x, i, **h)),
    Case("momentum", {"accum": 0.0}, lambda t: dict(lr=0.1, momentum=0.9), ref_momentum,
         lambda var, s, g, h: optim.apply_momentum(var, s["accum"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_momentum(var, s["accum"], x, i, **h)),
    Case("nesterov", {"accum": 0.0}, lambda t: dict(lr=0.1, momentum=0.9, use_nesterov=True), ref_momentum,
         lambda var, s, g, h: optim.apply_momentum(var, s["accum"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_momentum(var, s["accum"], x, i, **h)),
    Case("adagrad", {"accum": 0.1}, lambda t: dict(lr=0.1), ref_adagrad,
         lambda var, s, g, h: optim.apply_adagrad(var, s["accum"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_adagrad(var, s["accum"], x, i, **h)),
    Case("adadelta", {"accum": 0.0, "accum_update": 0.0}, lambda t: dict(lr=1.0, rho=0.95, epsilon=1e-6),
         ref_adadelta,
         lambda var, s, g, h: optim.apply_adadelta(var, s["accum"], s["accum_update"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_adadelta(var, s["accum"], s["accum_update"], x, i, **h)),
    Case("adam", {"m": 0.0, "v": 0.0}, _adam_hyper, ref_adam,
         lambda var, s, g, h: optim.apply_adam(var, s["m"], s["v"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_adam(var, s["m"], s["v"], x, i, **h),
         sparse_moves_every_row=True),
    Case("ftrl", {"accum": 0.1, "linear": 0.0}, lambda t: dict(lr=0.5, l1=0.3, l2=0.2, lr_power=-0.5), ref_ftrl,
         lambda var, s, g, h: optim.apply_ftrl(var, s["accum"], s["linear"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_ftrl(var, s["accum"], s["linear"], x, i, **h)),
    Case("ftrl_power_shrinkage", {"accum": 0.1, "linear": 0.0},
         lambda t: dict(lr=0.5, l1=0.05, l2=0.1, lr_power=-0.3, l2_shrinkage=0.2), ref_ftrl,
         lambda var, s, g, h: optim.apply_ftrl(var, s["accum"], s["linear"], g, **h),
         lambda var, s, x, i, h: optim.sparse_apply_ftrl(var, s["accum"], s["linear"], x, i, **h)),
    Case("rms_prop", {"ms": 1.0, "mom": 0.0}, lambda t: dict(lr=0.01, decay=0.9, momentum=0.5, epsilon=1e-10),
         ref_rms_prop,
         lambda var, s, g, h: _rms(var, s, g, h, optim.apply_rms_prop),
         lambda var, s, x, i, h: _rms(var, s, x, h, optim.sparse_apply_rms_prop, i)),
    Case("centered_rms_prop", {"ms": 1.0, "mom": 0.0, "mg": 0.0},
         lambda t: dict(lr=0.01, decay=0.9, momentum=0.5, epsilon=1e-10, centered=True), ref_rms_prop,
         lambda var, s, g, h: _rms(var, s, g, h, optim.apply_rms_prop),
         lambda var, s, x, i, h: _rms(var, s, x, h, optim.sparse_apply_rms_prop, i)),
]
IDS = [case.name for case in CASES]
STEPS = 4


def _fresh(case: Case, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    var = rng.standard_normal(shape).astype(dtype)
    slots = {name: np.full(shape, value, dtype) for name, value in case.slots.items()}
    return var, slots


def _run_reference(case, var, slots, grads):
    var = var.astype(np.float64)
    slots = {k: v.astype(np.float64) for k, v in slots.items()}
    for t, g in enumerate(grads, start=1):
        var, new = case.reference(var, slots, g.astype(np.float64), **case.hyper(t))
        slots.update(new)
    return var, slots


TOL = {np.float64: dict(rtol=1e-12, atol=1e-14), np.float32: dict(rtol=2e-5, atol=2e-6)}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (7,), (5, 3), (2, 3, 4)])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_dense_matches_reference(case, shape, dtype):
    var, slots = _fresh(case, shape, dtype)
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(shape).astype(dtype) for _ in range(STEPS)]
    want_var, want_slots = _run_reference(case, var, slots, grads)
    for t, g in enumerate(grads, start=1):
        case.dense(var, slots, g, case.hyper(t))
    assert var.dtype == dtype and var.shape == shape
    np.testing.assert_allclose(var, want_var, **TOL[dtype])
    for name in slots:
        np.testing.assert_allclose(slots[name], want_slots[name], **TOL[dtype], err_msg=name)


def _sparse_reference(case, var, slots, steps):
    """TF1's sparse semantics from the definition: sum duplicates, then either every row steps
    (Adam) or only the named rows do."""
    var = var.astype(np.float64)
    slots = {k: v.astype(np.float64) for k, v in slots.items()}
    for t, (values, indices) in enumerate(steps, start=1):
        dense_grad = np.zeros_like(var)
        for row, value in zip(indices, values):
            dense_grad[row] += value
        if case.sparse_moves_every_row:
            var, new = case.reference(var, slots, dense_grad, **case.hyper(t))
            slots.update(new)
            continue
        rows = np.unique(indices)
        new_var, new = case.reference(var[rows], {k: v[rows] for k, v in slots.items()}, dense_grad[rows],
                                      **case.hyper(t))
        var[rows] = new_var
        for name, value in new.items():
            slots[name][rows] = value
    return var, slots


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(6,), (6, 3), (6, 2, 2)])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sparse_matches_tf1_semantics(case, shape, dtype):
    var, slots = _fresh(case, shape, dtype)
    rng = np.random.default_rng(2)
    index_lists = [[4, 1, 4], [0], [5, 2, 5, 5], []]  # duplicates, a single row, no rows at all
    steps = [(rng.standard_normal((len(ix),) + shape[1:]).astype(dtype), np.array(ix, np.int32))
             for ix in index_lists]
    want_var, want_slots = _sparse_reference(case, var, slots, steps)
    untouched = 3  # never named: must stay put unless TF1 moves every row
    before = var[untouched].copy(), {k: v[untouched].copy() for k, v in slots.items()}
    for t, (values, indices) in enumerate(steps, start=1):
        case.sparse(var, slots, values, indices, case.hyper(t))
    np.testing.assert_allclose(var, want_var, **TOL[dtype])
    for name in slots:
        np.testing.assert_allclose(slots[name], want_slots[name], **TOL[dtype], err_msg=name)
    if not case.sparse_moves_every_row:
        np.testing.assert_array_equal(var[untouched], before[0])
        for name in slots:
            np.testing.assert_array_equal(slots[name][untouched], before[1][name])


@pytest.mark.parametrize("name", ["sgd", "adagrad", "adam"])
def test_sparse_equals_dense_on_scattered_gradient(name):
    """Where TF1's semantics make them equal, sparse and dense agree bit for bit."""
    case = CASES[IDS.index(name)]
    shape = (8, 3)
    var_s, slots_s = _fresh(case, shape, np.float64)
    var_d, slots_d = _fresh(case, shape, np.float64)
    rng = np.random.default_rng(3)
    for t in range(1, STEPS + 1):
        indices = rng.integers(0, shape[0], size=5)
        values = rng.standard_normal((5, 3))
        dense_grad = np.zeros(shape)
        np.add.at(dense_grad, indices, values)
        case.sparse(var_s, slots_s, values, indices, case.hyper(t))
        case.dense(var_d, slots_d, dense_grad, case.hyper(t))
    np.testing.assert_allclose(var_s, var_d, rtol=1e-15, atol=1e-15)
    for key in slots_s:
        np.testing.assert_allclose(slots_s[key], slots_d[key], rtol=1e-15, atol=1e-15)


def test_sparse_momentum_differs_from_dense_with_zero_rows():
    """SparseApplyMomentum leaves absent rows alone; the dense op keeps rolling them with momentum."""
    var_s, var_d = np.ones((3, 2)), np.ones((3, 2))
    acc_s, acc_d = np.full((3, 2), 2.0), np.full((3, 2), 2.0)
    optim.sparse_apply_momentum(var_s, acc_s, np.ones((1, 2)), np.array([0]), lr=0.5, momentum=0.5)
    grad = np.zeros((3, 2))
    grad[0] = 1.0
    optim.apply_momentum(var_d, acc_d, grad, lr=0.5, momentum=0.5)
    np.testing.assert_array_equal(var_s[0], var_d[0])          # named row: same step (accum 2.0 -> 2.0)
    np.testing.assert_array_equal(var_s[1:], np.ones((2, 2)))  # absent rows untouched
    np.testing.assert_array_equal(var_d[1:], np.full((2, 2), 0.5))  # dense: var -= 0.5 * (0.5 * 2.0)


def test_ftrl_l1_zeroes_small_weights_exactly():
    var, accum, linear = np.array([0.3, -0.4]), np.full(2, 0.1), np.zeros(2)
    optim.apply_ftrl(var, accum, linear, np.array([0.01, 5.0]), lr=1.0, l1=1.0, l2=0.0, lr_power=-0.5)
    assert var[0] == 0.0 and var[1] != 0.0


def test_adam_first_step_is_lr_times_sign():
    """With bias correction, Adam's first step is lr * g/|g| (up to epsilon)."""
    var, m, v = np.zeros(3), np.zeros(3), np.zeros(3)
    optim.apply_adam(var, m, v, np.array([2.0, -0.5, 1e-3]), lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-12,
                     beta1_power=0.9, beta2_power=0.999)
    np.testing.assert_allclose(var, [-0.01, 0.01, -0.01], rtol=1e-7)  # eps/sqrt(v) = 3e-8 on the last


# --- Bad input: one clear error naming the culprit. ----------------------------------------------------

def test_slot_shape_mismatch_names_the_slot():
    with pytest.raises(InvalidArgumentError, match="var and accum do not have the same shape"):
        optim.apply_adagrad(np.zeros(3), np.zeros(4), np.zeros(3), lr=0.1)


def test_grad_dtype_mismatch_is_rejected():
    with pytest.raises(InvalidArgumentError, match="var and grad"):
        optim.apply_gradient_descent(np.zeros(3, np.float32), np.zeros(3), lr=0.1)


def test_non_contiguous_slot_is_rejected():
    accum = np.zeros((3, 2)).T
    with pytest.raises(InvalidArgumentError, match="accum must be a writable C-contiguous"):
        optim.apply_adagrad(np.zeros((2, 3)), accum, np.zeros((2, 3)), lr=0.1)


def test_integer_var_is_rejected():
    with pytest.raises(InvalidArgumentError, match="var must be a float"):
        optim.apply_gradient_descent(np.zeros(3, np.int64), np.zeros(3, np.int64), lr=1)


def test_out_of_range_index_names_index_and_offset():
    with pytest.raises(InvalidArgumentError, match=r"Index 7 at offset 1 in indices is out of range \[0, 4\)"):
        optim.sparse_apply_gradient_descent(np.zeros((4, 2)), np.zeros((2, 2)), np.array([0, 7]), lr=0.1)


def test_sparse_values_shape_must_follow_indices():
    with pytest.raises(InvalidArgumentError, match=r"must have shape \(2, 3\)"):
        optim.sparse_apply_adagrad(np.zeros((4, 3)), np.ones((4, 3)), np.zeros((2, 2)), np.array([0, 1]), lr=0.1)
