"""`TensorShape`: a static shape whose rank and dimensions may be unknown (None)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

__all__ = ["TensorShape", "Dimension", "as_shape", "unknown_shape"]


class Dimension:
    """One dimension of a static shape; `value` is an int or None (unknown)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = None if value is None else int(value)
        if self.value is not None and self.value < 0:
            raise ValueError(f"Dimension {value} must be >= 0")

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __eq__(self, other: Any) -> Any:
        other = other.value if isinstance(other, Dimension) else other
        if self.value is None or other is None:
            return None
        return self.value == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Dimension({self.value})"

    def __str__(self) -> str:
        return "?" if self.value is None else str(self.value)


class TensorShape:
    """A possibly partial shape: `dims` is None for unknown rank, else a tuple of int|None."""

    __slots__ = ("_dims",)

    def __init__(self, dims: Iterable[Any] | None):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            if isinstance(dims, (int, Dimension)):
                dims = [dims]
            self._dims = tuple(_dim_value(d) for d in dims)

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> tuple | None:
        """The dims as a tuple of int|None, or None for unknown rank (internal fast access)."""
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def with_rank(self, rank: int) -> "TensorShape":
        return self.merge_with(unknown_shape(rank))

    def concatenate(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[Dimension]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def __eq__(self, other: Any) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return f"TensorShape({self.as_list() if self._dims is not None else None})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({'?' if self._dims[0] is None else self._dims[0]},)"
        return "(" + ", ".join("?" if d is None else str(d) for d in self._dims) + ")"


def _dim_value(d: Any) -> int | None:
    if isinstance(d, Dimension):
        return d.value
    if d is None:
        return None
    value = int(d)
    if value < 0:
        if value == -1:
            return None
        raise ValueError(f"Dimension {d} must be >= 0")
    return value


def as_shape(shape: Any) -> TensorShape:
    """Convert a list/tuple/int/TensorShape/None to a TensorShape."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def dimension_value(dimension: Any) -> int | None:
    """A Dimension's value (None when unknown); ints and None unchanged (`tf.dimension_value`)."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape: Any, index: int) -> Dimension:
    """The Dimension at `index` of `shape`; unknown when the rank is (`tf.dimension_at_index`)."""
    shape = as_shape(shape)
    return Dimension(None) if shape.ndims is None else shape.dims[index]
