"""TF1's proximal updates (FOBOS, Duchi & Singer): a gradient step, then the L1/L2 proximal map.

    prox = var - step * grad
    var  = sign(prox) * max(|prox| - step * l1, 0) / (1 + step * l2)     (just prox / (1 + step*l2) when l1 == 0)

ApplyProximalGradientDescent uses step = alpha; ApplyProximalAdagrad first does accum += grad^2 and
uses step = lr / sqrt(accum). Arithmetic is in the variable's dtype (numpy, whole arrays: the proximal
map is a handful of vector ops, nothing for a fused loop to gain). The sparse forms update only the
given rows, duplicate indices summed first, as TF1's optimizers do.
"""

from __future__ import annotations

import numpy as np

from tftk.kernels.optim import _check_var, _flat_grad, _flat_slot, _scalars, _unique_rows

__all__ = ["apply_proximal_gradient_descent", "sparse_apply_proximal_gradient_descent",
           "apply_proximal_adagrad", "sparse_apply_proximal_adagrad"]


def _proximal(prox: np.ndarray, step, l1, l2) -> np.ndarray:
    """The L1/L2 proximal map of `prox` for a step of `step` (scalar or per element)."""
    if l1 > 0:
        shrunk = np.sign(prox) * np.maximum(np.abs(prox) - step * l1, prox.dtype.type(0))
    else:
        shrunk = prox
    return shrunk / (prox.dtype.type(1) + step * l2)


def _rows_view(flat: np.ndarray, var: np.ndarray) -> np.ndarray:
    return flat.reshape(var.shape[0], -1)


def apply_proximal_gradient_descent(var: np.ndarray, grad: np.ndarray, *, lr: float, l1: float, l2: float) -> None:
    """TF1 ApplyProximalGradientDescent in place (alpha = lr)."""
    flat = _check_var(var)
    alpha, l1, l2 = _scalars(var, lr, l1, l2)
    flat[:] = _proximal(flat - alpha * _flat_grad(grad, var), alpha, l1, l2)


def sparse_apply_proximal_gradient_descent(var: np.ndarray, values: np.ndarray, indices: np.ndarray, *,
                                           lr: float, l1: float, l2: float) -> None:
    """TF1 SparseApplyProximalGradientDescent in place on the given rows."""
    rows_of = _rows_view(_check_var(var), var)
    rows, summed = _unique_rows(values, indices, var)
    alpha, l1, l2 = _scalars(var, lr, l1, l2)
    rows_of[rows] = _proximal(rows_of[rows] - alpha * summed, alpha, l1, l2)


def apply_proximal_adagrad(var: np.ndarray, accum: np.ndarray, grad: np.ndarray, *, lr: float, l1: float,
                           l2: float) -> None:
    """TF1 ApplyProximalAdagrad in place: accum += grad^2, then the proximal step with lr / sqrt(accum)."""
    flat = _check_var(var)
    acc = _flat_slot("accum", accum, var)
    g = _flat_grad(grad, var)
    lr, l1, l2 = _scalars(var, lr, l1, l2)
    acc += g * g
    step = lr / np.sqrt(acc)
    flat[:] = _proximal(flat - g * step, step, l1, l2)


def sparse_apply_proximal_adagrad(var: np.ndarray, accum: np.ndarray, values: np.ndarray, indices: np.ndarray, *,
                                  lr: float, l1: float, l2: float) -> None:
    """TF1 SparseApplyProximalAdagrad in place on the given rows."""
    rows_of = _rows_view(_check_var(var), var)
    acc_rows = _rows_view(_flat_slot("accum", accum, var), var)
    rows, summed = _unique_rows(values, indices, var)
    lr, l1, l2 = _scalars(var, lr, l1, l2)
    acc_rows[rows] += summed * summed
    step = lr / np.sqrt(acc_rows[rows])
    rows_of[rows] = _proximal(rows_of[rows] - summed * step, step, l1, l2)
