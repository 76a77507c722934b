"""The `tf.nest` namespace: nested lists, tuples, namedtuples and dicts, walked as TF's `nest` walks them."""

from __future__ import annotations

from typing import Any, Callable

from tftk.framework.nest import _LEAF, _MAPPING, _keys, _kind, flatten, pack_sequence_as

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]


def is_nested(seq: Any) -> bool:
    """Whether `seq` is a structure (list, tuple, namedtuple, dict) rather than a leaf."""
    return _kind(seq, False) != _LEAF


def _shape_of(structure: Any, check_types: bool, path: str = "") -> Any:
    """A comparable outline of `structure`: leaves become None."""
    kind = _kind(structure, False)
    if kind == _LEAF:
        return None
    kind_of = type(structure) if check_types else kind
    if kind == _MAPPING:
        return (kind_of, tuple((k, _shape_of(structure[k], check_types)) for k in _keys(structure)))
    return (kind_of, tuple(_shape_of(s, check_types) for s in structure))


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    """ValueError when the two structures nest differently, TypeError when their sequence types differ."""
    n1, n2 = len(flatten(nest1)), len(flatten(nest2))
    if n1 != n2:
        raise ValueError(f"The two structures don't have the same number of elements.\n\nFirst structure "
                         f"({n1} elements): {nest1}\n\nSecond structure ({n2} elements): {nest2}")
    if _shape_of(nest1, False) != _shape_of(nest2, False):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                         f"{nest1}\n\nSecond structure: {nest2}")
    if check_types and _shape_of(nest1, True) != _shape_of(nest2, True):
        raise TypeError(f"The two structures don't have the same sequence type. First structure: {nest1}, "
                        f"second structure: {nest2}")


def map_structure(func: Callable, *structure: Any, **kwargs: Any) -> Any:
    """`func` applied to the leaves at the same places of structures that nest alike, in the first's shape."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`, not {sorted(kwargs)}")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    leaves = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*args) for args in zip(*leaves)])
