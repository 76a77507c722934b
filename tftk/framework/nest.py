"""Nested structures of values (lists, tuples, namedtuples, dicts) flattened to leaves and rebuilt.

One walker for every place that takes nested values: `Session.run` fetches, `tf.cond` branch
results, `tf.while_loop` loop variables. As in TF's `nest`, dict values are visited in sorted key
order (insertion order when the keys do not sort) and rebuilt dicts keep the original's key
order; strings are leaves. With `expand_composites`, an object offering `_fetch_parts()` ->
(parts, rebuild) (SparseTensor, IndexedSlices) is flattened into its parts and rebuilt by
`rebuild(*part_values)`.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Iterator, Sequence

__all__ = ["flatten", "pack_sequence_as"]


def _keys(mapping: collections.abc.Mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError:  # keys of mixed types: visit them as given
        return list(mapping)


_LEAF, _MAPPING, _NAMEDTUPLE, _SEQUENCE, _COMPOSITE = range(5)
_kinds: dict[type, int] = {}  # decided once per type: Session.run walks its fetches every step


def _kind(value: Any, expand_composites: bool) -> int:
    cls = type(value)
    kind = _kinds.get(cls)
    if kind is None:
        if issubclass(cls, collections.abc.Mapping):
            kind = _MAPPING
        elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
            kind = _NAMEDTUPLE
        elif issubclass(cls, (list, tuple)):
            kind = _SEQUENCE
        elif hasattr(cls, "_fetch_parts"):
            kind = _COMPOSITE
        else:
            kind = _LEAF
        _kinds[cls] = kind
    return _LEAF if kind == _COMPOSITE and not expand_composites else kind


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of `structure`, depth first."""
    kind = _kind(structure, expand_composites)
    if kind == _LEAF:
        return [structure]
    if kind == _MAPPING:
        children = [structure[k] for k in _keys(structure)]
    elif kind == _COMPOSITE:
        children = structure._fetch_parts()[0]
    else:
        children = structure
    return [leaf for child in children for leaf in flatten(child, expand_composites)]


def pack_sequence_as(structure: Any, leaves: Sequence, expand_composites: bool = False) -> Any:
    """`structure` with its leaves replaced, in order, by `leaves`."""
    it = iter(leaves)
    result = _build(structure, it, expand_composites)
    if next(it, _END) is not _END:
        raise ValueError(f"Too many leaves for the structure {structure!r}")
    return result


_END = object()


def _build(structure: Any, leaves: Iterator, expand_composites: bool) -> Any:
    kind = _kind(structure, expand_composites)
    if kind == _LEAF:
        try:
            return next(leaves)
        except StopIteration:
            raise ValueError(f"Too few leaves for the structure (ran out at {structure!r})") from None
    if kind == _MAPPING:
        built = {k: _build(structure[k], leaves, expand_composites) for k in _keys(structure)}
        return type(structure)((k, built[k]) for k in structure)
    if kind == _NAMEDTUPLE:
        return type(structure)(*[_build(s, leaves, expand_composites) for s in structure])
    if kind == _SEQUENCE:
        return type(structure)(_build(s, leaves, expand_composites) for s in structure)
    parts, rebuild = structure._fetch_parts()
    return rebuild(*[_build(p, leaves, expand_composites) for p in parts])
