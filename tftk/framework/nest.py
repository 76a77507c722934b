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


def _children(value: Any, expand_composites: bool) -> list | None:
    """The sub-structures of `value` in visiting order, or None for a leaf."""
    if isinstance(value, collections.abc.Mapping):
        return [value[k] for k in _keys(value)]
    if isinstance(value, (list, tuple)):
        return list(value)
    if expand_composites and hasattr(value, "_fetch_parts"):
        return list(value._fetch_parts()[0])
    return None


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of `structure`, depth first."""
    children = _children(structure, expand_composites)
    if children is None:
        return [structure]
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
    if isinstance(structure, collections.abc.Mapping):
        built = {k: _build(structure[k], leaves, expand_composites) for k in _keys(structure)}
        return type(structure)((k, built[k]) for k in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*[_build(s, leaves, expand_composites) for s in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)(_build(s, leaves, expand_composites) for s in structure)
    if expand_composites and hasattr(structure, "_fetch_parts"):
        parts, rebuild = structure._fetch_parts()
        return rebuild(*[_build(p, leaves, expand_composites) for p in parts])
    try:
        return next(leaves)
    except StopIteration:
        raise ValueError(f"Too few leaves for the structure (ran out at {structure!r})") from None
