"""Ops that repeat, pad, mirror, roll or broadcast a tensor: tile, pad, reverse, roll, broadcast_to, meshgrid."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tftk.framework import dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.constant_value import constant_value, static_axis, static_ints
from tftk.ops.op_builder import make_op

__all__ = ["tile", "pad", "reverse", "reverse_v2", "roll", "broadcast_to", "meshgrid"]



# ---- tile / pad / reverse -------------------------------------------------------------------

def _bind_tile(op, ctx):
    multiples = op.get_attr("multiples")
    return lambda x: np.tile(x, multiples)


def _bind_tile_grad(op, ctx):
    multiples = op.get_attr("multiples")

    def kernel(grad, x):
        split = [v for m, d in zip(multiples, x.shape) for v in (m, d)]
        return grad.reshape(split).sum(axis=tuple(builtins.range(0, 2 * len(multiples), 2)))
    return kernel


registry.register_op("Tile", _bind_tile)
registry.register_op("TileGrad", _bind_tile_grad)
registry.not_differentiable("TileGrad")


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    """Repeat `input` `multiples[i]` times along axis i (`multiples` may be known only at run time)."""
    x = convert_to_tensor(input)
    multiples = array_ops.pack_shape_list(multiples)
    if isinstance(multiples, Tensor) and constant_value(multiples) is None:
        return _tile_dynamic(x, multiples, name)
    m = static_ints(multiples, "multiples", "Tile")
    dims = x.shape.as_tuple()
    if dims is not None and len(m) != len(dims):
        raise ValueError(f"Tile '{name or 'Tile'}': multiples {m} must have one entry per dimension "
                         f"of the input (shape {x.shape})")
    if any(v < 0 for v in m):
        raise ValueError(f"Tile '{name or 'Tile'}': multiples must be >= 0, got {m}")
    shape = TensorShape(None) if dims is None else TensorShape(
        [None if d is None else d * v for d, v in zip(dims, m)])
    return make_op("Tile", [x], x.dtype, shape, name, {"multiples": tuple(m)})


@registry.register_gradient("Tile")
def _tile_grad(op, grad):
    x = op.inputs[0]
    return [make_op("TileGrad", [grad, x], grad.dtype, x.shape, attrs={"multiples": op.get_attr("multiples")})]


def _tile_dynamic(x: Tensor, multiples: Tensor, name: str | None) -> Tensor:
    """TileDynamic(x, multiples): exported as TF's Tile, whose multiples are a tensor anyway."""
    multiples = math_ops.cast(multiples, dtypes.int32) if multiples.dtype is not dtypes.int32 else multiples
    known = array_ops.partial_shape(multiples)
    dims = x.shape.as_tuple()
    shape = TensorShape(None) if dims is None else TensorShape(
        [None if d is None or m is None else d * m for d, m in zip(dims, known.as_tuple() or [None] * len(dims))])
    return make_op("TileDynamic", [x, multiples], x.dtype, shape, name)


registry.register_op("TileDynamic", lambda op, ctx: lambda x, m: np.tile(x, tuple(m.tolist())))


@registry.register_gradient("TileDynamic")
def _tile_dynamic_grad(op, grad):
    """The gradient summed over the copies: grad reshaped to [m0, d0, m1, d1, ...], summed over the m axes."""
    from tftk.ops.reduction_ops import reduce_sum
    x, multiples = op.inputs
    if x.shape.ndims is None:
        raise ValueError(f"{op.name}: the gradient of a Tile with run-time multiples needs the input's rank")
    interleaved = array_ops.reshape(array_ops.stack([multiples, array_ops.shape(x)], axis=1), [-1])
    split = array_ops.reshape(grad, interleaved)
    return [reduce_sum(split, axis=list(builtins.range(0, 2 * x.shape.ndims, 2))), None]


def _bind_pad(op, ctx):
    paddings, mode, value = op.get_attr("paddings"), op.get_attr("mode"), op.get_attr("constant_values")
    limit = {"REFLECT": 0, "SYMMETRIC": 1}.get(mode)

    def kernel(x):
        if limit is not None:
            for i, (lo, hi) in enumerate(paddings):
                if max(lo, hi) > x.shape[i] - 1 + limit:
                    raise ValueError(f"paddings must be less than{' or equal to' if limit else ''} the "
                                     f"dimension size: {lo}, {hi} not less than {x.shape[i]}")
        if mode == "CONSTANT":
            return np.pad(x, paddings, mode="constant", constant_values=value)
        return np.pad(x, paddings, mode=mode.lower())
    return kernel


def _bind_mirror_pad_grad(op, ctx):
    paddings, mode = op.get_attr("paddings"), op.get_attr("mode")
    shift = 1 if mode == "REFLECT" else 0

    def kernel(grad):
        out = grad
        for axis, (lo, hi) in enumerate(paddings):
            out = np.moveaxis(out, axis, 0)
            d = out.shape[0] - lo - hi
            core = out[lo:lo + d].copy()
            if lo:
                core[shift:shift + lo] += out[:lo][::-1]
            if hi:
                core[d - shift - hi:d - shift] += out[lo + d:][::-1]
            out = np.moveaxis(core, 0, axis)
        return out
    return kernel


registry.register_op("Pad", _bind_pad)
registry.register_op("MirrorPad", _bind_pad)
registry.register_op("MirrorPadGrad", _bind_mirror_pad_grad)
registry.not_differentiable("MirrorPadGrad")


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None,
        constant_values: Any = 0) -> Tensor:
    """Pad each axis by paddings[i] = [before, after]: constant, REFLECT or SYMMETRIC mirroring."""
    x = convert_to_tensor(tensor)
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unknown padding mode: {mode!r} (use CONSTANT, REFLECT or SYMMETRIC)")
    if isinstance(paddings, (list, tuple)) and any(isinstance(p, Tensor) or isinstance(p, (list, tuple)) and any(
            isinstance(q, Tensor) for q in p) for p in paddings):
        paddings = convert_to_tensor(paddings, dtype=dtypes.int32)  # pairs holding tensors, packed as TF does
    static = constant_value(paddings) if isinstance(paddings, Tensor) else np.asarray(paddings)
    if static is None:
        if mode != "CONSTANT":
            raise ValueError(f"MirrorPad: paddings must be known when the graph is built ({mode} mode)")
        return _pad_dynamic(x, paddings, constant_values, name)
    dims = x.shape.as_tuple()
    op_type = "Pad" if mode == "CONSTANT" else "MirrorPad"
    if static.ndim != 2 or static.shape[1] != 2 or dims is not None and static.shape[0] != len(dims):
        raise ValueError(f"{op_type} '{name or op_type}': paddings must have shape [{len(dims) if dims else 'rank'}, 2], "
                         f"got {list(static.shape)} for input shape {x.shape}")
    pads = tuple((int(lo), int(hi)) for lo, hi in static.tolist())
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        raise ValueError(f"{op_type}: paddings must be non-negative, got {[list(p) for p in pads]}")
    if dims is not None and mode != "CONSTANT":
        extra = 1 if mode == "SYMMETRIC" else 0
        for i, ((lo, hi), d) in enumerate(zip(pads, dims)):
            if d is not None and max(lo, hi) > d - 1 + extra:
                raise ValueError(f"MirrorPad '{name or op_type}': paddings {[lo, hi]} of dimension {i} "
                                 f"must be {'<=' if extra else '<'} its size {d} in {mode} mode")
    shape = TensorShape(None) if dims is None else TensorShape(
        [None if d is None else d + lo + hi for d, (lo, hi) in zip(dims, pads)])
    value = constant_value(constant_values)
    if value is None:
        raise ValueError("Pad: constant_values must be known when the graph is built")
    return make_op(op_type, [x], x.dtype, shape, name,
                   {"paddings": pads, "mode": mode, "constant_values": value.astype(x.dtype.as_numpy_dtype)
                    if x.dtype is not dtypes.string else value})


def _pad_dynamic(x: Tensor, paddings: Tensor, constant_values: Any, name: str | None) -> Tensor:
    """PadDynamic(x, paddings, value): exported as TF's PadV2, whose paddings are a tensor anyway."""
    paddings = math_ops.cast(paddings, dtypes.int32) if paddings.dtype is not dtypes.int32 else paddings
    value = convert_to_tensor(constant_values, dtype=x.dtype)
    rank = x.shape.ndims
    return make_op("PadDynamic", [x, paddings, value], x.dtype, TensorShape(None if rank is None else [None] * rank),
                   name)


def _bind_pad_dynamic(op, ctx):
    def kernel(x, paddings, value):
        if paddings.shape != (x.ndim, 2) or (paddings < 0).any():
            from tftk.framework import errors
            raise errors.InvalidArgumentError(None, op, f"paddings must be a non-negative matrix [{x.ndim}, 2], got "
                                                        f"{paddings.tolist()}")
        return np.pad(x, paddings.tolist(), constant_values=value.item())
    return kernel


registry.register_op("PadDynamic", _bind_pad_dynamic)


@registry.register_gradient("PadDynamic")
def _pad_dynamic_grad(op, grad):
    from tftk.ops.slicing_ops import slice as slice_op
    x, paddings = op.inputs[0], op.inputs[1]
    begin = array_ops.reshape(slice_op(paddings, [0, 0], [-1, 1]), [-1])  # paddings[:, 0]: where x starts
    return [slice_op(grad, begin, array_ops.shape(x)), None, None]


@registry.register_gradient("Pad")
def _pad_grad(op, grad):
    key = tuple(builtins.slice(lo, -hi if hi else None) for lo, hi in op.get_attr("paddings"))
    return [make_op("StridedSlice", [grad], grad.dtype, op.inputs[0].shape, attrs={"key": key})]


@registry.register_gradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    return [make_op("MirrorPadGrad", [grad], grad.dtype, op.inputs[0].shape,
                    attrs={"paddings": op.get_attr("paddings"), "mode": op.get_attr("mode")})]


def _bind_reverse(op, ctx):
    axes = op.get_attr("axis")
    return lambda x: np.flip(x, axes)


registry.register_op("ReverseV2", _bind_reverse)


@registry.register_gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [make_op("ReverseV2", [grad], grad.dtype, grad.shape, attrs={"axis": op.get_attr("axis")})]


def reverse_v2(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverse the order of elements along each axis in `axis`."""
    x = convert_to_tensor(tensor)
    static = constant_value(axis) if isinstance(axis, Tensor) else np.asarray(axis)
    if static is None:
        raise ValueError("ReverseV2: axis must be known when the graph is built")
    rank = x.shape.ndims
    if static.dtype == np.bool_:  # TF's original form: one bool per dimension
        axes = [int(i) for i in np.flatnonzero(static)]
    else:
        axes = [static_axis(a, rank, "ReverseV2") for a in np.atleast_1d(static).tolist()]
    if len(set(axes)) != len(axes):
        raise ValueError(f"ReverseV2 '{name or 'ReverseV2'}': axis {axes} is specified more than once")
    return make_op("ReverseV2", [x], x.dtype, x.shape, name, {"axis": tuple(axes)})


reverse = reverse_v2


def _bind_roll(op, ctx):
    def kernel(x, shift, axis):
        shifts, axes = np.atleast_1d(shift).tolist(), np.atleast_1d(axis).tolist()
        if len(shifts) != len(axes):
            raise ValueError(f"roll: shift {shifts} and axis {axes} must have the same length")
        for a in axes:
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"roll: axis {a} is out of range for an input of rank {x.ndim}")
        return np.roll(x, shifts, axes)
    return kernel


registry.register_op("Roll", _bind_roll)


@registry.register_gradient("Roll")
def _roll_grad(op, grad):
    x, shift, axis = op.inputs
    return [roll(grad, math_ops.negative(shift), axis), None, None]


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:
    """Elements shifted `shift` places along `axis` (several axes: one shift each), wrapping around."""
    x = convert_to_tensor(input)
    s = convert_to_tensor(shift)
    a = convert_to_tensor(axis)
    if not s.dtype.is_integer or not a.dtype.is_integer:
        raise TypeError(f"Roll: shift and axis must be integers, got {s.dtype.name} and {a.dtype.name}")
    return make_op("Roll", [x, s, a], x.dtype, x.shape, name)




# ---- broadcast_to / meshgrid -------------------------------------------------------------------

def _bind_broadcast_to(op, ctx):
    shape = op.get_attr("shape")
    return lambda x: np.broadcast_to(x, shape)


registry.register_op("BroadcastTo", _bind_broadcast_to)


@registry.register_gradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return [math_ops.unbroadcast(grad, op.inputs[0])]


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:
    """`input` broadcast (numpy rules) to `shape`."""
    x = convert_to_tensor(input)
    shape = array_ops.pack_shape_list(shape)
    if isinstance(shape, Tensor) and constant_value(shape) is None:
        return make_op("BroadcastLike", [x, math_ops.cast(shape, dtypes.int32)], x.dtype, array_ops.partial_shape(shape),
                       name)
    target = tuple(static_ints(shape, "shape", "BroadcastTo")) if np.ndim(
        constant_value(shape) if isinstance(shape, Tensor) else shape) else ()
    dims = x.shape.as_tuple()
    if dims is not None:
        if len(dims) > len(target):
            raise ValueError(f"BroadcastTo: cannot broadcast shape {x.shape} to {list(target)}")
        for d, t in zip(dims[::-1], target[::-1]):
            if d is not None and d != 1 and d != t:
                raise ValueError(f"BroadcastTo '{name or 'BroadcastTo'}': incompatible shapes {x.shape} "
                                 f"and {list(target)}")
    return make_op("BroadcastTo", [x], x.dtype, target, name, {"shape": target})



def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """N-D coordinate grids from 1-D vectors; indexing='xy' (default) or 'ij', as numpy."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    with name_scope(name, "meshgrid", args):
        vecs = [convert_to_tensor(a) for a in args]
        sizes = [v.shape.as_list()[0] if v.shape.ndims == 1 else None for v in vecs]
        if any(s is None for s in sizes):
            raise ValueError(f"meshgrid: inputs must be vectors of known length, got {[v.shape for v in vecs]}")
        n = len(vecs)
        out_shape = list(sizes)
        if indexing == "xy" and n > 1:
            out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
        grids = []
        for i, v in enumerate(vecs):
            axis = i
            if indexing == "xy" and n > 1 and i < 2:
                axis = 1 - i
            shaped = array_ops.reshape(v, [sizes[i] if k == axis else 1 for k in np.arange(n)])
            grids.append(broadcast_to(shaped, out_shape))
        return grids
