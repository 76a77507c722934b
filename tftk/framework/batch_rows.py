"""Which values of a step are rows of its batch: the facts a plan needs to run a step's examples in
slices, one slice per thread (`tftk.client.rows`).

A training step's work is mostly per example: a conv layer's output row i (axis 0) depends on input
row i only, and so do its gradients, until the weight gradients add the examples up. Run on two
slices of the batch, one per core, such a step ends in one join where the per-example work of the
two halves meets (LeNet: two halves side by side in 5.3 ms against 7.9 for the whole batch on one
core), where running each op on two threads joins at every op.

Each op type may say, in its registration (`registry.register_op(..., rows=rule)`), what kind of
value each output is given its inputs' kinds: ``rule(op, kinds) -> tuple of output kinds`` or None
where the op cannot run on a slice (the plan then runs it once, on the whole batch). A rule is asked
through `outputs`, which answers for it where every input is `SAME` (so is every output). The kinds:

- `SAME`: the value of the whole step, equal in every slice (weights, constants, a count).
- `ROWS`: axis 0 runs over the batch's examples, row i made from example i alone (and `SAME` values).
- `PARTIAL`: a sum over the examples: the slices' values add up to the whole step's (a weight gradient).
- `SHAPE`: the shape of a `ROWS` value: element 0 is the slice's row count, the rest the whole step's.
- `LOCAL`: rows that hold positions inside the slice (a max-pool's flat arg-max indices): only steps of
  the same slice may read them.

Two more kinds are what a rule returns for a kernel whose value on a slice is off by the slice's share
`f` of the batch: `MEAN` (a mean over the examples: times `f` it is `PARTIAL`) and `COUNT` (a count of
the examples' elements: divided by `f` it is `SAME`, the whole step's count a mean's gradient divides by).
"""

from __future__ import annotations

import enum
from typing import Any, Sequence

__all__ = ["Rows", "Rule", "SAME", "ROWS", "PARTIAL", "SHAPE", "LOCAL", "MEAN", "COUNT", "elementwise", "per_example", "per_example_sum", "per_slice_positions", "pool_gradient",
           "to_shape", "shape_of", "count", "ones_like", "reduction", "expand_reduced",
           "count_of_reduction", "reshape", "reshape_like", "broadcast_like", "sum_to_shape", "sum_to_shape_of",
           "expand_dims", "along_axis", "strided_slice", "strided_slice_grad", "matmul_slice", "pack", "fill",
           "additive", "scaling", "accumulate", "matmul", "batch_source", "random", "outputs"]


class Rows(str, enum.Enum):
    """What a value of a step is, seen from one slice of its batch (module docstring)."""

    SAME = "same"
    ROWS = "rows"
    PARTIAL = "partial"
    SHAPE = "shape"
    LOCAL = "local"
    MEAN = "mean"
    COUNT = "count"


SAME, ROWS, PARTIAL, SHAPE, LOCAL, MEAN, COUNT = (Rows.SAME, Rows.ROWS, Rows.PARTIAL, Rows.SHAPE, Rows.LOCAL,
                                                 Rows.MEAN, Rows.COUNT)
Rule = Any  # Callable[[op, tuple[Rows, ...]], tuple[Rows, ...] | None]


def _rank(tensor: Any) -> int | None:
    return tensor.shape.ndims


def _dims(tensor: Any) -> list | None:
    ndims = tensor.shape.ndims
    return None if ndims is None else tensor.shape.as_list()


def _row_size(tensor: Any) -> int | None:
    """The elements of one row (axis 0) of `tensor`, when its static shape says."""
    dims = _dims(tensor)
    if not dims or any(d is None for d in dims[1:]):
        return None
    size = 1
    for d in dims[1:]:
        size *= d
    return size


def elementwise(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """An element-wise op with broadcasting (Relu, Add, BiasAdd, ReluGrad, ...): rows where each row
    input has the output's rank (its axis 0 is the output's) and each `SAME` input has a smaller rank
    or one row (it broadcasts along the batch)."""
    rank = _rank(op.outputs[0])
    if not rank or any(k not in (SAME, ROWS) for k in kinds):
        return None
    for tensor, kind in zip(op.inputs, kinds):
        dims = _dims(tensor)
        if dims is None:
            return None
        if kind is ROWS and len(dims) != rank:
            return None
        if kind is SAME and len(dims) == rank and dims[0] != 1:
            return None
    return (ROWS,) * len(op.outputs)


def per_example(*rows: int, outputs: Sequence[Rows] | None = None) -> Rule:
    """Rows from rows and weights (a convolution of the batch's images, a loss per example, an LSTM
    cell's step): where the inputs at the positions `rows` are rows and the others `SAME`, every output
    rows, or the kinds `outputs` lists (an LSTM cell's gradient: its peephole weights' are sums)."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        if not all(k is (ROWS if i in rows else SAME) for i, k in enumerate(kinds)):
            return None
        return tuple(outputs) if outputs is not None else (ROWS,) * len(op.outputs)
    return rule


def per_example_sum(*rows: int) -> Rule:
    """A sum over the examples of rows (a filter's or a bias's gradient): `PARTIAL` where the inputs at
    the positions `rows` are rows and the others `SAME`."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        return (PARTIAL,) if all(k is (ROWS if i in rows else SAME) for i, k in enumerate(kinds)) else None
    return rule


def per_slice_positions(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A max pool: its pooled rows, and arg-maxes that index the slice's own input (`LOCAL`)."""
    return (ROWS,) + (LOCAL,) * (len(op.outputs) - 1) if kinds[0] is ROWS else None


def pool_gradient(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A max pool's gradient (dy, arg-maxes, input[, ReLU output]): rows from rows and the slice's own
    arg-maxes."""
    return (ROWS,) if kinds[1] is LOCAL and all(k is ROWS for i, k in enumerate(kinds) if i != 1) else None


def to_shape(*weights: int) -> Rule:
    """An input gradient from (input shape, ..., output gradient) (a convolution's, an average pool's):
    rows where the shape is a rows value's, the inputs at the `weights` positions `SAME` and the
    others rows."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        fits = kinds[0] is SHAPE and all(k is (SAME if i in weights else ROWS) for i, k in enumerate(kinds) if i)
        return (ROWS,) if fits else None
    return rule


def shape_of(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Shape: a rows value's shape is `SHAPE`; any other value's is the same in every slice."""
    return (SHAPE,) if kinds[0] is ROWS else (SAME,) if kinds[0] is not LOCAL else None


def count(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Size: a rows value's element count grows with the slice (`COUNT`)."""
    return (COUNT,) if kinds[0] is ROWS else (SAME,) if kinds[0] is not LOCAL else None


def ones_like(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """OnesLike, ZerosLike: values that depend on the input's shape alone."""
    kind = kinds[0]
    return (ROWS,) if kind is ROWS else (SAME,) if kind in (SAME, PARTIAL, SHAPE) else None


def reduction(mean: bool = False, linear: bool = True) -> Rule:
    """A reduction over the op's `axis` attr (None: all): rows where it keeps axis 0; over the examples,
    a sum is `PARTIAL`, a float mean `MEAN`, anything else (max, product) whole-batch only. A sum or a
    mean of a `PARTIAL` value is one too (`linear`)."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        kind = kinds[0]
        axes = op.get_attr("axis")
        if kind is PARTIAL:
            return (PARTIAL,) if linear else None
        if kind is not ROWS:
            return None
        if axes is not None and 0 not in axes:
            return (ROWS,)
        if not linear:
            return None
        if mean:
            return (MEAN,) if op.outputs[0].dtype.is_floating else None
        return (PARTIAL,)
    return rule


def expand_reduced(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A reduced value's axes put back (size 1): linear, and rows stay rows unless axis 0 is put back."""
    kind = kinds[0]
    if kind in (SAME, PARTIAL):
        return (kind,)
    axes = op.get_attr("axis")
    return (ROWS,) if kind is ROWS and axes is not None and 0 not in axes else None


def count_of_reduction(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """ReducedCount(x, reduced): the elements a reduction of x adds per output. Over the examples that
    grows with the slice (`COUNT`); over the other axes of rows it does not."""
    x, reduced = kinds
    if x is ROWS and reduced is ROWS:
        return (SAME,)
    return (COUNT,) if x is ROWS and reduced in (PARTIAL, MEAN) else None


def reshape(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Reshape to the static `shape` attr: rows where it starts with -1 and keeps the row size."""
    target = list(op.get_attr("shape"))
    if kinds[0] is not ROWS or not target or target[0] != -1 or -1 in target[1:]:
        return None
    size = 1
    for d in target[1:]:
        size *= d
    return (ROWS,) if _row_size(op.inputs[0]) == size else None


def reshape_like(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """ReshapeLike(x, shape): rows to a rows value's shape, where the static row sizes agree."""
    if kinds[0] is ROWS and kinds[1] is SHAPE:
        size = _row_size(op.inputs[0])
        return (ROWS,) if size is not None and size == _row_size(op.outputs[0]) else None
    return None


def broadcast_like(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """BroadcastLike(x, shape): to a rows value's shape, x a same-rank row value or a `SAME` value that
    broadcasts along the batch."""
    x, shape = kinds
    if shape is not SHAPE:
        return None
    dims, length = _dims(op.inputs[0]), op.inputs[1].shape.as_list()
    if dims is None or not length or length[0] is None:
        return None
    if x is ROWS:
        return (ROWS,) if len(dims) == length[0] else None
    if x is SAME:
        return (ROWS,) if len(dims) < length[0] or dims[0] == 1 else None
    return None


def sum_to_shape(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """SumToShape(x) to the static `shape` attr: rows summed over the batch (`PARTIAL`) where the shape
    has a lower rank or one row; linear."""
    kind = kinds[0]
    if kind in (SAME, PARTIAL):
        return (kind,)
    shape, rank = list(op.get_attr("shape")), _rank(op.inputs[0])
    if kind is ROWS and rank is not None and (len(shape) < rank or shape[0] == 1):
        return (PARTIAL,)
    return None


def sum_to_shape_of(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """SumToShapeOf(x, shape): to a rows value's shape of x's rank, rows; to a `SAME` shape of a lower
    rank or one row, `PARTIAL`."""
    x, shape = kinds
    length, rank = op.inputs[1].shape.as_list(), _rank(op.inputs[0])
    if x is not ROWS or not length or length[0] is None or rank is None:
        return None
    if shape is SHAPE:
        return (ROWS,) if length[0] == rank else None
    if shape is SAME:
        dims = _dims(op.outputs[0])
        return (PARTIAL,) if length[0] < rank or (dims and dims[0] == 1) else None
    return None


def expand_dims(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """ExpandDims by its `axis` attr: rows unless the new axis is axis 0."""
    kind = kinds[0]
    rank = _rank(op.outputs[0])
    if kind is not ROWS or rank is None:
        return None
    return (ROWS,) if op.get_attr("axis") % rank != 0 else None


def along_axis(attr: str = "axis", extra_rank: int = 0, weights: Sequence[int] = ()) -> Rule:
    """An op working along the axis (or axes) its `attr` names, every input rows but the `weights`
    positions (`SAME`): rows where no named axis is axis 0. The axes count in the input's rank plus
    `extra_rank` (Pack's new axis: 1); a missing or empty attr (Squeeze of every size-1 axis) may touch
    axis 0."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        if any(k is not (SAME if i in weights else ROWS) for i, k in enumerate(kinds)):
            return None
        rank, axes = _rank(op.inputs[0]), op.get_attr(attr)
        if rank is None or axes is None:
            return None
        axes = list(axes) if isinstance(axes, (list, tuple)) else [axes]
        if not axes or any(int(a) % (rank + extra_rank) == 0 for a in axes):
            return None
        return (ROWS,) * len(op.outputs)
    return rule


def _keeps_rows(key: Sequence[Any], rank: int | None) -> bool:
    """Whether a basic-indexing `key` (ints, slices, None, Ellipsis) keeps axis 0 whole and in place."""
    if not key:
        return True
    first = key[0]
    if first is Ellipsis:
        real = sum(1 for k in key if k is not None and k is not Ellipsis)
        return rank is not None and real < rank
    return isinstance(first, slice) and first.start in (None, 0) and first.stop is None and first.step in (None, 1)


def strided_slice(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """x[key]: rows where the key keeps axis 0 whole; of a rows value's shape, element 0 is the slice's
    row count (`SHAPE`), a slice starting past it the same in every slice."""
    kind, key = kinds[0], op.get_attr("key")
    if kind is ROWS:
        return (ROWS,) if _keeps_rows(key, _rank(op.inputs[0])) else None
    if kind is SHAPE and len(key) == 1:
        if key[0] == 0:
            return (SHAPE,)
        if isinstance(key[0], int) and key[0] > 0 or isinstance(key[0], slice) and (key[0].start or 0) > 0 \
                and (key[0].step or 1) > 0:
            return (SAME,)
    return None


def strided_slice_grad(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """The gradient of x[key] (x, grad): rows where the key keeps axis 0 whole."""
    fits = kinds[0] is ROWS and kinds[1] is ROWS and _keeps_rows(op.get_attr("key"), _rank(op.inputs[0]))
    return (ROWS,) if fits else None


def matmul_slice(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A product read through x[key] (a plan's fusion): the product's kind, where the key keeps rows."""
    kinds = matmul(op, kinds)
    if kinds == (ROWS,) and not _keeps_rows(op.consumer.get_attr("key"), 2):
        return None
    return kinds


def pack(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Pack (tf.stack): rows stacked on another axis stay rows; a row count then `SAME` sizes stacked on
    axis 0 make a rows value's shape (`[tf.shape(x)[0], 128]`, an RNN's zero state)."""
    packed = along_axis(extra_rank=1)(op, kinds)
    if packed is not None:
        return packed
    if op.get_attr("axis") == 0 and kinds and kinds[0] is SHAPE and _rank(op.inputs[0]) == 0 \
            and all(k is SAME for k in kinds[1:]):
        return (SHAPE,)
    return None


def fill(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Fill(dims, value): to a rows value's shape, rows."""
    dims, value = kinds
    return (ROWS,) if dims is SHAPE and value is SAME else None


def additive(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """Add, Sub, AddN: element-wise on rows (`elementwise`); a sum of partial sums of one shape is one."""
    if kinds and all(k is PARTIAL for k in kinds) and len({_dims_key(t) for t in op.inputs}) == 1 \
            and _dims_key(op.inputs[0]) == _dims_key(op.outputs[0]):
        return (PARTIAL,)
    return elementwise(op, kinds)


def scaling(*linear: int) -> Rule:
    """Mul, RealDiv, Neg: element-wise on rows; a partial sum times (or over) `SAME` values is one,
    where the partial sum is at one of the `linear` positions and keeps its shape."""

    def rule(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
        partial = [i for i, k in enumerate(kinds) if k is PARTIAL]
        if len(partial) == 1 and partial[0] in linear and all(k is SAME for i, k in enumerate(kinds) if i != partial[0]) \
                and _dims_key(op.inputs[partial[0]]) == _dims_key(op.outputs[0]):
            return (PARTIAL,)
        return elementwise(op, kinds)
    return rule


def _dims_key(tensor: Any) -> tuple | None:
    dims = _dims(tensor)
    return None if dims is None or None in dims else tuple(dims)


def accumulate(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A plan's partial sum adding a product into its running sum (sum, a, b): a partial sum plus rows
    transposed times rows (a weight's gradient) is one."""
    total, a, b = kinds
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    return (PARTIAL,) if total is PARTIAL and a is ROWS and b is ROWS and ta and not tb else None


def matmul(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A 2-D product: rows @ weights is rows; rows transposed @ rows (a weight's gradient) is `PARTIAL`."""
    a, b = kinds
    if _rank(op.inputs[0]) != 2 or _rank(op.inputs[1]) != 2:
        return None
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if a is ROWS and b is SAME and not ta:
        return (ROWS,)
    if a is ROWS and b is ROWS and ta and not tb:
        return (PARTIAL,)
    return None


def batch_source(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...]:
    """An input pipeline's next batch (IteratorGetNext): each output whose first dimension the graph
    leaves open is rows of the step's batch, as a feed of `[None, ...]` is (the plan checks at run time
    that all of them, and the feeds, have one row count). Rows from inputs that are not: the one rule
    `outputs` asks about those."""
    return tuple(ROWS if t.shape.ndims and t.shape.as_list()[0] is None else SAME for t in op.outputs)


def outputs(rule: Rule, op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """What `rule` says of `op`'s outputs given its inputs' `kinds`. Where every input is `SAME` every
    output is, without asking (a step on weights alone), but for a `batch_source`."""
    if rule is not batch_source and all(k is SAME for k in kinds):
        return (SAME,) * len(op.outputs)
    return rule(op, kinds)


def random(op: Any, kinds: Sequence[Rows]) -> tuple[Rows, ...] | None:
    """A random op of a given shape (run on the whole batch: its stream is the step's): to a rows value's
    shape its draws are rows; to any other shape, the step's."""
    if kinds and kinds[0] is SHAPE and all(k is SAME for k in kinds[1:]):
        return (ROWS,) * len(op.outputs)
    return None
