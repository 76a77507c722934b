"""Reading parts of a tensor: `tensor[...]`, tf.slice, tf.strided_slice, tf.boolean_mask."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.kernels.scatter import scatter_into_zeros
from tftk.ops.constant_value import constant_value, known_entries, static_ints
from tftk.ops.op_builder import make_op

__all__ = ["getitem", "strided_slice_key", "slice", "strided_slice", "boolean_mask", "masked_key",
           "sliced_shape"]


_slice_obj = builtins.slice  # this module defines tf.slice



# ---- basic indexing: tensor[...] ----------------------------------------------------------------

def strided_slice_key(key: Any) -> tuple:
    """Normalise a __getitem__ key to a tuple of int / slice / None / Ellipsis (static only)."""
    items = key if isinstance(key, tuple) else (key,)
    out = []
    for item in items:
        if isinstance(item, Tensor):
            value = constant_value(item)
            if value is None:
                raise TypeError("Tensor indices must be known when the graph is built; use "
                                "tf.gather or tf.slice for dynamic indexing.")
            item = int(value)
        if isinstance(item, _slice_obj):
            parts = []
            for p in (item.start, item.stop, item.step):
                if isinstance(p, Tensor):
                    v = constant_value(p)
                    if v is None:
                        raise TypeError("Slice bounds must be known when the graph is built; use tf.slice.")
                    p = int(v)
                parts.append(None if p is None else int(p))
            out.append(_slice_obj(*parts))
        elif item is None or item is Ellipsis:
            out.append(item)
        elif isinstance(item, (int, np.integer)):
            out.append(int(item))
        else:
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                            f"scalar int tensors are valid indices, got {item!r}")
    return tuple(out)


def sliced_shape(shape: TensorShape, key: tuple) -> TensorShape:
    dims = shape.as_tuple()
    if dims is None:
        return TensorShape(None)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(dims):
        raise ValueError(f"Index {key} has too many dimensions for a tensor of shape {shape}")
    expanded: list[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([_slice_obj(None)] * (len(dims) - n_real))
        else:
            expanded.append(k)
    if Ellipsis not in key:
        expanded.extend([_slice_obj(None)] * (len(dims) - n_real))
    out, i = [], 0
    for k in expanded:
        if k is None:
            out.append(1)
            continue
        d = dims[i]
        i += 1
        if isinstance(k, int):
            if d is not None and not -d <= k < d:
                raise ValueError(f"slice index {k} of dimension {i - 1} out of bounds for shape {shape}")
            continue
        out.append(None if d is None else len(range(*k.indices(d))))
    return TensorShape(out)


def _bind_strided_slice(op, ctx):
    key = op.get_attr("key")
    return lambda x: x[key]


def _bind_strided_slice_grad(op, ctx):
    key = op.get_attr("key")

    return lambda x, grad: scatter_into_zeros(x.shape, grad, key)


registry.register_op("StridedSlice", _bind_strided_slice, rows=batch_rows.strided_slice)
registry.register_op("StridedSliceGrad", _bind_strided_slice_grad, rows=batch_rows.strided_slice_grad)


@registry.register_gradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x = op.inputs[0]
    return [make_op("StridedSliceGrad", [x, grad], grad.dtype, x.shape, attrs={"key": op.get_attr("key")})]


@registry.register_gradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    return [None, make_op("StridedSlice", [grad], grad.dtype, op.inputs[1].shape,
                          attrs={"key": op.get_attr("key")})]


def getitem(tensor: Tensor, key: Any) -> Tensor:
    """`tensor[key]` with ints, slices, `...` and tf.newaxis (numpy basic indexing); indices and slice
    bounds may be scalar tensors known only at run time."""
    if _has_run_time_part(key):
        return _dynamic_getitem(tensor, key)
    k = strided_slice_key(key)
    return make_op("StridedSlice", [tensor], tensor.dtype, sliced_shape(tensor.shape, k),
                   "strided_slice", {"key": k})


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _has_run_time_part(key: Any) -> bool:
    def dynamic(part: Any) -> bool:
        return isinstance(part, Tensor) and constant_value(part) is None
    items = key if isinstance(key, tuple) else (key,)
    return any(dynamic(i.start) or dynamic(i.stop) or dynamic(i.step) if isinstance(i, _slice_obj) else dynamic(i)
               for i in items)


def _dynamic_getitem(tensor: Tensor, key: Any) -> Tensor:
    """`tensor[key]` with parts known only at run time, as TF's _slice_helper builds it: begin, end and
    strides vectors (packed from ints and scalar tensors) and the five masks of a StridedSlice."""
    begin, end, strides, masks = [], [], [], [0] * 5
    for k, item in enumerate(key if isinstance(key, tuple) else (key,)):
        if isinstance(item, _slice_obj):
            begin.append(0 if item.start is None else item.start)
            end.append(0 if item.stop is None else item.stop)
            strides.append(1 if item.step is None else item.step)
            masks[0] |= (item.start is None) << k
            masks[1] |= (item.stop is None) << k
        elif item is Ellipsis or item is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks[2 if item is Ellipsis else 3] |= 1 << k
        else:
            if isinstance(item, Tensor) and (item.shape.ndims not in (0, None) or not item.dtype.is_integer):
                raise TypeError(f"Only scalar integer tensors can index a tensor, got {item}")
            begin.append(item)
            end.append(item + 1)
            strides.append(1)
            masks[4] |= 1 << k
    from tftk.ops.array_ops import pack_shape_list
    b, e, st = (convert_to_tensor(pack_shape_list(v), dtype=dtypes.int32) for v in (begin, end, strides))
    return strided_slice_at_run_time(tensor, b, e, st, tuple(masks), "strided_slice")


def run_time_key(masks: tuple, name: str):
    """A function (begin, end, strides) -> the numpy key of a StridedSlice whose bounds are known at run time."""
    return lambda b, e, s: masked_key([int(v) for v in b], [int(v) for v in e], [int(v) for v in s], *masks,
                                      op_name=name)


def strided_slice_at_run_time(x: Tensor, begin: Tensor, end: Tensor, strides: Tensor, masks: tuple,
                              name: str | None = None) -> Tensor:
    """StridedSliceDynamic(x, begin, end, strides): TF's StridedSlice with the bounds as tensors. Its
    static shape keeps the rank and the axes the bounds cannot change (whole, masked ones)."""
    return make_op("StridedSliceDynamic", [x, begin, end, strides], x.dtype,
                   _run_time_slice_shape(x.shape, begin, end, strides, masks), name, {"masks": tuple(masks)})


def _run_time_slice_shape(shape: TensorShape, begin: Tensor, end: Tensor, strides: Tensor, masks: tuple) -> TensorShape:
    """The static shape of a slice with run-time bounds: the rank, and the size of each axis whose
    begin (or begin mask), end (or end mask) and stride are all known at build time."""
    known = [known_entries(v) for v in (begin, end, strides)]
    if shape.ndims is None or any(k is None for k in known):
        return TensorShape(None)
    b, e, st = known
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    stand_in = masked_key([v or 0 for v in b], [v or 0 for v in e], [v or 1 for v in st], *masks)
    dims = list(sliced_shape(shape, stand_in).as_tuple())
    real = sum(1 for k in range(len(b)) if not (ellipsis_mask | new_axis_mask) >> k & 1)
    exact = []  # per output axis: whether its size is known
    for k in range(len(b)):
        if ellipsis_mask >> k & 1:
            exact += [True] * (shape.ndims - real)
        elif new_axis_mask >> k & 1:
            exact.append(True)
        elif not shrink_mask >> k & 1:
            exact.append((b[k] is not None or begin_mask >> k & 1) and (e[k] is not None or end_mask >> k & 1)
                         and st[k] is not None)
    exact += [True] * (len(dims) - len(exact))
    return TensorShape([d if ok else None for d, ok in zip(dims, exact)])


def _bind_strided_slice_dynamic(op, ctx):
    key = run_time_key(op.get_attr("masks"), op.name)
    return lambda x, b, e, s: x[key(b, e, s)]


def _bind_strided_slice_grad_dynamic(op, ctx):
    key = run_time_key(op.get_attr("masks"), op.name)
    return lambda shape, b, e, s, grad: scatter_into_zeros(tuple(int(d) for d in shape), grad, key(b, e, s))


registry.register_op("StridedSliceDynamic", _bind_strided_slice_dynamic)
registry.register_op("StridedSliceGradDynamic", _bind_strided_slice_grad_dynamic)
registry.not_differentiable("StridedSliceGradDynamic")


@registry.register_gradient("StridedSliceDynamic")
def _strided_slice_dynamic_grad(op, grad):
    """TF's: StridedSliceGrad(Shape(x), begin, end, strides, grad) with the same masks."""
    from tftk.ops.math_ops import shape_of
    x, begin, end, strides = op.inputs
    return [make_op("StridedSliceGradDynamic", [shape_of(x), begin, end, strides, grad], grad.dtype, x.shape, None,
                    {"masks": op.get_attr("masks")}), None, None, None]




# ---- slice / strided_slice -------------------------------------------------------------------

def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001
    """`size[i]` elements from `begin[i]` on each axis (`size[i] == -1`: to the end)."""
    x = convert_to_tensor(input_)
    op_name = name or "Slice"
    from tftk.ops.array_ops import pack_shape_list  # array_ops builds on this module
    begin, size = pack_shape_list(begin), pack_shape_list(size)
    b_static = constant_value(begin) if isinstance(begin, Tensor) else np.asarray(begin)
    s_static = constant_value(size) if isinstance(size, Tensor) else np.asarray(size)
    rank = x.shape.ndims
    if b_static is not None and s_static is not None:
        b, s = np.atleast_1d(b_static).tolist(), np.atleast_1d(s_static).tolist()
        if len(b) != len(s) or rank is not None and len(b) != rank:
            raise ValueError(f"Slice '{op_name}': begin {b} and size {s} must both have one entry per "
                             f"dimension of the input (shape {x.shape})")
        dims = x.shape.as_tuple() or (None,) * len(b)
        for i, (bi, si, d) in enumerate(zip(b, s, dims)):
            if bi < 0 or si < -1 or d is not None and (bi > d or si != -1 and bi + si > d):
                raise ValueError(f"Slice '{op_name}': begin[{i}] = {bi}, size[{i}] = {si} do not fit "
                                 f"dimension {i} of size {d}")
        key = tuple(_slice_obj(bi, None if si == -1 else bi + si) for bi, si in zip(b, s))
        shape = TensorShape([(d - bi if d is not None else None) if si == -1 else si
                             for bi, si, d in zip(b, s, dims)])
        return make_op("StridedSlice", [x], x.dtype, shape, name or "Slice", {"key": key})
    begin_t = convert_to_tensor(begin, dtype=dtypes.int32)
    size_t = convert_to_tensor(size, dtype=dtypes.int32)
    if s_static is not None:  # a constant size gives the static shape, wherever the window begins
        shape = TensorShape([None if si == -1 else si for si in np.atleast_1d(s_static).tolist()])
    else:
        shape = TensorShape(None) if rank is None else TensorShape([None] * rank)
    return make_op("Slice", [x, begin_t, size_t], x.dtype, shape, name)




def _dynamic_key(x: np.ndarray, begin: np.ndarray, size: np.ndarray) -> tuple:
    if begin.shape != (x.ndim,) or size.shape != (x.ndim,):
        raise ValueError(f"begin and size must have {x.ndim} entries, got {begin.tolist()}, {size.tolist()}")
    key = []
    for i, (b, s) in enumerate(zip(begin.tolist(), size.tolist())):
        end = x.shape[i] if s == -1 else b + s
        if b < 0 or end > x.shape[i] or end < b:
            raise ValueError(f"Expected begin[{i}] = {b} and size[{i}] = {s} to fit dimension of size {x.shape[i]}")
        key.append(_slice_obj(b, end))
    return tuple(key)


def _slice_kernel(x, begin, size):
    return x[_dynamic_key(x, begin, size)]


def _slice_grad_kernel(x, begin, size, grad):
    return scatter_into_zeros(x.shape, grad, _dynamic_key(x, begin, size))


registry.register_op("Slice", lambda op, ctx: _slice_kernel)
registry.register_op("SliceGrad", lambda op, ctx: _slice_grad_kernel)
registry.not_differentiable("SliceGrad")


@registry.register_gradient("Slice")
def _slice_grad(op, grad):
    x, begin, size = op.inputs
    return [make_op("SliceGrad", [x, begin, size, grad], grad.dtype, x.shape), None, None]


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: str | None = None) -> Tensor:
    """TF's function form of `x[begin:end:strides]` with its five bit masks (static bounds)."""
    x = convert_to_tensor(input_)
    op_name = name or "StridedSlice"
    b = static_ints(begin, "begin", op_name)
    e = static_ints(end, "end", op_name)
    s = static_ints(strides, "strides", op_name) if strides is not None else [1] * len(b)
    key = masked_key(b, e, s, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask, op_name)
    return getitem(x, key) if name is None else _named_getitem(x, key, name)


def masked_key(b: list[int], e: list[int], s: list[int], begin_mask: int = 0, end_mask: int = 0,
               ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0,
               op_name: str = "StridedSlice") -> tuple:
    """TF's StridedSlice operands (begin, end, strides and the five bit masks) as a numpy key."""
    if not len(b) == len(e) == len(s):
        raise ValueError(f"{op_name}: begin, end and strides must have the same length, got {b}, {e}, {s}")
    key: list[Any] = []
    for i, (bi, ei, si) in enumerate(zip(b, e, s)):
        if si == 0:
            raise ValueError(f"{op_name}: strides[{i}] must be non-zero")
        bit = 1 << i
        if ellipsis_mask & bit:
            key.append(Ellipsis)
        elif new_axis_mask & bit:
            key.append(None)
        elif shrink_axis_mask & bit:
            key.append(bi)
        else:
            key.append(_slice_obj(None if begin_mask & bit else bi, None if end_mask & bit else ei, si))
    return tuple(key)


def _named_getitem(x: Tensor, key: tuple, name: str) -> Tensor:
    with name_scope(name):
        return getitem(x, key)


def _bind_boolean_mask(op, ctx):
    axis = op.get_attr("axis")
    lead = (_slice_obj(None),) * axis

    def kernel(x, mask):
        if x.shape[axis:axis + mask.ndim] != mask.shape:
            raise ValueError(f"mask shape {mask.shape} must match dimensions {axis}.. of {x.shape}")
        return x[lead + (mask,)]
    return kernel


def _bind_boolean_mask_grad(op, ctx):
    lead = (_slice_obj(None),) * op.get_attr("axis")

    return lambda x, mask, grad: scatter_into_zeros(x.shape, grad, lead + (mask,))


registry.register_op("BooleanMask", _bind_boolean_mask)
registry.register_op("BooleanMaskGrad", _bind_boolean_mask_grad)
registry.not_differentiable("BooleanMaskGrad")


@registry.register_gradient("BooleanMask")
def _boolean_mask_grad(op, grad):
    x, mask = op.inputs
    return [make_op("BooleanMaskGrad", [x, mask, grad], grad.dtype, x.shape,
                    attrs={"axis": op.get_attr("axis")}), None]


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: int | None = None) -> Tensor:
    """The entries of `tensor` where the boolean `mask` (over dims axis.. axis+k) is true."""
    x, m = convert_to_tensor(tensor), convert_to_tensor(mask)
    if m.dtype is not dtypes.bool:
        raise TypeError(f"boolean_mask: mask must be bool, got {m.dtype.name}")
    axis = 0 if axis is None else axis
    xd, md = x.shape.as_tuple(), m.shape.as_tuple()
    if md is None:
        raise ValueError("boolean_mask: the rank of mask must be known when the graph is built")
    if not md:
        raise ValueError("boolean_mask: mask cannot be a scalar")
    shape = TensorShape(None)
    if xd is not None:
        if axis + len(md) > len(xd) or not TensorShape(xd[axis:axis + len(md)]).is_compatible_with(m.shape):
            raise ValueError(f"Shapes {x.shape} and {m.shape} are incompatible for '{name}' (mask must "
                             f"match dimensions {axis}..{axis + len(md) - 1} of the tensor)")
        shape = TensorShape(xd[:axis] + (None,) + xd[axis + len(md):])
    return make_op("BooleanMask", [x, m], x.dtype, shape, name, {"axis": axis})


