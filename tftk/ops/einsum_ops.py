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
from tftk.ops.op_builder import binary_inputs, make_op
from tftk.ops.tile_pad_ops import broadcast_to

__all__ = ["einsum", "tensordot", "cross"]


# ---- tensordot ----------------------------------------------------------------------------------

def _tensordot_axes(axes: Any, ra: int, rb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        if axes < 0 or axes > min(ra, rb):
            raise ValueError(f"tensordot: axes={axes} must be in [0, {min(ra, rb)}]")
        return list(np.arange(ra - axes, ra)), list(np.arange(axes))
    pair = list(axes)
    if len(pair) != 2:
        raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}")
    a_axes = [int(v) % ra for v in np.atleast_1d(pair[0])]
    b_axes = [int(v) % rb for v in np.atleast_1d(pair[1])]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"tensordot: different number of contraction axes {a_axes} and {b_axes}")
    return a_axes, b_axes


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sum over the paired `axes` of a and b (transpose + reshape + matmul; static shapes)."""
    with name_scope(name, "Tensordot", [a, b]):
        a, b = binary_inputs(a, b, "Tensordot")
        if not a.shape.is_fully_defined() or not b.shape.is_fully_defined():
            raise ValueError(f"tensordot needs fully known static shapes, got {a.shape} and {b.shape}")
        da, db = a.shape.as_list(), b.shape.as_list()
        a_axes, b_axes = _tensordot_axes(axes, len(da), len(db))
        for i, j in zip(a_axes, b_axes):
            if da[i] != db[j]:
                raise ValueError(f"tensordot: dimension {i} of a ({da[i]}) does not match dimension {j} "
                                 f"of b ({db[j]}) for shapes {a.shape} and {b.shape}")
        a_free = [i for i in np.arange(len(da)) if i not in a_axes]
        b_free = [i for i in np.arange(len(db)) if i not in b_axes]
        k = int(np.prod([da[i] for i in a_axes]))
        a2 = array_ops.reshape(array_ops.transpose(a, a_free + a_axes),
                               [int(np.prod([da[i] for i in a_free])), k])
        b2 = array_ops.reshape(array_ops.transpose(b, b_axes + b_free),
                               [k, int(np.prod([db[i] for i in b_free]))])
        return array_ops.reshape(math_ops.matmul(a2, b2), [da[i] for i in a_free] + [db[i] for i in b_free])





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
