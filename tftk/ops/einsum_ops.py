"""Tensor contractions: einsum, tensordot, cross.

`einsum` runs numpy's einsum; its gradient with respect to each operand is another einsum of the
output gradient with the other operands (broadcast back over letters only that operand has).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from tftk.framework import registry
from tftk.framework.ops import Tensor, convert_to_tensor, name_scope
from tftk.framework.tensor_shape import TensorShape
from tftk.ops import array_ops, math_ops
from tftk.ops.gather_ops import gather
from tftk.ops.reduction_ops import reduce_prod
from tftk.ops.op_builder import binary_inputs, make_op
from tftk.ops.tile_pad_ops import broadcast_to

__all__ = ["einsum", "tensordot", "cross"]


# ---- tensordot ----------------------------------------------------------------------------------

def _tensordot_axes(axes: Any, ra: int, rb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > min(ra, rb):
            raise ValueError(f"tensordot: axes={axes} must be in [0, {min(ra, rb)}]")
        return list(range(ra - axes, ra)), list(range(axes))
    pair = list(axes)
    if len(pair) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes = [int(v) % ra for v in np.atleast_1d(pair[0])]
    b_axes = [int(v) % rb for v in np.atleast_1d(pair[1])]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: different number of contraction axes {a_axes} and {b_axes}")
    return a_axes, b_axes


def _tensordot_operand(x: Tensor, axes: list[int], flipped: bool) -> tuple[Tensor, list, Tensor | None]:
    """x transposed and reshaped to a matrix ([free, contracted], or [contracted, free] when flipped),
    with its free dimensions (None where unknown at build time; and as a run-time tensor when some
    are), as TF builds it: no Transpose when
    the axes are already in order, no Reshape when x already has the matrix's shape; dimensions
    unknown at build time are read with Shape + Gather at run time."""
    dims = x.shape.as_list()
    free = [i for i in range(len(dims)) if i not in axes]
    perm = axes + free if flipped else free + axes
    free_dims = [dims[i] for i in free]
    if x.shape.is_fully_defined():
        prod_free, prod_axes = int(np.prod(free_dims)), int(np.prod([dims[i] for i in axes]))
        new_shape = [prod_axes, prod_free] if flipped else [prod_free, prod_axes]
        moved = array_ops.transpose(x, perm) if perm != list(range(len(dims))) else x
        return (moved if moved.shape.as_list() == new_shape else array_ops.reshape(moved, new_shape)), free_dims, None
    shape = array_ops.shape(x)
    axes_t = convert_to_tensor(np.asarray(axes, np.int32), name="axes")
    free_t = convert_to_tensor(np.asarray(free, np.int32), name="free")
    free_shape = gather(shape, free_t)
    prod_free, prod_axes = reduce_prod(free_shape), reduce_prod(gather(shape, axes_t))
    new_shape = array_ops.stack([prod_axes, prod_free] if flipped else [prod_free, prod_axes])
    return array_ops.reshape(array_ops.transpose(x, perm), new_shape), free_dims, free_shape


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the paired `axes` of a and b: transpose + reshape + matmul, as TF builds it (the
    result is the MatMul itself when it already has the result's shape, else a Reshape named after
    the scope); dimensions unknown at build time are taken at run time (the ranks must be known)."""
    with name_scope(name, "Tensordot", [a, b]) as scope:
        a, b = binary_inputs(a, b, "Tensordot")
        if a.shape.ndims is None or b.shape.ndims is None:
            raise ValueError(f"tensordot needs operands of known rank, got shapes {a.shape} and {b.shape}")
        da, db = a.shape.as_list(), b.shape.as_list()
        a_axes, b_axes = _tensordot_axes(axes, len(da), len(db))
        for i, j in zip(a_axes, b_axes):
            if da[i] is not None and db[j] is not None and da[i] != db[j]:
                raise ValueError(f"tensordot: dimension {i} of a ({da[i]}) does not match dimension {j} "
                                 f"of b ({db[j]}) for shapes {a.shape} and {b.shape}")
        a2, a_free, a_free_t = _tensordot_operand(a, a_axes, flipped=False)
        b2, b_free, b_free_t = _tensordot_operand(b, b_axes, flipped=True)
        product = math_ops.matmul(a2, b2)
        out_dims = a_free + b_free
        if None not in out_dims:
            return product if product.shape.as_list() == out_dims else array_ops.reshape(product, out_dims, name=scope)
        free_shape = array_ops.concat([a_free_t if a_free_t is not None else np.asarray(a_free, np.int32),
                                       b_free_t if b_free_t is not None else np.asarray(b_free, np.int32)], 0)
        result = array_ops.reshape(product, free_shape, name=scope)
        result.set_shape(out_dims)
        return result


# ---- einsum ---------------------------------------------------------------------------------------

def _explicit_equation(equation: str, ranks: list[int | None]) -> tuple[list[str], str]:
    """Operand and output subscripts with `...` spelled out as letters and the output made explicit."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"einsum: equation {equation!r} names {len(terms)} operands, got {len(ranks)}")
    spare = [c for c in string.ascii_uppercase if c not in equation]
    ellipsis_rank = 0
    for term, rank in zip(terms, ranks):
        if "..." in term:
            if rank is None:
                raise ValueError("einsum: operands with '...' need a known rank")
            ellipsis_rank = max(ellipsis_rank, rank - len(term.replace("...", "")))
    fill = "".join(spare[:ellipsis_rank])
    out_terms = []
    for term, rank in zip(terms, ranks):
        if "..." in term:
            n = rank - len(term.replace("...", ""))
            term = term.replace("...", fill[ellipsis_rank - n:])
        if not term.isalpha() and term:
            raise ValueError(f"einsum: invalid subscripts {term!r} in {equation!r}")
        if rank is not None and len(term) != rank:
            raise ValueError(f"einsum: subscripts {term!r} do not match an operand of rank {rank}")
        out_terms.append(term)
    if arrow:
        out = rhs.replace("...", fill)
    else:
        letters = "".join(out_terms)
        out = fill + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in fill))
    return out_terms, out


registry.register_op("Einsum", lambda op, ctx: lambda *xs: np.einsum(op.get_attr("equation"), *xs))


@registry.register_gradient("Einsum")
def _einsum_grad(op, grad):
    terms, out = op.get_attr("terms"), op.get_attr("output")
    grads = []
    for k, (term, x) in enumerate(zip(terms, op.inputs)):
        if len(set(term)) != len(term):
            raise ValueError(f"einsum gradient: repeated subscripts in {term!r} are not supported")
        others = [(t, op.inputs[i]) for i, t in enumerate(terms) if i != k]
        available = set(out).union(*[set(t) for t, _ in others])
        kept = "".join(c for c in term if c in available)
        g = _einsum([out] + [t for t, _ in others], kept, [grad] + [v for _, v in others])
        if kept != term:
            dims = x.shape.as_list()
            g = array_ops.reshape(g, [d if c in kept else 1 for c, d in zip(term, dims)])
            g = broadcast_to(g, dims)
        grads.append(g)
    return grads


def _einsum(terms: list[str], out: str, inputs: list[Tensor], name: str | None = None) -> Tensor:
    sizes: dict[str, Any] = {}
    for term, x in zip(terms, inputs):
        dims = x.shape.as_list() if x.shape.ndims is not None else [None] * len(term)
        for c, d in zip(term, dims):
            if d is not None and sizes.get(c) not in (None, d, 1) and d != 1:
                raise ValueError(f"einsum: dimension {c!r} has sizes {sizes[c]} and {d}")
            if d is not None and (sizes.get(c) in (None, 1)):
                sizes[c] = d
    equation = ",".join(terms) + "->" + out
    return make_op("Einsum", inputs, inputs[0].dtype, TensorShape([sizes.get(c) for c in out]), name,
                   {"equation": equation, "terms": terms, "output": out})


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Sum of products over the subscripts of `equation` (numpy's einsum; '...' and implicit output)."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"einsum: unexpected keyword arguments {sorted(kwargs)}")
    tensors = [convert_to_tensor(x) for x in inputs]
    if not tensors:
        raise ValueError("einsum: needs at least one operand")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise TypeError(f"einsum: operands must share a dtype, got {[t.dtype.name for t in tensors]}")
    terms, out = _explicit_equation(equation, [t.shape.ndims for t in tensors])
    return _einsum(terms, out, tensors, name)


# ---- cross ----------------------------------------------------------------------------------------

registry.register_op("Cross", lambda op, ctx: lambda a, b: np.cross(a, b))


@registry.register_gradient("Cross")
def _cross_grad(op, grad):
    a, b = op.inputs
    return [cross(b, grad), cross(grad, a)]


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """Pairwise cross products of 3-vectors along the last dimension."""
    x, y = binary_inputs(a, b, "Cross")
    if not x.shape.is_compatible_with(y.shape):
        raise ValueError(f"Cross '{name or 'Cross'}': a and b must have the same shape, got {x.shape} and {y.shape}")
    shape = x.shape.merge_with(y.shape)
    if shape.ndims is not None and (shape.ndims == 0 or shape.as_list()[-1] not in (None, 3)):
        raise ValueError(f"Cross '{name or 'Cross'}': the last dimension must be 3, got shape {shape}")
    return make_op("Cross", [x, y], x.dtype, shape, name)
