"""In-place fused update kernels for TF1's optimizers: one pass over a variable and its slots, no temporaries.

Every optimizer's formula is written once, as an element step `_<name>_at(i, g, var, slots..., hyper...)`
that updates position `i` of flat (ravelled) arrays in place. The dense kernel runs it over every
element, on one thread (see the dense kernels); the sparse kernel runs it over the rows named by
`indices`. The formulas are those of TF1's `tensorflow/core/kernels/training_ops.cc` functors
(`ApplyGradientDescent`, `ApplyMomentum`, `ApplyAdagrad`, `ApplyAdadelta`, `ApplyAdam`, `ApplyFtrl` /
`ApplyFtrlV2`, `ApplyRMSProp`, `ApplyCenteredRMSProp`) and their `SparseApply*` counterparts.

Sparse gradients come as `values[len(indices), *var.shape[1:]]`. Duplicate indices are summed first,
as TF1's `Optimizer._apply_sparse_duplicate_indices` (`_deduplicate_indexed_slices`) does before
`_apply_sparse`. The sparse kernels then follow TF1, which is *not* always "dense with zero rows":

- GradientDescent, Adagrad: untouched rows would not move under a zero gradient, so sparse == dense.
- Momentum, Adadelta, Ftrl, RMSProp: `SparseApply*` touch only the given rows; a dense step with a
  zero gradient would still decay the slots (and move `var` through momentum) on every row.
- Adam: TF1's `AdamOptimizer._apply_sparse_shared` decays `m` and `v` on *every* row
  (`m.assign(m * beta1)` then `scatter_add`) and updates `var` on every row, so sparse == dense with
  the summed gradient scattered into zeros. `sparse_apply_adam` does exactly that, without the zeros.

Public functions check shapes and dtypes, cast hyperparameters to the variable's dtype (so float32
variables are updated in float32 arithmetic, as TF does) and raise `InvalidArgumentError` naming the
offending argument. Slots are the caller's: e.g. Adagrad's initial accumulator, RMSProp's `ms` = 1.
"""

from __future__ import annotations

import numpy as np
from tftk.kernels.jit import njit

from tftk.framework.errors import InvalidArgumentError

__all__ = [
    "apply_gradient_descent", "sparse_apply_gradient_descent",
    "apply_momentum", "sparse_apply_momentum",
    "apply_adagrad", "sparse_apply_adagrad",
    "apply_adadelta", "sparse_apply_adadelta",
    "apply_adam", "sparse_apply_adam",
    "apply_ftrl", "sparse_apply_ftrl",
    "apply_rms_prop", "sparse_apply_rms_prop",
]

# error_model="numpy": a division by zero gives inf/nan as in TF instead of raising, and lets LLVM
# vectorise the loops (Python's error model puts a branch in every division).


# ---------------------------------------------------------------------------------------------
# Element steps: the formulas, each written once. Each reads its slots into locals, computes, then
# writes: a load after a store through possibly-aliased arrays would stop LLVM from vectorising
# (measured: 0.85 ms -> 0.34 ms for 1M-element float32 Adam on one thread).


@njit(cache=True, error_model="numpy")
def _gradient_descent_at(i, g, var, lr):
    """ApplyGradientDescent: var -= lr * grad."""
    var[i] -= lr * g


@njit(cache=True, error_model="numpy")
def _momentum_at(i, g, var, accum, lr, momentum, use_nesterov):
    """ApplyMomentum: accum = accum * momentum + grad; var -= lr * accum (Nesterov: lr * (grad + momentum * accum))."""
    a = accum[i] * momentum + g
    step = g * lr + a * momentum * lr if use_nesterov else a * lr
    accum[i] = a
    var[i] -= step


@njit(cache=True, error_model="numpy")
def _adagrad_at(i, g, var, accum, lr):
    """ApplyAdagrad: accum += grad^2; var -= lr * grad / sqrt(accum)."""
    a = accum[i] + g * g
    accum[i] = a
    var[i] -= lr * g / np.sqrt(a)


@njit(cache=True, error_model="numpy")
def _adadelta_at(i, g, var, accum, accum_update, lr, rho, one_minus_rho, epsilon):
    """ApplyAdadelta: accum = rho*accum + (1-rho)*g^2; update = sqrt(accum_update+eps)/sqrt(accum+eps)*g;
    var -= lr*update; accum_update = rho*accum_update + (1-rho)*update^2."""
    a = accum[i] * rho + g * g * one_minus_rho
    u = accum_update[i]
    update = np.sqrt(u + epsilon) / np.sqrt(a + epsilon) * g
    accum[i] = a
    accum_update[i] = u * rho + update * update * one_minus_rho
    var[i] -= update * lr


@njit(cache=True, error_model="numpy")
def _adam_at(i, g, var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    """ApplyAdam: m += (g-m)(1-beta1); v += (g^2-v)(1-beta2); var -= alpha*m/(sqrt(v)+eps),
    alpha = lr*sqrt(1-beta2^t)/(1-beta1^t)."""
    mi = m[i]
    vi = v[i]
    mi += (g - mi) * one_minus_beta1
    vi += (g * g - vi) * one_minus_beta2
    m[i] = mi
    v[i] = vi
    var[i] -= alpha * mi / (np.sqrt(vi) + epsilon)


@njit(cache=True, error_model="numpy")
def _ftrl_at(i, g, var, accum, linear, lr, l1, two_l2, two_l2_shrinkage, lr_power):
    """ApplyFtrl / ApplyFtrlV2 (l2_shrinkage): accum_new = accum + g^2;
    linear += g + 2*l2_shrinkage*var - (accum_new^-p - accum^-p)/lr * var;
    var = (clip(linear, -l1, l1) - linear) / (accum_new^-p/lr + 2*l2); accum = accum_new."""
    w = var[i]
    old_accum = accum[i]
    new_accum = old_accum + g * g
    if lr_power == -0.5:  # TF's special case: sqrt instead of pow
        new_power = np.sqrt(new_accum)
        old_power = np.sqrt(old_accum)
    else:
        new_power = new_accum ** -lr_power
        old_power = old_accum ** -lr_power
    lin = linear[i] + g + two_l2_shrinkage * w - (new_power - old_power) / lr * w
    quadratic = new_power / lr + two_l2
    accum[i] = new_accum
    linear[i] = lin
    var[i] = (max(min(lin, l1), -l1) - lin) / quadratic  # exactly 0 when |linear| <= l1


@njit(cache=True, error_model="numpy")
def _rms_prop_at(i, g, var, ms, mom, mg, lr, one_minus_decay, momentum, epsilon, centered):
    """ApplyRMSProp: ms += (g^2-ms)(1-decay); mom = momentum*mom + lr*g/sqrt(ms+eps); var -= mom.
    ApplyCenteredRMSProp also tracks mg += (g-mg)(1-decay) and uses sqrt(ms - mg^2 + eps)."""
    s = ms[i]
    s += (g * g - s) * one_minus_decay
    if centered:
        c = mg[i]
        c += (g - c) * one_minus_decay
        mg[i] = c
        denom = s - c * c + epsilon
    else:
        denom = s + epsilon
    step = mom[i] * momentum + g * lr / np.sqrt(denom)
    ms[i] = s
    mom[i] = step
    var[i] -= step


# ---------------------------------------------------------------------------------------------
# Dense kernels: every element, serially. A loop indexed from 0 vectorises; under prange it did not
# (the unsigned index needs a cast, and LLVM cannot drop the wraparound check): float32 Adam over the
# deep-MNIST tutorial's 3136x1024 weight took 7.6 ms under prange on one Numba thread and 4.0-7.7 ms
# on two, against 1.6-1.9 ms in this loop. Vectorised per chunk, two threads took 1.6 ms: the loop is
# bound by memory (7 arrays' passes), and a parallel region stalls on a core other work holds.


@njit(cache=True, error_model="numpy")
def _gradient_descent_dense(grad, var, lr):
    """Dense GradientDescent over flat arrays."""
    for i in range(var.size):
        _gradient_descent_at(i, grad[i], var, lr)


@njit(cache=True, error_model="numpy")
def _momentum_dense(grad, var, accum, lr, momentum, use_nesterov):
    """Dense Momentum over flat arrays."""
    for i in range(var.size):
        _momentum_at(i, grad[i], var, accum, lr, momentum, use_nesterov)


@njit(cache=True, error_model="numpy")
def _adagrad_dense(grad, var, accum, lr):
    """Dense Adagrad over flat arrays."""
    for i in range(var.size):
        _adagrad_at(i, grad[i], var, accum, lr)


@njit(cache=True, error_model="numpy")
def _adadelta_dense(grad, var, accum, accum_update, lr, rho, one_minus_rho, epsilon):
    """Dense Adadelta over flat arrays."""
    for i in range(var.size):
        _adadelta_at(i, grad[i], var, accum, accum_update, lr, rho, one_minus_rho, epsilon)


@njit(cache=True, error_model="numpy")
def _adam_dense(grad, var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    """Dense Adam over flat arrays."""
    for i in range(var.size):
        _adam_at(i, grad[i], var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon)


@njit(cache=True, error_model="numpy")
def _ftrl_dense(grad, var, accum, linear, lr, l1, two_l2, two_l2_shrinkage, lr_power):
    """Dense Ftrl over flat arrays."""
    for i in range(var.size):
        _ftrl_at(i, grad[i], var, accum, linear, lr, l1, two_l2, two_l2_shrinkage, lr_power)


@njit(cache=True, error_model="numpy")
def _rms_prop_dense(grad, var, ms, mom, mg, lr, one_minus_decay, momentum, epsilon, centered):
    """Dense (centered) RMSProp over flat arrays; `mg` is unused (may be empty) when not centered."""
    for i in range(var.size):
        _rms_prop_at(i, grad[i], var, ms, mom, mg, lr, one_minus_decay, momentum, epsilon, centered)


# ---------------------------------------------------------------------------------------------
# Sparse kernels: `rows` are unique, `values` is (len(rows), inner) with duplicates already summed.
# Serial: a sparse step touches a batch's worth of rows, too few to pay for threads (Adam's
# walk over every row is serial too: it is one contiguous pass).


@njit(cache=True, error_model="numpy")
def _gradient_descent_sparse(rows, values, var, lr):
    """GradientDescent on the given rows of flat `var`."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _gradient_descent_at(rows[k] * inner + j, values[k, j], var, lr)


@njit(cache=True, error_model="numpy")
def _momentum_sparse(rows, values, var, accum, lr, momentum, use_nesterov):
    """SparseApplyMomentum on the given rows."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _momentum_at(rows[k] * inner + j, values[k, j], var, accum, lr, momentum, use_nesterov)


@njit(cache=True, error_model="numpy")
def _adagrad_sparse(rows, values, var, accum, lr):
    """SparseApplyAdagrad on the given rows."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _adagrad_at(rows[k] * inner + j, values[k, j], var, accum, lr)


@njit(cache=True, error_model="numpy")
def _adadelta_sparse(rows, values, var, accum, accum_update, lr, rho, one_minus_rho, epsilon):
    """SparseApplyAdadelta on the given rows."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _adadelta_at(rows[k] * inner + j, values[k, j], var, accum, accum_update,
                         lr, rho, one_minus_rho, epsilon)


@njit(cache=True, error_model="numpy")
def _ftrl_sparse(rows, values, var, accum, linear, lr, l1, two_l2, two_l2_shrinkage, lr_power):
    """SparseApplyFtrl / SparseApplyFtrlV2 on the given rows."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _ftrl_at(rows[k] * inner + j, values[k, j], var, accum, linear,
                     lr, l1, two_l2, two_l2_shrinkage, lr_power)


@njit(cache=True, error_model="numpy")
def _rms_prop_sparse(rows, values, var, ms, mom, mg, lr, one_minus_decay, momentum, epsilon, centered):
    """SparseApplyRMSProp / SparseApplyCenteredRMSProp on the given rows."""
    inner = values.shape[1]
    for k in range(rows.size):
        for j in range(inner):
            _rms_prop_at(rows[k] * inner + j, values[k, j], var, ms, mom, mg,
                         lr, one_minus_decay, momentum, epsilon, centered)


@njit(cache=True, error_model="numpy")
def _adam_decay_run(var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    """Adam with a zero gradient over whole (sliced) arrays. Indexing from 0 lets LLVM prove indices
    non-negative, drop Numba's wraparound check and vectorise (8x faster than a loop from `start`)."""
    zero = var.dtype.type(0)
    for i in range(var.size):
        _adam_at(i, zero, var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon)


@njit(cache=True, error_model="numpy")
def _adam_sparse(rows, values, var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    """TF1's sparse Adam: every element steps (m, v decay), with a zero gradient outside sorted `rows`."""
    inner = values.shape[1]
    done = 0
    for k in range(rows.size + 1):
        start = rows[k] * inner if k < rows.size else var.size
        _adam_decay_run(var[done:start], m[done:start], v[done:start],
                        alpha, one_minus_beta1, one_minus_beta2, epsilon)
        if k < rows.size:
            for j in range(inner):
                _adam_at(start + j, values[k, j], var, m, v, alpha, one_minus_beta1, one_minus_beta2, epsilon)
        done = start + inner


@njit(cache=True, error_model="numpy")
def _sum_rows(values, inverse, n_unique):
    """Sum the rows of `values` that share an index (TF1's _deduplicate_indexed_slices)."""
    summed = np.zeros((n_unique, values.shape[1]), values.dtype)
    for k in range(values.shape[0]):
        for j in range(values.shape[1]):
            summed[inverse[k], j] += values[k, j]
    return summed


# ---------------------------------------------------------------------------------------------
# Argument checks shared by the public functions.


def _flat_slot(name: str, array: np.ndarray, var: np.ndarray) -> np.ndarray:
    """A writable flat view of a variable or slot that must match `var` exactly."""
    if not isinstance(array, np.ndarray):
        raise InvalidArgumentError(None, None, f"{name} must be a numpy array updated in place, got {type(array).__name__}")
    if array.dtype != var.dtype or array.shape != var.shape:
        raise InvalidArgumentError(
            None, None, f"var and {name} do not have the same shape and dtype: "
            f"{var.shape} {var.dtype} vs {array.shape} {array.dtype}")
    if not (array.flags.c_contiguous and array.flags.writeable):
        raise InvalidArgumentError(None, None, f"{name} must be a writable C-contiguous array to be updated in place")
    return array.reshape(-1)


def _check_var(var: np.ndarray) -> np.ndarray:
    """The variable itself: a float array updated in place."""
    if not isinstance(var, np.ndarray) or var.dtype.kind != "f":
        raise InvalidArgumentError(None, None, f"var must be a float numpy array, got {getattr(var, 'dtype', type(var))}")
    return _flat_slot("var", var, var)


def _flat_grad(grad, var: np.ndarray) -> np.ndarray:
    """The dense gradient as a flat array of var's dtype and shape."""
    grad = np.asarray(grad)
    if grad.dtype != var.dtype or grad.shape != var.shape:
        raise InvalidArgumentError(
            None, None, f"var and grad do not have the same shape and dtype: "
            f"{var.shape} {var.dtype} vs {grad.shape} {grad.dtype}")
    return np.ascontiguousarray(grad).reshape(-1)


def _unique_rows(values, indices, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique row indices and the (n_unique, inner) gradient with duplicate rows summed."""
    if var.ndim < 1:
        raise InvalidArgumentError(None, None, "var must be at least 1 dimensional for a sparse update")
    indices = np.asarray(indices)
    if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
        raise InvalidArgumentError(None, None, f"indices must be a 1-D integer array, got shape {indices.shape} {indices.dtype}")
    values = np.asarray(values)
    expected = (indices.size,) + var.shape[1:]
    if values.dtype != var.dtype or values.shape != expected:
        raise InvalidArgumentError(
            None, None, f"sparse gradient values must have shape {expected} and dtype {var.dtype} "
            f"(len(indices),) + var.shape[1:], got {values.shape} {values.dtype}")
    out_of_range = np.flatnonzero((indices < 0) | (indices >= var.shape[0]))
    if out_of_range.size:
        offset = int(out_of_range[0])
        raise InvalidArgumentError(
            None, None, f"Index {int(indices[offset])} at offset {offset} in indices is out of range [0, {var.shape[0]})")
    rows, inverse = np.unique(indices.astype(np.int64, copy=False), return_inverse=True)
    inner = int(np.prod(var.shape[1:], dtype=np.int64))
    flat_values = np.ascontiguousarray(values).reshape(indices.size, inner)
    return rows, _sum_rows(flat_values, inverse.reshape(-1), rows.size)


def _scalars(var: np.ndarray, *values: float):
    """Hyperparameters in the variable's dtype, so float32 variables update in float32 arithmetic."""
    cast = var.dtype.type
    return tuple(cast(value) for value in values)


def _adam_alpha(lr: float, beta1_power: float, beta2_power: float) -> float:
    """TF1's lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)."""
    return lr * np.sqrt(1.0 - beta2_power) / (1.0 - beta1_power)


def _empty_slot(var: np.ndarray) -> np.ndarray:
    """Stand-in for RMSProp's `mg` slot when not centered (never read or written)."""
    return np.empty(0, var.dtype)


# ---------------------------------------------------------------------------------------------
# Public API: state arrays first, then the gradient (dense) or values + indices (sparse).


def apply_gradient_descent(var: np.ndarray, grad: np.ndarray, *, lr: float) -> None:
    """var -= lr * grad, in place (TF1 ApplyGradientDescent)."""
    flat = _check_var(var)
    _gradient_descent_dense(_flat_grad(grad, var), flat, *_scalars(var, lr))


def sparse_apply_gradient_descent(var: np.ndarray, values: np.ndarray, indices: np.ndarray, *, lr: float) -> None:
    """var[indices] -= lr * values (duplicates summed), in place; equals the dense step on the scattered gradient."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _gradient_descent_sparse(rows, summed, flat, *_scalars(var, lr))


def apply_momentum(var: np.ndarray, accum: np.ndarray, grad: np.ndarray, *, lr: float, momentum: float,
                   use_nesterov: bool = False) -> None:
    """TF1 ApplyMomentum in place: accum = momentum * accum + grad; var -= lr * accum (or Nesterov's form)."""
    flat = _check_var(var)
    _momentum_dense(_flat_grad(grad, var), flat, _flat_slot("accum", accum, var),
                    *_scalars(var, lr, momentum), bool(use_nesterov))


def sparse_apply_momentum(var: np.ndarray, accum: np.ndarray, values: np.ndarray, indices: np.ndarray, *,
                          lr: float, momentum: float, use_nesterov: bool = False) -> None:
    """TF1 SparseApplyMomentum in place: only the given rows of var and accum change (rows absent keep their accum)."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _momentum_sparse(rows, summed, flat, _flat_slot("accum", accum, var),
                     *_scalars(var, lr, momentum), bool(use_nesterov))


def apply_adagrad(var: np.ndarray, accum: np.ndarray, grad: np.ndarray, *, lr: float) -> None:
    """TF1 ApplyAdagrad in place: accum += grad^2; var -= lr * grad / sqrt(accum). The caller initialises accum."""
    flat = _check_var(var)
    _adagrad_dense(_flat_grad(grad, var), flat, _flat_slot("accum", accum, var), *_scalars(var, lr))


def sparse_apply_adagrad(var: np.ndarray, accum: np.ndarray, values: np.ndarray, indices: np.ndarray, *,
                         lr: float) -> None:
    """TF1 SparseApplyAdagrad in place on the given rows; equals the dense step on the scattered gradient."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _adagrad_sparse(rows, summed, flat, _flat_slot("accum", accum, var), *_scalars(var, lr))


def apply_adadelta(var: np.ndarray, accum: np.ndarray, accum_update: np.ndarray, grad: np.ndarray, *,
                   lr: float, rho: float, epsilon: float) -> None:
    """TF1 ApplyAdadelta in place (formula in `_adadelta_at`)."""
    flat = _check_var(var)
    _adadelta_dense(_flat_grad(grad, var), flat, _flat_slot("accum", accum, var),
                    _flat_slot("accum_update", accum_update, var), *_scalars(var, lr, rho, 1.0 - rho, epsilon))


def sparse_apply_adadelta(var: np.ndarray, accum: np.ndarray, accum_update: np.ndarray, values: np.ndarray,
                          indices: np.ndarray, *, lr: float, rho: float, epsilon: float) -> None:
    """TF1 SparseApplyAdadelta in place: only the given rows (absent rows' slots do not decay)."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _adadelta_sparse(rows, summed, flat, _flat_slot("accum", accum, var),
                     _flat_slot("accum_update", accum_update, var), *_scalars(var, lr, rho, 1.0 - rho, epsilon))


def apply_adam(var: np.ndarray, m: np.ndarray, v: np.ndarray, grad: np.ndarray, *, lr: float, beta1: float,
               beta2: float, epsilon: float, beta1_power: float, beta2_power: float) -> None:
    """TF1 ApplyAdam in place. `beta1_power`, `beta2_power` are beta^t for this step (the caller's accumulators)."""
    flat = _check_var(var)
    _adam_dense(_flat_grad(grad, var), flat, _flat_slot("m", m, var), _flat_slot("v", v, var),
                *_scalars(var, _adam_alpha(lr, beta1_power, beta2_power), 1.0 - beta1, 1.0 - beta2, epsilon))


def sparse_apply_adam(var: np.ndarray, m: np.ndarray, v: np.ndarray, values: np.ndarray, indices: np.ndarray, *,
                      lr: float, beta1: float, beta2: float, epsilon: float, beta1_power: float,
                      beta2_power: float) -> None:
    """TF1 AdamOptimizer._apply_sparse in place: m, v decay and var moves on every row; gradients on the given rows."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _adam_sparse(rows, summed, flat, _flat_slot("m", m, var), _flat_slot("v", v, var),
                 *_scalars(var, _adam_alpha(lr, beta1_power, beta2_power), 1.0 - beta1, 1.0 - beta2, epsilon))


def apply_ftrl(var: np.ndarray, accum: np.ndarray, linear: np.ndarray, grad: np.ndarray, *, lr: float,
               l1: float, l2: float, lr_power: float, l2_shrinkage: float = 0.0) -> None:
    """TF1 ApplyFtrl (ApplyFtrlV2 when l2_shrinkage > 0) in place (formula in `_ftrl_at`)."""
    flat = _check_var(var)
    _ftrl_dense(_flat_grad(grad, var), flat, _flat_slot("accum", accum, var), _flat_slot("linear", linear, var),
                *_scalars(var, lr, l1, 2.0 * l2, 2.0 * l2_shrinkage, lr_power))


def sparse_apply_ftrl(var: np.ndarray, accum: np.ndarray, linear: np.ndarray, values: np.ndarray,
                      indices: np.ndarray, *, lr: float, l1: float, l2: float, lr_power: float,
                      l2_shrinkage: float = 0.0) -> None:
    """TF1 SparseApplyFtrl (V2 when l2_shrinkage > 0) in place: only the given rows."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    _ftrl_sparse(rows, summed, flat, _flat_slot("accum", accum, var), _flat_slot("linear", linear, var),
                 *_scalars(var, lr, l1, 2.0 * l2, 2.0 * l2_shrinkage, lr_power))


def apply_rms_prop(var: np.ndarray, ms: np.ndarray, mom: np.ndarray, grad: np.ndarray, *, lr: float,
                   decay: float, momentum: float, epsilon: float, mg: np.ndarray | None = None) -> None:
    """TF1 ApplyRMSProp in place; ApplyCenteredRMSProp when the `mg` slot is given (formula in `_rms_prop_at`)."""
    flat = _check_var(var)
    mg_flat = _empty_slot(var) if mg is None else _flat_slot("mg", mg, var)
    _rms_prop_dense(_flat_grad(grad, var), flat, _flat_slot("ms", ms, var), _flat_slot("mom", mom, var), mg_flat,
                    *_scalars(var, lr, 1.0 - decay, momentum, epsilon), mg is not None)


def sparse_apply_rms_prop(var: np.ndarray, ms: np.ndarray, mom: np.ndarray, values: np.ndarray,
                          indices: np.ndarray, *, lr: float, decay: float, momentum: float, epsilon: float,
                          mg: np.ndarray | None = None) -> None:
    """TF1 SparseApplyRMSProp (SparseApplyCenteredRMSProp with `mg`) in place: only the given rows."""
    flat = _check_var(var)
    rows, summed = _unique_rows(values, indices, var)
    mg_flat = _empty_slot(var) if mg is None else _flat_slot("mg", mg, var)
    _rms_prop_sparse(rows, summed, flat, _flat_slot("ms", ms, var), _flat_slot("mom", mom, var), mg_flat,
                     *_scalars(var, lr, 1.0 - decay, momentum, epsilon), mg is not None)
