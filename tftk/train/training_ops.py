"""The optimizers' update ops (TF1's `training_ops`): one in-place fused update per variable.

`ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad)` and its siblings
take the variable and its slots as reference inputs, the hyperparameters as scalar tensors (so
schedules work) and the gradient last; `SparseApply*` take the gradient's values and indices
instead. The kernel calls the fused Numba update of `tftk.kernels.optim` on the session's storage:
no temporaries, nothing fetched (the ops have no outputs). The ops are stateful and not
differentiable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tftk.framework import errors, registry
from tftk.framework.indexed_slices import IndexedSlices
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.op_builder import make_multi_op
from tftk.ops.state_ops import _ref_tensor

__all__ = ["UpdateKind", "UPDATE_KINDS", "apply_update"]


@dataclass(frozen=True)
class UpdateKind:
    """One optimizer update: its kernel in `tftk.kernels.optim`, its slots and hyperparameters."""

    op_type: str  # dense op type; the sparse one is "Sparse" + op_type
    kernel: str  # dense kernel name; the sparse one is "sparse_" + kernel
    slots: tuple[str, ...]  # keyword names of the slot arrays, in input order after `var`
    hypers: tuple[str, ...]  # keyword names of the scalar hyperparameters, in input order
    static: tuple[str, ...] = ()  # attrs passed to the kernel as keywords (e.g. use_nesterov)
    module: str = "optim"  # the tftk.kernels module holding the kernels


UPDATE_KINDS: dict[str, UpdateKind] = {kind.op_type: kind for kind in (
    UpdateKind("ApplyGradientDescent", "apply_gradient_descent", (), ("lr",)),
    UpdateKind("ApplyMomentum", "apply_momentum", ("accum",), ("lr", "momentum"), ("use_nesterov",)),
    UpdateKind("ApplyAdagrad", "apply_adagrad", ("accum",), ("lr",)),
    UpdateKind("ApplyAdadelta", "apply_adadelta", ("accum", "accum_update"), ("lr", "rho", "epsilon")),
    UpdateKind("ApplyAdam", "apply_adam", ("m", "v"),
               ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon")),
    UpdateKind("ApplyFtrl", "apply_ftrl", ("accum", "linear"), ("lr", "l1", "l2", "lr_power")),
    UpdateKind("ApplyFtrlV2", "apply_ftrl", ("accum", "linear"), ("lr", "l1", "l2", "l2_shrinkage", "lr_power")),
    UpdateKind("ApplyRMSProp", "apply_rms_prop", ("ms", "mom"), ("lr", "decay", "momentum", "epsilon")),
    UpdateKind("ApplyCenteredRMSProp", "apply_rms_prop", ("mg", "ms", "mom"),
               ("lr", "decay", "momentum", "epsilon")),
    UpdateKind("ApplyProximalGradientDescent", "apply_proximal_gradient_descent", (), ("lr", "l1", "l2"),
               module="proximal_optim"),
    UpdateKind("ApplyProximalAdagrad", "apply_proximal_adagrad", ("accum",), ("lr", "l1", "l2"),
               module="proximal_optim"),
)}


def _storage(box: Any, op: Operation) -> np.ndarray:
    """The array behind a reference input, made writable and contiguous so it updates in place."""
    value = box.value
    if value is None:
        raise errors.FailedPreconditionError(
            None, op, f"Attempting to use uninitialized value {box.name} in {op.name}: run its "
            "initializer first (e.g. sess.run(tf.global_variables_initializer())).")
    if not (value.flags.c_contiguous and value.flags.writeable):
        value = box.value = np.array(value, order="C")
    return value


def _bind(kind: UpdateKind, sparse: bool):
    """Kernel factory: bind the boxes and static attributes once; each call is one fused update."""

    def factory(op: Operation, ctx: Any):
        from tftk.kernels import optim, proximal_optim  # lazy: Numba is imported only when a plan uses an update
        kernels = {"optim": optim, "proximal_optim": proximal_optim}[kind.module]
        update = getattr(kernels, ("sparse_" if sparse else "") + kind.kernel)
        state_names = ("var",) + kind.slots
        boxes = [ctx.ref_box(op, i) for i in range(len(state_names))]
        arg_names = kind.hypers + (("values", "indices") if sparse else ("grad",))
        static = {name: op.get_attr(name) for name in kind.static}

        def kernel(*args: np.ndarray) -> None:
            state = {name: _storage(box, op) for name, box in zip(state_names, boxes)}
            update(**state, **dict(zip(arg_names, args)), **static)
        return kernel
    return factory


for _kind in UPDATE_KINDS.values():
    registry.register_op(_kind.op_type, _bind(_kind, False), ref_inputs=tuple(range(1 + len(_kind.slots))),
                         stateful=True, remote=True)
    registry.register_op("Sparse" + _kind.op_type, _bind(_kind, True),
                         ref_inputs=tuple(range(1 + len(_kind.slots))), stateful=True, remote=True)
    registry.not_differentiable(_kind.op_type, "Sparse" + _kind.op_type)
    # Input names, so a GraphDef writes the inputs in TF's order (which differs per op).
    registry.lookup(_kind.op_type).extra["input_names"] = ("var",) + _kind.slots + _kind.hypers + ("grad",)
    registry.lookup("Sparse" + _kind.op_type).extra["input_names"] = (("var",) + _kind.slots + _kind.hypers
                                                                      + ("values", "indices"))


def apply_update(op_type: str, var: Any, slots: Sequence[Any], hypers: Sequence[Tensor],
                 grad: Tensor | IndexedSlices, attrs: dict | None = None, name: str | None = None) -> Operation:
    """Build the (Sparse)Apply op updating `var` and `slots` in place with `grad`.

    Args:
      op_type: a key of UPDATE_KINDS, e.g. "ApplyAdam"; an IndexedSlices `grad` selects "SparseApplyAdam".
      var: the Variable (or variable reference tensor) to update.
      slots: its slot variables, in the order of `UPDATE_KINDS[op_type].slots`.
      hypers: scalar tensors of var's dtype, in the order of `UPDATE_KINDS[op_type].hypers`.
      grad: a dense gradient of var's shape and dtype, or an IndexedSlices of its rows.
    Returns:
      The update Operation (no outputs).
    """
    kind = UPDATE_KINDS[op_type]
    if len(slots) != len(kind.slots) or len(hypers) != len(kind.hypers):
        raise ValueError(f"{op_type} takes slots {kind.slots} and hyperparameters {kind.hypers}")
    var_t = _ref_tensor(var)
    refs = [var_t] + [_ref_tensor(s) for s in slots]
    for slot, ref in zip(kind.slots, refs[1:]):
        if ref.dtype is not var_t.dtype or not ref.shape.is_compatible_with(var_t.shape):
            raise ValueError(f"{op_type}: slot {slot} ({ref.op.name}, {ref.shape} {ref.dtype.name}) does not "
                             f"match variable {var_t.op.name} ({var_t.shape} {var_t.dtype.name})")
    for hyper, tensor in zip(kind.hypers, hypers):
        if tensor.dtype is not var_t.dtype or tensor.shape.ndims not in (None, 0):
            raise ValueError(f"{op_type}: hyperparameter {hyper} must be a scalar {var_t.dtype.name} tensor, "
                             f"got {tensor.shape} {tensor.dtype.name}")
    if isinstance(grad, IndexedSlices):
        values, indices = convert_to_tensor(grad.values), convert_to_tensor(grad.indices)
        _check_grad(op_type, var_t, values, expected=None)
        if not indices.dtype.is_integer or indices.shape.ndims not in (None, 1):
            raise ValueError(f"Sparse{op_type}: indices of the gradient of {var_t.op.name} must be a 1-D "
                             f"integer tensor, got {indices.shape} {indices.dtype.name}")
        inputs, op_type = refs + list(hypers) + [values, indices], "Sparse" + op_type
    else:
        grad = convert_to_tensor(grad)
        _check_grad(op_type, var_t, grad, expected=var_t.shape)
        inputs = refs + list(hypers) + [grad]
    return make_multi_op(op_type, inputs, [], name or op_type, dict(attrs or {}))


def _check_grad(op_type: str, var_t: Tensor, grad: Tensor, expected: Any) -> None:
    """A gradient of the wrong dtype or shape fails here, at build time, naming the variable."""
    if grad.dtype is not var_t.dtype:
        raise TypeError(f"{op_type}: the gradient of {var_t.op.name} has dtype {grad.dtype.name}, "
                        f"expected {var_t.dtype.name}")
    if expected is not None and not grad.shape.is_compatible_with(expected):
        raise ValueError(f"{op_type}: the gradient of {var_t.op.name} has shape {grad.shape}, "
                         f"expected {expected}")
    rows, var_dims = grad.shape.as_tuple(), var_t.shape.as_tuple()
    if expected is None and rows is not None and var_dims is not None:
        if not TensorShape([None] + list(rows[1:])).is_compatible_with(TensorShape([None] + list(var_dims[1:]))):
            raise ValueError(f"Sparse{op_type}: gradient rows of {var_t.op.name} have shape {grad.shape}, "
                             f"expected [None] + {list(var_dims[1:])}")
