"""Element structures of `tf.data`: nested tuples and dicts of tensors, flattened to lists.

tf.data's nesting differs from the loop helpers': a Python *list* is a value (it becomes one
tensor), only tuples (namedtuples included) and dicts are structure. Dict keys flatten in sorted
order, as TF's `nest` does.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tftk.framework import dtypes
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape

__all__ = ["flatten", "pack", "map_structure", "to_tensors", "Spec", "most_specific", "flatten_up_to",
           "same_structure", "element_components", "pack_element", "group_components", "sparse_specs",
           "leaf_type_and_shape"]

Spec = tuple  # (DType, TensorShape) of one component of an element


def flatten(structure: Any) -> list:
    """The leaves of a tuple/dict nest, dict keys in sorted order."""
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    return [structure]


def pack(structure: Any, leaves: Sequence) -> Any:
    """Rebuild `structure` with `leaves` (in `flatten` order) in place of its leaves."""
    it = iter(leaves)

    def build(s: Any) -> Any:
        if isinstance(s, tuple):
            items = [build(x) for x in s]
            return type(s)(*items) if hasattr(s, "_fields") else tuple(items)
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s) if type(s) is not dict else {k: built[k] for k in s}
        return next(it)

    return build(structure)


def map_structure(fn: Callable, structure: Any) -> Any:
    return pack(structure, [fn(leaf) for leaf in flatten(structure)])


def to_tensors(value: Any, what: str) -> Any:
    """`value` with every leaf converted to a Tensor (a TypeError names `what` for non-tensors)."""
    def convert(leaf: Any) -> Tensor:
        if is_sparse(leaf):
            return leaf
        if leaf is None:
            raise TypeError(f"{what}: None is not a tensor; return tensors (or tuples/dicts of them)")
        try:
            return convert_to_tensor(leaf)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what}: cannot convert {leaf!r} to a tensor ({exc})") from None
    return map_structure(convert, value)


def specs_of(tensors: Sequence[Tensor]) -> list[Spec]:
    return [(t.dtype, t.shape) for t in tensors]


def most_specific(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both `a` and `b` are instances of (unknown where they differ)."""
    da, db = a.as_tuple(), b.as_tuple()
    if da is None or db is None or len(da) != len(db):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(da, db)])




def flatten_up_to(structure: Any, value: Any) -> list:
    """Flatten `value` only as deep as `structure` goes (its leaves may be lists, e.g. shapes)."""
    if isinstance(structure, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(structure):
            raise ValueError(f"{value!r} does not match the structure {structure!r}")
        return [leaf for s, v in zip(structure, value) for leaf in flatten_up_to(s, v)]
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise ValueError(f"{value!r} does not match the structure {structure!r}")
        return [leaf for k in sorted(structure) for leaf in flatten_up_to(structure[k], value[k])]
    return [value]


def same_structure(a: Any, b: Any) -> bool:
    try:
        flatten_up_to(a, b)
    except ValueError:
        return False
    return len(flatten(a)) == len(flatten(b))


# ---- SparseTensor leaves: three components (indices, values, dense_shape) each -------------------

def is_sparse(leaf: Any) -> bool:
    return hasattr(leaf, "_fetch_parts") and hasattr(leaf, "dense_shape")


def element_components(value: Any) -> tuple[list, list[bool]]:
    """The flat components of an element nest and, per leaf, whether it is a SparseTensor."""
    components, sparse = [], []
    for leaf in flatten(value):
        if is_sparse(leaf):
            components += [leaf.indices, leaf.values, leaf.dense_shape]
            sparse.append(True)
        else:
            components.append(leaf)
            sparse.append(False)
    return components, sparse


def group_components(sparse: Sequence[bool], components: Sequence) -> list:
    """Per leaf: its one component, or the (indices, values, dense_shape) triple of a sparse leaf."""
    groups, i = [], 0
    for flag in sparse:
        groups.append(tuple(components[i:i + 3]) if flag else components[i])
        i += 3 if flag else 1
    return groups


def pack_element(structure: Any, sparse: Sequence[bool], components: Sequence) -> Any:
    """The element nest with SparseTensors rebuilt from their component tensors."""
    from tftk.framework.sparse_tensor import SparseTensor
    leaves = [SparseTensor(*g) if flag else g for g, flag in zip(group_components(sparse, components), sparse)]
    return pack(structure, leaves)


def sparse_specs(dtype: dtypes.DType, shape: TensorShape) -> list[Spec]:
    """Component specs of a SparseTensor leaf of dense `shape` (its rank must be known)."""
    rank = shape.ndims
    return [(dtypes.int64, TensorShape([None, rank])), (dtype, TensorShape([None])),
            (dtypes.int64, TensorShape([rank]))]


def leaf_type_and_shape(spec_group: Any, sparse: bool) -> tuple[dtypes.DType, TensorShape]:
    """(output_types, output_shapes) entry of one leaf from its component spec(s)."""
    if not sparse:
        return spec_group
    (_, index_shape), (dtype, _), (_, shape_shape) = spec_group
    rank = shape_shape.as_list()[0] if shape_shape.ndims == 1 else None
    return dtype, TensorShape(None if rank is None else [None] * rank)
