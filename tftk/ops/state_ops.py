"""Variable storage ops: `VariableV2` (the reference), `Assign`, `AssignAdd`, `AssignSub`, scatter updates.

Values live in the session (one `VariableBox` per variable op); these kernels write the box.
Updates are in place when the shape and dtype allow, so variables keep one buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels.scatter import along_last_axis
from tftk.ops.op_builder import make_op
from tftk.ops.scatter_ops import nd_key

__all__ = ["variable_op", "assign", "assign_add", "assign_sub", "count_up_to", "is_variable_initialized",
           "scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div", "scatter_max", "scatter_min",
           "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub", "batch_scatter_update"]

registry.register_op("VariableV2", lambda op, ctx: None, holds_state=True)  # read inline by the executor
registry.not_differentiable("VariableV2")


def variable_op(shape: TensorShape, dtype: dtypes.DType, name: str) -> Tensor:
    """The reference tensor of a new variable (its value lives in each session)."""
    return make_op("VariableV2", [], dtype, shape, name, {"shape": shape, "dtype": dtype})


def _ref_tensor(ref: Any) -> Tensor:
    if hasattr(ref, "_ref"):
        return ref._ref()
    if isinstance(ref, Tensor) and ref.op.type == "VariableV2":
        return ref
    raise TypeError(f"Expected a variable reference, got {ref!r}")


def _bind_assign(op, ctx):
    box = ctx.ref_box(op, 0)
    npd = op.inputs[0].dtype.as_numpy_dtype
    validate = op.get_attr("validate_shape")

    def kernel(value):
        current = box.value
        if current is not None and current.shape == value.shape and current.flags.writeable:
            np.copyto(current, value, casting="unsafe")
            return current
        if current is not None and validate and current.shape != value.shape:
            raise errors.InvalidArgumentError(
                None, op, f"{op.name}: Assign requires shapes of both tensors to match. lhs shape= "
                f"{current.shape} rhs shape= {value.shape} (pass validate_shape=False to change it)")
        box.value = np.array(value, dtype=npd, copy=True)
        return box.value
    return kernel


def _bind_update(ufunc):
    def factory(op, ctx):
        box = ctx.ref_box(op, 0)

        def kernel(value):
            current = box.value
            if current is None:
                raise errors.FailedPreconditionError(
                    None, op, f"Attempting to use uninitialized value {box.name} in {op.name}")
            ufunc(current, value, out=current, casting="unsafe")
            return current
        return kernel
    return factory


registry.register_op("Assign", _bind_assign, ref_inputs=(0,), stateful=True)
registry.register_op("AssignAdd", _bind_update(np.add), ref_inputs=(0,), stateful=True)
registry.register_op("AssignSub", _bind_update(np.subtract), ref_inputs=(0,), stateful=True)
registry.not_differentiable("Assign", "AssignAdd", "AssignSub")


def assign(ref: Any, value: Any, validate_shape: bool | None = None, use_locking: bool | None = None,
           name: str | None = None) -> Tensor:
    """Store `value` in the variable `ref`; the result is the variable's new value."""
    ref_t = _ref_tensor(ref)
    value = convert_to_tensor(value, dtype=ref_t.dtype)
    validate = True if validate_shape is None else validate_shape
    if validate and not ref_t.shape.is_compatible_with(value.shape):
        raise ValueError(f"Shapes {ref_t.shape} and {value.shape} are incompatible: cannot assign to "
                         f"variable {ref_t.op.name} (pass validate_shape=False to change its shape)")
    shape = value.shape if not validate else ref_t.shape.merge_with(value.shape)
    return make_op("Assign", [ref_t, value], ref_t.dtype, shape, name or "Assign",
                   {"validate_shape": validate, "use_locking": bool(use_locking)})


def _update(op_type: str, ref: Any, value: Any, name: str | None) -> Tensor:
    ref_t = _ref_tensor(ref)
    value = convert_to_tensor(value, dtype=ref_t.dtype)
    if not ref_t.shape.is_compatible_with(value.shape) and value.shape.ndims != 0:
        raise ValueError(f"Shapes {ref_t.shape} and {value.shape} are incompatible in {op_type} "
                         f"on variable {ref_t.op.name}")
    return make_op(op_type, [ref_t, value], ref_t.dtype, ref_t.shape, name or op_type)


def assign_add(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """ref += value, in place; returns the new value."""
    return _update("AssignAdd", ref, value, name)


def assign_sub(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """ref -= value, in place; returns the new value."""
    return _update("AssignSub", ref, value, name)


def _bind_count_up_to(op, ctx):
    box = ctx.ref_box(op, 0)
    limit = op.get_attr("limit")

    def kernel():
        current = box.value
        if current is None:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {box.name} in {op.name}")
        before = current.copy()
        if before >= limit:
            raise errors.OutOfRangeError(None, op, f"Reached limit of {limit}")
        current += 1
        return before
    return kernel


registry.register_op("CountUpTo", _bind_count_up_to, ref_inputs=(0,), stateful=True)
registry.not_differentiable("CountUpTo")


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increment the integer variable `ref` until it reaches `limit`; returns the value before the
    increment, and raises OutOfRangeError once the limit is reached (epoch counters)."""
    ref_t = _ref_tensor(ref)
    if not ref_t.dtype.is_integer or ref_t.shape.ndims not in (None, 0):
        raise TypeError(f"count_up_to needs a scalar integer variable, got {ref_t.shape} {ref_t.dtype.name}")
    return make_op("CountUpTo", [ref_t], ref_t.dtype, [], name or "CountUpTo", {"limit": int(limit)})


_SCATTER_UFUNCS = {"ScatterAdd": np.add, "ScatterSub": np.subtract, "ScatterMul": np.multiply,
                   "ScatterDiv": np.divide, "ScatterMax": np.maximum, "ScatterMin": np.minimum,
                   "ScatterNdAdd": np.add, "ScatterNdSub": np.subtract}


def _scatter_key(op_type: str, current: np.ndarray, indices: np.ndarray, op: Operation) -> Any:
    """The numpy index a scatter op writes: rows, n-d positions, or per-batch rows."""
    if op_type.startswith("ScatterNd"):
        return nd_key(current.shape, indices)
    axis = indices.ndim - 1 if op_type == "BatchScatterUpdate" else 0
    limit = current.shape[axis]
    if indices.size and (indices.min() < 0 or indices.max() >= limit):
        bad = indices[(indices < 0) | (indices >= limit)][0]
        raise errors.InvalidArgumentError(None, op, f"{op.name}: index {bad} is not in [0, {limit})")
    return along_last_axis(indices) if op_type == "BatchScatterUpdate" else indices


def _bind_scatter(op, ctx):
    box = ctx.ref_box(op, 0)
    ufunc = _SCATTER_UFUNCS.get(op.type)

    def kernel(indices, updates):
        current = box.value
        if current is None:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {box.name} in {op.name}")
        key = _scatter_key(op.type, current, indices, op)
        if ufunc is None:
            current[key] = updates
        else:
            ufunc.at(current, key, updates)
        return current
    return kernel


_SCATTER_TYPES = ("ScatterUpdate", "ScatterNdUpdate", "BatchScatterUpdate", *_SCATTER_UFUNCS)
for _op_type in _SCATTER_TYPES:
    registry.register_op(_op_type, _bind_scatter, ref_inputs=(0,), stateful=True)
registry.not_differentiable(*_SCATTER_TYPES)


def _scatter(op_type: str, ref: Any, indices: Any, updates: Any, name: str | None) -> Tensor:
    ref_t = _ref_tensor(ref)
    idx = convert_to_tensor(indices)
    if not idx.dtype.is_integer:
        raise TypeError(f"{op_type} indices must be integers, got {idx.dtype.name}")
    upd = convert_to_tensor(updates, dtype=ref_t.dtype)
    return make_op(op_type, [ref_t, idx, upd], ref_t.dtype, ref_t.shape, name or op_type)


def _scatter_function(op_type: str, doc: str):
    def scatter(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        return _scatter(op_type, ref, indices, updates, name)
    scatter.__name__ = scatter.__qualname__ = "".join(
        "_" + c.lower() if c.isupper() else c for c in op_type).lstrip("_")
    scatter.__doc__ = doc
    return scatter


scatter_update = _scatter_function("ScatterUpdate", "ref[indices] = updates (rows of the first dimension).")
scatter_add = _scatter_function("ScatterAdd", "ref[indices] += updates; duplicate indices accumulate.")
scatter_sub = _scatter_function("ScatterSub", "ref[indices] -= updates; duplicate indices accumulate.")
scatter_mul = _scatter_function("ScatterMul", "ref[indices] *= updates; duplicate indices accumulate.")
scatter_div = _scatter_function("ScatterDiv", "ref[indices] /= updates; duplicate indices accumulate.")
scatter_max = _scatter_function("ScatterMax", "ref[indices] = max(ref[indices], updates).")
scatter_min = _scatter_function("ScatterMin", "ref[indices] = min(ref[indices], updates).")
scatter_nd_update = _scatter_function("ScatterNdUpdate", "ref[indices[..., 0], indices[..., 1], ...] = updates.")
scatter_nd_add = _scatter_function("ScatterNdAdd", "ref at the n-d `indices` += updates (duplicates accumulate).")
scatter_nd_sub = _scatter_function("ScatterNdSub", "ref at the n-d `indices` -= updates (duplicates accumulate).")


def batch_scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True,
                         name: str | None = None) -> Tensor:
    """ref[b..., indices[b..., k]] = updates[b..., k]: row updates per batch entry."""
    return _scatter("BatchScatterUpdate", ref, indices, updates, name)


def _bind_is_initialized(op, ctx):
    box = ctx.box(op.get_attr("variable_op"))
    return lambda: np.asarray(box.initialized)


registry.register_op("IsVariableInitialized", _bind_is_initialized)
registry.not_differentiable("IsVariableInitialized")


def is_variable_initialized(variable: Any, name: str | None = None) -> Tensor:
    ref_t = _ref_tensor(variable)
    return make_op("IsVariableInitialized", [], dtypes.bool, [], name,
                   {"variable_op": ref_t.op})


def _bind_report_uninitialized(op, ctx):
    boxes = [ctx.box(v) for v in op.get_attr("variable_ops")]
    return lambda: np.array([b.name.encode() for b in boxes if not b.initialized], dtype=object)


registry.register_op("ReportUninitializedVariables", _bind_report_uninitialized)
registry.not_differentiable("ReportUninitializedVariables")


def report_uninitialized(variable_ops: list[Operation], name: str | None = None) -> Tensor:
    return make_op("ReportUninitializedVariables", [], dtypes.string, [None], name,
                   {"variable_ops": list(variable_ops)})
