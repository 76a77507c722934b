"""Shape-changing and structural ops: reshape, stack/unstack, concat/split, squeeze, fills."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tftk.framework import batch_rows, dtypes, registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope, register_auto_packing
from tftk.framework.tensor_shape import TensorShape
from tftk.ops.constant_value import constant_value, known_entries, static_axis
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = [
    "identity", "stop_gradient", "shape", "size", "rank", "reshape", "stack", "concat", "squeeze",
    "expand_dims", "transpose", "zeros", "ones", "fill", "zeros_like", "ones_like",
    "split", "unstack", "shape_n",
]


registry.register_op("Identity", inline=registry.Inline.ALIAS, static_value=lambda t: constant_value(t.op.inputs[0]))
registry.register_op("StopGradient", inline=registry.Inline.ALIAS,
                     static_value=lambda t: constant_value(t.op.inputs[0]))
registry.not_differentiable("StopGradient")


@registry.register_gradient("Identity")
def _identity_grad(op, grad):
    return [grad]


def identity(input: Any, name: str | None = None) -> Tensor:
    """Return a tensor with the same value (a new node; useful with control_dependencies)."""
    x = convert_to_tensor(input)
    return make_op("Identity", [x], x.dtype, x.shape, name)


def stop_gradient(input: Any, name: str | None = None) -> Tensor:
    """Identity in the forward pass; `gradients()` treats it as a constant."""
    x = convert_to_tensor(input)
    return make_op("StopGradient", [x], x.dtype, x.shape, name)


# ---- shape queries --------------------------------------------------------------------------

def _bind_shape(op, ctx):
    npd = op.outputs[0].dtype.as_numpy_dtype
    return lambda x: np.asarray(x.shape, dtype=npd)


def _static_shape(t: Tensor) -> np.ndarray | None:
    shape = t.op.inputs[0].shape
    return np.asarray(shape.as_list(), dtype=t.dtype.as_numpy_dtype) if shape.is_fully_defined() else None


def _static_size(t: Tensor) -> np.ndarray | None:
    shape = t.op.inputs[0].shape
    return np.asarray(shape.num_elements(), dtype=t.dtype.as_numpy_dtype) if shape.is_fully_defined() else None


def _static_rank(t: Tensor) -> np.ndarray | None:
    ndims = t.op.inputs[0].shape.ndims
    return None if ndims is None else np.asarray(ndims, dtype=np.int32)


registry.register_op("Shape", _bind_shape, static_value=_static_shape, rows=batch_rows.shape_of)
registry.register_op("Size", lambda op, ctx: _bind_size(op.outputs[0].dtype.as_numpy_dtype),
                     static_value=_static_size, rows=batch_rows.count)
registry.register_op("Rank", lambda op, ctx: lambda x: np.asarray(x.ndim, dtype=np.int32),
                     static_value=_static_rank)
registry.not_differentiable("Shape", "Size", "Rank")


def _bind_size(npd):
    return lambda x: np.asarray(x.size, dtype=npd)


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """The dynamic shape of `input` as a 1-D tensor (get_shape() is the static one)."""
    x = convert_to_tensor(input)
    return make_op("Shape", [x], dtypes.as_dtype(out_type), [x.shape.ndims], name)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    x = convert_to_tensor(input)
    return make_op("Size", [x], dtypes.as_dtype(out_type), [], name)


def rank(input: Any, name: str | None = None) -> Tensor:
    x = convert_to_tensor(input)
    return make_op("Rank", [x], dtypes.int32, [], name)


# ---- reshape --------------------------------------------------------------------------------

def _reshaped_static(in_shape: TensorShape, target: list[int]) -> TensorShape:
    if target.count(-1) > 1:
        raise ValueError(f"Reshape can only infer one dimension (-1), got {target}")
    if -1 not in target:
        if in_shape.is_fully_defined() and in_shape.num_elements() != int(np.prod(target)):
            raise ValueError(f"Cannot reshape a tensor with {in_shape.num_elements()} elements to "
                             f"shape {target} ({int(np.prod(target))} elements)")
        return TensorShape(target)
    known = int(np.prod([d for d in target if d != -1]))
    if in_shape.is_fully_defined():
        total = in_shape.num_elements()
        if known == 0 or total % known:
            raise ValueError(f"Cannot reshape a tensor with {total} elements to shape {target}")
        return TensorShape([total // known if d == -1 else d for d in target])
    return TensorShape([None if d == -1 else d for d in target])


def _bind_reshape(op, ctx):
    target = op.get_attr("shape")
    return lambda x: np.reshape(x, target)


registry.register_op("Reshape", _bind_reshape, rows=batch_rows.reshape)
registry.register_op("ReshapeDynamic", lambda op, ctx: lambda x, s: np.reshape(x, tuple(s.tolist())))
registry.register_op("ReshapeLike", lambda op, ctx: lambda x, s: np.reshape(x, tuple(s.tolist())),
                     rows=batch_rows.reshape_like)


def pack_shape_list(shape: Any) -> Any:
    """A shape given as a list holding tensors ([n, 2]) packed into one int32 tensor, as TF auto-packs it;
    any other shape as it is."""
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        return convert_to_tensor(shape, dtype=dtypes.int32)
    return shape


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Reshape; one dimension may be -1 and is inferred from the size."""
    x = convert_to_tensor(tensor)
    shape = pack_shape_list(shape)
    static = constant_value(shape) if isinstance(shape, Tensor) else np.asarray(shape)
    if static is None:
        s = convert_to_tensor(shape, dtype=dtypes.int32)
        return make_op("ReshapeDynamic", [x, s], x.dtype, _one_unknown_inferred(partial_shape(s), x.shape), name)
    target = [int(d) for d in np.atleast_1d(static).tolist()] if np.ndim(static) else []
    out_shape = _reshaped_static(x.shape, target)
    return make_op("Reshape", [x], x.dtype, out_shape, name, {"shape": tuple(target)})


def partial_shape(shape_tensor: Tensor) -> TensorShape:
    """What is known at build time of the shape a 1-D shape tensor will hold: a `Shape` op's input's
    static shape, else as many unknown dimensions as the vector has entries."""
    if shape_tensor.op.type == "Shape":
        return shape_tensor.op.inputs[0].shape
    if shape_tensor.op.type == "Pack" and all(t.shape.ndims == 0 for t in shape_tensor.op.inputs):
        known = known_entries(shape_tensor)  # [n, 2]: (?, 2), as TF infers it
        return TensorShape([None if v is None or v < 0 else v for v in known])
    if shape_tensor.op.type == "ConcatV2" and shape_tensor.shape.ndims == 1:  # pieces of a shape, each known or not
        parts = [partial_shape(t) if (v := constant_value(t)) is None else TensorShape([int(d) for d in v])
                 for t in shape_tensor.op.inputs]
        if all(p.ndims is not None for p in parts):
            return TensorShape([d for p in parts for d in p.as_tuple()])
    dims = shape_tensor.shape.as_tuple()
    return TensorShape([None] * dims[0]) if dims is not None and len(dims) == 1 and dims[0] is not None \
        else TensorShape(None)


def _one_unknown_inferred(target: TensorShape, source: TensorShape) -> TensorShape:
    """A reshape's partly known target with its single unknown dimension worked out from the input's
    element count, when that is known (TF's shape inference does the same)."""
    dims = target.as_tuple()
    if dims is None or not source.is_fully_defined() or [d is None for d in dims].count(True) != 1:
        return target
    known = int(np.prod([d for d in dims if d is not None], dtype=np.int64))
    total = int(np.prod(source.as_tuple(), dtype=np.int64))
    if known == 0 or total % known:
        return target
    return TensorShape([total // known if d is None else d for d in dims])


def reshape_like(x: Tensor, like: Tensor) -> Tensor:
    """`x` reshaped to the runtime shape of `like` (static when `like`'s shape is known)."""
    if like.shape.is_fully_defined():
        if x.shape.as_tuple() == like.shape.as_tuple():
            return x
        return reshape(x, like.shape.as_list())
    from tftk.ops.math_ops import shape_of
    return make_op("ReshapeLike", [x, shape_of(like)], x.dtype, like.shape)


@registry.register_gradient("Reshape")
def _reshape_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])]


@registry.register_gradient("ReshapeDynamic")
def _reshape_dynamic_grad(op, grad):
    return [reshape_like(grad, op.inputs[0]), None]


@registry.register_gradient("ReshapeLike")
def _reshape_like_grad(op, grad):
    return [reshape_like(grad, op.inputs[0]), None]


# ---- squeeze / expand_dims / transpose ------------------------------------------------------

def _bind_squeeze(op, ctx):
    axes = op.get_attr("squeeze_dims")
    return lambda x: np.squeeze(x, axis=axes)


registry.register_op("Squeeze", _bind_squeeze, rows=batch_rows.along_axis("squeeze_dims"))


@registry.register_gradient("Squeeze")
def _squeeze_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])]


def squeeze(input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Tensor:
    """Remove size-1 dims (all of them, or those in `axis`)."""
    x = convert_to_tensor(input)
    axis = squeeze_dims if axis is None else axis
    dims = x.shape.as_tuple()
    if axis is not None:
        axes = [int(a) for a in np.atleast_1d(axis)]
        if dims is not None:
            axes = [a % len(dims) for a in axes]
            for a in axes:
                if dims[a] is not None and dims[a] != 1:
                    raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                                     f"{dims[a]} for '{name or 'Squeeze'}' with input shape {x.shape}")
        axes_t = tuple(sorted(axes))
        out = TensorShape(None) if dims is None else TensorShape(
            [d for i, d in enumerate(dims) if i not in axes_t])
    else:
        if dims is None or any(d is None for d in dims):
            axes_t = None
            out = TensorShape(None)
        else:
            axes_t = tuple(i for i, d in enumerate(dims) if d == 1)
            out = TensorShape([d for d in dims if d != 1])
    return make_op("Squeeze", [x], x.dtype, out, name, {"squeeze_dims": axes_t})


def expand_dims(input: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """Insert a size-1 dimension at `axis` (negative counts from the end of the result)."""
    x = convert_to_tensor(input)
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("expand_dims needs `axis`")
    axis = int(constant_value(axis)) if isinstance(axis, Tensor) else int(axis)
    dims = x.shape.as_tuple()
    out = TensorShape(None)
    if dims is not None:
        rank_out = len(dims) + 1
        if not -rank_out <= axis < rank_out:
            raise ValueError(f"expand_dims axis {axis} is out of range for a rank-{len(dims)} input")
        axis %= rank_out
        out = TensorShape(list(dims[:axis]) + [1] + list(dims[axis:]))
    return make_op("ExpandDims", [x], x.dtype, out, name, {"axis": axis})


registry.register_op("ExpandDims", lambda op, ctx: _bind_expand(op.get_attr("axis")), rows=batch_rows.expand_dims)


def _bind_expand(axis):
    return lambda x: np.expand_dims(x, axis)


@registry.register_gradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return [reshape_like(grad, op.inputs[0])]


def _bind_transpose(op, ctx):
    perm = op.get_attr("perm")
    return lambda x: np.transpose(x, perm)


registry.register_op("Transpose", _bind_transpose)


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permute dimensions (reverse them when `perm` is None)."""
    x = convert_to_tensor(a)
    dims = x.shape.as_tuple()
    if perm is None:
        if dims is None:
            raise ValueError("transpose without perm needs a known rank")
        perm = list(range(len(dims)))[::-1]
    perm = tuple(int(p) for p in (constant_value(perm) if isinstance(perm, Tensor) else perm))
    if dims is not None and sorted(perm) != list(range(len(dims))):
        raise ValueError(f"transpose perm {list(perm)} is not a permutation of a rank-{len(dims)} tensor")
    out = TensorShape(None) if dims is None else TensorShape([dims[p] for p in perm])
    return make_op("Transpose", [x], x.dtype, out, name, {"perm": perm})


@registry.register_gradient("Transpose")
def _transpose_grad(op, grad):
    inverse = tuple(int(i) for i in np.argsort(op.get_attr("perm")))
    return [make_op("Transpose", [grad], grad.dtype, op.inputs[0].shape, attrs={"perm": inverse})]


# ---- stack / concat ---------------------------------------------------------------------------

def _bind_pack(op, ctx):
    axis = op.get_attr("axis")
    return lambda *xs: np.stack(xs, axis=axis)


def _static_pack(t: Tensor) -> np.ndarray | None:
    parts = [constant_value(p) for p in t.op.inputs]
    return np.stack(parts, axis=t.op.get_attr("axis")) if all(p is not None for p in parts) else None


registry.register_op("Pack", _bind_pack, static_value=_static_pack, rows=batch_rows.pack)


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Stack rank-R tensors into one rank-(R+1) tensor along `axis`."""
    tensors = [convert_to_tensor(v) for v in values]
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    first = tensors[0]
    tensors = [first] + [convert_to_tensor(v, dtype=first.dtype) for v in tensors[1:]]
    shape = first.shape
    for t in tensors[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"Shapes of all inputs must match: values[0].shape = {first.shape} != "
                             f"values[{tensors.index(t)}].shape = {t.shape}")
        shape = shape.merge_with(t.shape)
    dims = shape.as_tuple()
    if dims is None:
        out = TensorShape(None)
    else:
        r = len(dims) + 1
        if not -r <= axis < r:
            raise ValueError(f"axis = {axis} not in [{-r}, {r})")
        axis = axis % r
        out = TensorShape(list(dims[:axis]) + [len(tensors)] + list(dims[axis:]))
    return make_op("Pack", tensors, first.dtype, out, name, {"axis": axis, "N": len(tensors)})


register_auto_packing(stack)  # convert_to_tensor([t1, t2]) stacks them


@registry.register_gradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=len(op.inputs), axis=op.get_attr("axis"))


def _bind_concat(op, ctx):
    axis = op.get_attr("axis")
    return lambda *xs: np.concatenate(xs, axis=axis)


registry.register_op("ConcatV2", _bind_concat, copies_inputs=True, rows=batch_rows.along_axis())


def concat(values: Sequence[Any], axis: Any, name: str = "concat") -> Tensor:
    """Join tensors along an existing dimension."""
    tensors = [convert_to_tensor(v) for v in values]
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    tensors = [tensors[0]] + [convert_to_tensor(v, dtype=tensors[0].dtype) for v in tensors[1:]]
    if len(tensors) == 1:
        return identity(tensors[0], name=name)
    axis = int(constant_value(axis)) if isinstance(axis, Tensor) else int(axis)
    ranks = {t.shape.ndims for t in tensors} - {None}
    if len(ranks) > 1:
        raise ValueError(f"Shape must be rank {min(ranks)} but is rank {max(ranks)} for '{name}'")
    if ranks:
        r = ranks.pop()
        if not -r <= axis < r:
            raise ValueError(f"ConcatOp : Expected concatenating dimensions in the range [{-r}, {r}), "
                             f"but got {axis}")
        axis %= r
        out = [None] * r
        for i in range(r):
            col = [t.shape.as_tuple()[i] for t in tensors if t.shape.ndims is not None]
            if i == axis:
                out[i] = None if any(c is None for c in col) or len(col) < len(tensors) else sum(col)
            else:
                known = {c for c in col if c is not None}
                if len(known) > 1:
                    raise ValueError(f"Dimension {i} in both shapes must be equal, but are "
                                     f"{sorted(known)} for '{name}' (ConcatV2)")
                out[i] = known.pop() if known else None
        shape = TensorShape(out)
    else:
        shape = TensorShape(None)
    return make_op("ConcatV2", tensors, tensors[0].dtype, shape, name, {"axis": axis, "N": len(tensors)})


def _bind_concat_grad(op, ctx):
    axis, index = op.get_attr("axis"), op.get_attr("index")

    def kernel(grad, *inputs):
        start = sum(x.shape[axis] for x in inputs[:index])
        sl = [slice(None)] * grad.ndim
        sl[axis] = slice(start, start + inputs[index].shape[axis])
        return grad[tuple(sl)]
    return kernel


registry.register_op("ConcatGradSlice", _bind_concat_grad, rows=batch_rows.along_axis())
registry.not_differentiable("ConcatGradSlice")


@registry.register_gradient("ConcatV2")
def _concat_grad(op, grad):
    axis = op.get_attr("axis")
    return [make_op("ConcatGradSlice", [grad] + list(op.inputs), grad.dtype, x.shape,
                    attrs={"axis": axis, "index": i}) for i, x in enumerate(op.inputs)]


# ---- fills --------------------------------------------------------------------------------------

def _bind_fill(op, ctx):
    return lambda dims, value: np.full(tuple(dims.tolist()), value, dtype=value.dtype)


registry.register_op("Fill", _bind_fill, rows=batch_rows.fill)


@registry.register_gradient("Fill")
def _fill_grad(op, grad):
    from tftk.ops.reduction_ops import reduce_sum
    return [None, reduce_sum(grad)]


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value`."""
    v = convert_to_tensor(value)
    dims = pack_shape_list(dims)
    static = constant_value(dims)
    d = convert_to_tensor(dims, dtype=dtypes.int32)
    shape = partial_shape(d) if static is None else TensorShape(static.tolist())
    return make_op("Fill", [d, v], v.dtype, shape, name)


_SMALL_CONSTANT = 1000  # TF1's _constant_if_small: fewer elements than this become a splat Const


def _constant_fill(shape: Any, dtype: Any, value: float, name: str) -> Tensor:
    """What TF1's `zeros`/`ones` build: a splat Const when small and static, else a `Fill`.

    A large static shape becomes `name/shape_as_tensor` + `name/Const` + `Fill` named `name`, so
    the graph (and every GraphDef, event file and .meta written from it) stays O(1) in the size.
    """
    from tftk.ops.constant_op import constant
    dtype = dtypes.as_dtype(dtype)
    shape = pack_shape_list(shape)
    static = constant_value(shape) if isinstance(shape, Tensor) else np.asarray(shape)
    dims = None
    if static is not None and np.ndim(static) <= 1:
        dims = [int(d) for d in np.atleast_1d(static).tolist()] if np.ndim(static) else []
        if int(np.prod(dims, dtype=np.int64)) < _SMALL_CONSTANT:
            return constant(value, dtype=dtype, shape=dims, name=name)
    with name_scope(None, name, [shape] if isinstance(shape, Tensor) else []) as scope:
        if dims is not None:
            shape = constant(np.asarray(dims, np.int32), name="shape_as_tensor")
        return fill(shape, constant(value, dtype=dtype), name=scope)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str = "zeros") -> Tensor:
    return _constant_fill(shape, dtype, 0, name)


def ones(shape: Any, dtype: Any = dtypes.float32, name: str = "ones") -> Tensor:
    return _constant_fill(shape, dtype, 1, name)


registry.register_op("ZerosLike", lambda op, ctx: np.zeros_like, rows=batch_rows.ones_like)
registry.register_op("OnesLike", lambda op, ctx: np.ones_like, rows=batch_rows.ones_like)
registry.not_differentiable("ZerosLike", "OnesLike")


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Zeros of `tensor`'s shape, built as TF builds them: with a static shape (and `optimize`) a
    constant that does not depend on `tensor` (so a placeholder need not be fed), else `ZerosLike`;
    the result is named after the `zeros_like` scope."""
    return _filled_like(tensor, dtype, name, optimize, 0)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Ones of `tensor`'s shape, built as TF builds them (see `zeros_like`)."""
    return _filled_like(tensor, dtype, name, optimize, 1)


def _filled_like(tensor: Any, dtype: Any, name: str | None, optimize: bool, value: int) -> Tensor:
    default = "ones_like" if value else "zeros_like"
    with name_scope(name, default, [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        out_dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)
        if out_dtype is dtypes.string:  # no splat constant: the like-op fills in b""
            if value:
                raise TypeError("ones_like: a tensor of strings has no 'one'")
            return make_op("ZerosLike", [x], x.dtype, x.shape, scope)
        if optimize and x.shape.is_fully_defined():
            return _constant_fill(x.shape.as_list(), out_dtype, value, scope)
        if out_dtype is not x.dtype:
            out = _constant_fill(shape(x), out_dtype, value, scope)
            out.set_shape(x.shape)
            return out
        return make_op("OnesLike" if value else "ZerosLike", [x], x.dtype, x.shape, scope)


# ---- split / unstack -------------------------------------------------------------------------

def _bind_split(op, ctx):
    axis, sizes, num = op.get_attr("axis"), op.get_attr("sizes"), op.get_attr("num")
    if sizes is None:
        def split_even(x):
            if x.shape[axis] % num:
                raise ValueError(f"Number of ways to split should evenly divide the split dimension, "
                                 f"but got split_dim {axis} (size = {x.shape[axis]}) and num_split {num}")
            return tuple(np.split(x, num, axis=axis))
        return split_even

    def split_sizes(x):
        known = sum(v for v in sizes if v != -1)
        full = [x.shape[axis] - known if v == -1 else v for v in sizes]
        if sum(full) != x.shape[axis] or min(full) < 0:
            raise ValueError(f"Determined shape must either match input shape along split_dim exactly "
                             f"if fully specified, or be less than the size of the input along split_dim "
                             f"if not fully specified. Got: {sizes} for dimension of size {x.shape[axis]}")
        return tuple(np.split(x, np.cumsum(full)[:-1], axis=axis))
    return split_sizes


registry.register_op("Split", _bind_split, rows=batch_rows.along_axis())


@registry.register_gradient("Split")
def _split_grad(op, *grads):
    return [concat(list(grads), op.get_attr("axis"))]


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
    """Split along `axis` into `num_or_size_splits` equal parts, or parts of the given sizes."""
    x = convert_to_tensor(value)
    dims = x.shape.as_tuple()
    axis = static_axis(axis, None if dims is None else len(dims), "Split")
    d = None if dims is None else dims[axis]
    static = constant_value(num_or_size_splits) if isinstance(num_or_size_splits, Tensor) \
        else np.asarray(num_or_size_splits)
    if static is None:
        raise ValueError("Split: num_or_size_splits must be known when the graph is built")
    if np.ndim(static) == 0:
        n, sizes = int(static), None
        if n <= 0 or d is not None and d % n:
            raise ValueError(f"Dimension {axis} of size {d} cannot be split into {n} equal parts for "
                             f"'{name}' (Split) with input shape {x.shape}")
        parts = [None if d is None else d // n] * n
    else:
        sizes = tuple(int(v) for v in static.tolist())
        if num is not None and num != len(sizes):
            raise ValueError(f"Split: num={num} does not match {len(sizes)} sizes")
        if sizes.count(-1) > 1:
            raise ValueError(f"Split '{name}': at most one size may be -1, got {list(sizes)}")
        known = sum(v for v in sizes if v != -1)
        if d is not None and (known > d or -1 not in sizes and known != d):
            raise ValueError(f"Split '{name}': sizes {list(sizes)} do not add up to dimension {axis} "
                             f"of size {d} (input shape {x.shape})")
        n = len(sizes)
        parts = [(None if d is None else d - known) if v == -1 else v for v in sizes]
    specs = []
    for p in parts:
        shape = TensorShape(None) if dims is None else TensorShape(dims[:axis] + (p,) + dims[axis + 1:])
        specs.append((x.dtype, shape))
    op = make_multi_op("Split", [x], specs, name, {"axis": axis, "sizes": sizes, "num": n})
    return op.outputs


def _bind_unpack(op, ctx):
    axis, num = op.get_attr("axis"), op.get_attr("num")

    def kernel(x):
        if x.shape[axis] != num:
            raise ValueError(f"Input dimension {axis} has size {x.shape[axis]}, expected {num}")
        return tuple(np.take(x, i, axis=axis) for i in np.arange(num))
    return kernel


registry.register_op("Unpack", _bind_unpack, rows=batch_rows.along_axis())


@registry.register_gradient("Unpack")
def _unpack_grad(op, *grads):
    return [stack(list(grads), axis=op.get_attr("axis"))]


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Split a rank-R tensor into `num` rank-(R-1) tensors along `axis`."""
    x = convert_to_tensor(value)
    dims = x.shape.as_tuple()
    if dims is None:
        if num is None:
            raise ValueError(f"Cannot infer num from shape {x.shape}")
        rank_known = False
    else:
        rank_known = True
    axis = static_axis(axis, len(dims) if rank_known else None, "Unpack")
    if rank_known:
        if num is None:
            num = dims[axis]
            if num is None:
                raise ValueError(f"Cannot infer num from shape {x.shape}")
        elif dims[axis] is not None and dims[axis] != num:
            raise ValueError(f"Unpack '{name}': num={num} but dimension {axis} has size {dims[axis]}")
        out_shape = TensorShape(dims[:axis] + dims[axis + 1:])
    else:
        out_shape = TensorShape(None)
    op = make_multi_op("Unpack", [x], [(x.dtype, out_shape)] * num, name, {"axis": axis, "num": num})
    return op.outputs


def shape_n(input: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:
    """The dynamic shapes of several tensors."""
    with name_scope(name, "ShapeN", input):
        return [shape(t, out_type=out_type) for t in input]


