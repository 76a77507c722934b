"""`tf.data.Dataset`: the base class and the source datasets (tensors, slices, range, generators).

A Dataset is a graph-building description. It knows its element structure (`output_types`,
`output_shapes`) and the graph tensors it depends on (`_inputs`); nothing runs until an
iterator's initializer evaluates those tensors and calls `_elements(env)`, which yields elements
as flat lists of numpy arrays. Transformations (map, batch, shuffle, ...) live in
`transformations`; file readers in `readers`; iterators in `iterator_ops`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

import numpy as np

from tftk.framework import dtypes, errors
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.data import structure as nest

__all__ = ["Dataset", "Env", "number_datasets"]

Element = list  # one element: flat list of numpy arrays


class Env:
    """What one iterator initialization gives the datasets: input values, the session, generators.

    `entropy` seeds the generators of unseeded random transformations (shuffle, list_files): one
    number per initialization, so a checkpointed iterator replays them exactly (iterator_ops).
    """

    def __init__(self, values: dict[Tensor, Any], ctx: Any, stop: threading.Event, entropy: int,
                 numbering: dict[int, int]):
        self.values = values
        self.ctx = ctx
        self.stop = stop  # set when the iterator is re-initialized or the session closes
        self.entropy = entropy
        self._numbering = numbering  # id(dataset) -> its position in the pipeline (`number_datasets`)
        self._lock = threading.Lock()
        self._memo: dict[int, Any] = {}

    def value(self, tensor: Tensor) -> Any:
        return self.values[tensor]

    def memo(self, key: Any, create: Callable[[], Any]) -> Any:
        """State one dataset node keeps for this initialization (shared by the epochs of a repeat)."""
        with self._lock:
            if id(key) not in self._memo:
                self._memo[id(key)] = (key, create())
            return self._memo[id(key)][1]

    def new_generator(self, dataset: "Dataset", seed: tuple) -> np.random.Generator:
        """A generator for `dataset`: from its (graph seed, op seed), or without a seed from this
        initialization's entropy and the dataset's position in the pipeline."""
        if seed[0] is None:
            return np.random.default_rng([self.entropy, self._numbering.get(id(dataset), 0)])
        return np.random.default_rng([seed[0] & 0xFFFFFFFF, seed[1] & 0xFFFFFFFF])

    def rng(self, dataset: "Dataset", seed: tuple) -> np.random.Generator:
        """One generator per dataset node and initialization: epochs of a repeat draw in sequence."""
        return self.memo(dataset, lambda: self.new_generator(dataset, seed))

    def child(self, values: dict[Tensor, Any]) -> "Env":
        """An env for a dataset built inside a function (flat_map, interleave): more values, same rest."""
        env = Env({**self.values, **values}, self.ctx, self.stop, self.entropy, self._numbering)
        env._memo, env._lock = self._memo, self._lock
        return env


def number_datasets(dataset: "Dataset") -> dict[int, int]:
    """id -> position of every dataset of a pipeline (inputs first, functions' datasets included)."""
    numbering: dict[int, int] = {}

    def visit(d: "Dataset") -> None:
        if id(d) not in numbering:
            for child in d._children() + d._nested():
                visit(child)
            numbering[id(d)] = len(numbering) + 1

    visit(dataset)
    return numbering


class Dataset:
    """A sequence of elements, each a nest (tuples/dicts) of tensors of fixed types."""

    def __init__(self, structure: Any, specs: list, inputs: list[Tensor], sparse: Any = None):
        self._structure = structure  # a nest whose leaves are placeholders (any value)
        self._specs = [(dt, as_shape(s)) for dt, s in specs]  # one per component of an element
        self._own_inputs = list(inputs)
        # per leaf of the structure: a SparseTensor (three components) or a dense tensor (one)
        self._sparse = tuple(sparse) if sparse is not None else (False,) * len(nest.flatten(structure))

    # ---- what the graph sees ---------------------------------------------------------------

    def _leaves(self) -> list[tuple]:
        """(dtype, shape) of each leaf (a sparse leaf's dense shape)."""
        return [nest.leaf_type_and_shape(group, flag) for group, flag in
                zip(nest.group_components(self._sparse, self._specs), self._sparse)]

    @property
    def output_types(self) -> Any:
        return nest.pack(self._structure, [dt for dt, _ in self._leaves()])

    @property
    def output_shapes(self) -> Any:
        return nest.pack(self._structure, [s for _, s in self._leaves()])

    @property
    def output_classes(self) -> Any:
        return nest.pack(self._structure, [SparseTensor if flag else Tensor for flag in self._sparse])

    def _children(self) -> list["Dataset"]:
        return []

    def _nested(self) -> list["Dataset"]:
        """Datasets built by this one's functions (flat_map, interleave): not inputs, but part of the pipeline."""
        return []

    def _inputs(self) -> list[Tensor]:
        """Every tensor this dataset (and the datasets it reads) needs, once each, in order."""
        seen: dict[Tensor, None] = {}
        for t in self._own_inputs:
            seen.setdefault(t)
        for child in self._children():
            for t in child._inputs():
                seen.setdefault(t)
        return list(seen)

    def _elements(self, env: Env) -> Iterator[Element]:
        raise NotImplementedError(type(self).__name__)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} shapes: {self.output_shapes}, types: {self.output_types}>"

    def __iter__(self):
        raise RuntimeError("dataset.__iter__() is only supported when eager execution is enabled; "
                           "use dataset.make_one_shot_iterator() (or tf.data.make_one_shot_iterator)")

    # ---- sources -----------------------------------------------------------------------------

    @staticmethod
    def from_tensors(tensors: Any) -> "Dataset":
        """A dataset of one element: `tensors`."""
        return TensorDataset(tensors)

    @staticmethod
    def from_tensor_slices(tensors: Any) -> "Dataset":
        """A dataset of the rows (slices along dimension 0) of every component of `tensors`."""
        return TensorSliceDataset(tensors)

    @staticmethod
    def range(*args: Any) -> "Dataset":
        """`Dataset.range(stop)`, `range(start, stop)` or `range(start, stop, step)` of int64 scalars."""
        return RangeDataset(*args)

    @staticmethod
    def from_generator(generator: Callable, output_types: Any, output_shapes: Any = None,
                       args: Any = None) -> "Dataset":
        """Elements produced by calling `generator(*args)` (numpy values of `output_types`)."""
        return GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def zip(datasets: Any) -> "Dataset":
        """Elements combining the i-th elements of a nest of datasets (ends with the shortest)."""
        return ZipDataset(datasets)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None) -> "Dataset":
        """The file names matching `file_pattern` (a glob or several), shuffled unless shuffle=False."""
        from tftk.data.readers import list_files
        return list_files(file_pattern, shuffle, seed)

    # ---- transformations (in transformations.py) ---------------------------------------------

    def concatenate(self, dataset: "Dataset") -> "Dataset":
        return ConcatenateDataset(self, dataset)

    def apply(self, transformation_func: Callable[["Dataset"], "Dataset"]) -> "Dataset":
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return result

    def map(self, map_func: Callable, num_parallel_calls: Any = None) -> "Dataset":
        from tftk.data.transformations import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate: Callable) -> "Dataset":
        from tftk.data.transformations import FilterDataset
        return FilterDataset(self, predicate)

    def flat_map(self, map_func: Callable) -> "Dataset":
        from tftk.data.interleave import InterleaveDataset
        return InterleaveDataset(self, map_func, 1, 1, None, "Dataset.flat_map()")

    def interleave(self, map_func: Callable, cycle_length: Any = None, block_length: Any = 1,
                   num_parallel_calls: Any = None, deterministic: bool | None = None) -> "Dataset":
        """Datasets made by `map_func` from each element, `block_length` elements of each of
        `cycle_length` in turn; `num_parallel_calls` > 1 reads them ahead on threads."""
        from tftk.data.interleave import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length, num_parallel_calls,
                                 "Dataset.interleave()", deterministic)

    def batch(self, batch_size: Any, drop_remainder: bool = False) -> "Dataset":
        from tftk.data.batching import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: Any, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False) -> "Dataset":
        from tftk.data.batching import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def shuffle(self, buffer_size: Any, seed: int | None = None,
                reshuffle_each_iteration: bool | None = None) -> "Dataset":
        from tftk.data.transformations import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count: Any = None) -> "Dataset":
        from tftk.data.transformations import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count: Any) -> "Dataset":
        from tftk.data.transformations import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count: Any) -> "Dataset":
        from tftk.data.transformations import SkipDataset
        return SkipDataset(self, count)

    def prefetch(self, buffer_size: Any) -> "Dataset":
        from tftk.data.transformations import PrefetchDataset
        return PrefetchDataset(self, buffer_size)

    def cache(self, filename: str = "") -> "Dataset":
        from tftk.data.cache import CacheDataset
        return CacheDataset(self, filename)

    # ---- iterators (in iterator_ops.py) -------------------------------------------------------

    def make_one_shot_iterator(self) -> Any:
        from tftk.data.iterator_ops import make_one_shot_iterator
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        from tftk.data.iterator_ops import make_initializable_iterator
        return make_initializable_iterator(self, shared_name)


def scalar_input(value: Any, dtype: dtypes.DType, what: str) -> Tensor:
    """A scalar argument (batch size, count, ...) as a tensor of `dtype`, rank-checked."""
    tensor = convert_to_tensor(value, dtype=dtype) if not isinstance(value, Tensor) else value
    if tensor.dtype is not dtype:
        from tftk.ops.math_ops import cast
        tensor = cast(tensor, dtype)
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"{what} must be a scalar, got shape {tensor.shape}")
    return tensor


def static_int(tensor: Tensor) -> int | None:
    from tftk.ops.constant_value import constant_value
    value = constant_value(tensor)
    return None if value is None else int(value)


# ---- sources --------------------------------------------------------------------------------


def _dense_only(value: Any, what: str) -> Any:
    value = nest.to_tensors(value, what)
    if any(nest.is_sparse(leaf) for leaf in nest.flatten(value)):
        raise TypeError(f"{what}: SparseTensor inputs are not supported by tftk's tf.data sources; make "
                        "them in a map function (e.g. with tf.parse_single_example) or densify them first")
    return value


class TensorDataset(Dataset):
    def __init__(self, tensors: Any):
        value = _dense_only(tensors, "Dataset.from_tensors()")
        flat = nest.flatten(value)
        super().__init__(value, nest.specs_of(flat), flat)

    def _elements(self, env: Env) -> Iterator[Element]:
        yield [env.value(t) for t in self._own_inputs]


class TensorSliceDataset(Dataset):
    def __init__(self, tensors: Any):
        value = _dense_only(tensors, "Dataset.from_tensor_slices()")
        flat = nest.flatten(value)
        if not flat:
            raise ValueError("Dataset.from_tensor_slices() needs at least one tensor")
        first = None
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(f"Dataset.from_tensor_slices(): tensor {t.name} is a scalar; every "
                                 "component needs a first dimension to slice")
            dim = t.shape.as_list()[0] if t.shape.ndims else None
            if first is not None and dim is not None and dim != first:
                raise ValueError(f"Dimensions {first} and {dim} are not compatible: all components of "
                                 "Dataset.from_tensor_slices() need the same first dimension")
            first = dim if dim is not None else first
        specs = [(t.dtype, t.shape[1:] if t.shape.ndims else TensorShape(None)) for t in flat]
        super().__init__(value, specs, flat)

    def _elements(self, env: Env) -> Iterator[Element]:
        arrays = [np.asarray(env.value(t)) for t in self._own_inputs]
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise errors.InvalidArgumentError(None, None, "Dataset.from_tensor_slices(): components "
                                              f"have different first dimensions {[len(a) for a in arrays]}")
        strings = [a.dtype == object and a.ndim == 1 for a in arrays]  # keep bytes as 0-d object arrays:
        for i in range(n):                                               # numpy's 'S' would drop trailing NULs
            yield [_object_scalar(a[i]) if s else a[i] for a, s in zip(arrays, strings)]


def _object_scalar(value: Any) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value
    return out


class RangeDataset(Dataset):
    def __init__(self, *args: Any):
        if not 1 <= len(args) <= 3:
            raise ValueError("Dataset.range() takes 1 to 3 arguments (start, stop, step)")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        inputs = [scalar_input(v, dtypes.int64, "Dataset.range() argument") for v in (start, stop, step)]
        super().__init__(0, [(dtypes.int64, TensorShape([]))], inputs)

    def _elements(self, env: Env) -> Iterator[Element]:
        start, stop, step = (int(env.value(t)) for t in self._own_inputs)
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "Dataset.range(): step must not be 0")
        for i in range(start, stop, step):
            yield [np.int64(i)]


class GeneratorDataset(Dataset):
    def __init__(self, generator: Callable, output_types: Any, output_shapes: Any, args: Any):
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        types = nest.flatten(output_types)
        if output_shapes is None:
            shapes = [TensorShape(None)] * len(types)
        else:
            shapes = [as_shape(s) for s in nest.flatten_up_to(output_types, output_shapes)]
        if len(shapes) != len(types):
            raise ValueError("output_shapes must have the same structure as output_types")
        self._generator = generator
        self._args = [convert_to_tensor(a) for a in (args or ())]
        super().__init__(output_types, [(dtypes.as_dtype(t), s) for t, s in zip(types, shapes)], self._args)

    def _elements(self, env: Env) -> Iterator[Element]:
        args = [env.value(t) for t in self._args]
        for value in self._generator(*args):
            leaves = _generator_leaves(self._structure, value)
            yield [_checked_component(v, dt, shape) for v, (dt, shape) in zip(leaves, self._specs)]


def _generator_leaves(structure: Any, value: Any) -> list:
    try:
        return nest.flatten_up_to(structure, value)
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"`generator` yielded an element {value!r} that "
                                          f"did not match the expected structure {structure!r}") from None


def _checked_component(value: Any, dtype: dtypes.DType, shape: TensorShape) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=dtype.as_numpy_dtype)
        if dtype is dtypes.string:
            array = np.vectorize(lambda s: s.encode() if isinstance(s, str) else bytes(s),
                                 otypes=[object])(array) if array.size else array
        elif np.asarray(value).dtype.kind == "f" and dtype.is_integer:
            raise TypeError("float value for an integer type")
    except (TypeError, ValueError) as exc:
        raise errors.InvalidArgumentError(None, None, "`generator` yielded an element that could not be "
                                          f"converted to the expected type. The expected type was "
                                          f"{dtype.name}, but the yielded element was {value!r} ({exc}).")
    if not shape.is_compatible_with(array.shape):
        raise errors.InvalidArgumentError(None, None, f"`generator` yielded an element of shape "
                                          f"{array.shape} where an element of shape {shape} was expected.")
    return array


class ZipDataset(Dataset):
    def __init__(self, datasets: Any):
        flat = nest.flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip() takes a (nested) tuple or dict of Datasets")
        self._datasets = flat
        structure = nest.pack(datasets, [d._structure for d in flat])
        super().__init__(structure, [s for d in flat for s in d._specs], [], [f for d in flat for f in d._sparse])

    def _children(self) -> list[Dataset]:
        return self._datasets

    def _elements(self, env: Env) -> Iterator[Element]:
        iterators = [d._elements(env) for d in self._datasets]
        while True:
            element: Element = []
            for it in iterators:
                part = next(it, None)
                if part is None:
                    return
                element.extend(part)
            yield element


class ConcatenateDataset(Dataset):
    def __init__(self, first: Dataset, second: Dataset):
        if not isinstance(second, Dataset):
            raise TypeError("Dataset.concatenate() takes a Dataset")
        if [dt for dt, _ in first._specs] != [dt for dt, _ in second._specs] or \
                not nest.same_structure(first._structure, second._structure) or first._sparse != second._sparse:
            raise TypeError(f"Two datasets to concatenate have different types {first.output_types} "
                            f"and {second.output_types}")
        specs = [(dt, nest.most_specific(a, b)) for (dt, a), (_, b) in zip(first._specs, second._specs)]
        self._first, self._second = first, second
        super().__init__(first._structure, specs, [], first._sparse)

    def _children(self) -> list[Dataset]:
        return [self._first, self._second]

    def _elements(self, env: Env) -> Iterator[Element]:
        yield from self._first._elements(env)
        yield from self._second._elements(env)
