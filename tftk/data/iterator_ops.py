"""`tf.data` iterators as graph ops: `iterator.get_next()` is an op that Session.run runs.

An iterator op outputs a string handle; per session, a table maps handles to iterator states.
`MakeIterator` (the initializer) evaluates the dataset's input tensors and starts a new state,
`IteratorGetNext` takes the next element from the state its handle names, raising
OutOfRangeError at the end. `string_handle()` / `Iterator.from_string_handle` pass handles
through a placeholder so one get_next can read from several iterators, as in TF1.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from typing import Any, Iterator as PyIterator

import numpy as np

from tftk.framework import batch_rows, dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor, name_scope
from tftk.framework.sparse_tensor import SparseTensor
from tftk.framework.tensor_shape import TensorShape, as_shape
from tftk.ops.op_builder import make_multi_op, make_op
from tftk.data import structure as nest
from tftk.data.dataset_ops import Dataset, Env, number_datasets

__all__ = ["Iterator", "make_one_shot_iterator", "make_initializable_iterator"]

_handles = itertools.count()


class _IteratorState:
    """One initialization of an iterator: the element generator, read under a lock.

    It knows where it came from (the op that started it and the values of the dataset's inputs),
    the entropy its unseeded generators draw from, and how many elements it handed out: that is
    its checkpointable position (`iterator_state`). A state variable made by
    `make_saveable_from_iterator` holds that position after every element; when a restore has put
    another value there, the next `get_next` continues from it.
    """

    def __init__(self, source: Operation, values: list, ctx: Any, entropy: int | None = None):
        dataset, inputs = _dataset_of(source)
        self.source, self.values = source, values
        self.entropy = _entropy(source) if entropy is None else entropy
        self.env = Env(dict(zip(inputs, values)), ctx, threading.Event(), self.entropy,
                       number_datasets(dataset))
        self.elements: PyIterator | None = dataset._elements(self.env)
        self.lock = threading.Lock()
        self.consumed = 0
        self.written: Any = None  # the state variable's value this state last wrote

    def _next(self, op: Operation | None) -> list:
        """The next element (the caller holds `lock`); OutOfRangeError at the end."""
        if self.elements is not None:
            element = next(self.elements, None)
            if element is not None:
                self.consumed += 1
                return element
            self.elements = None
        raise errors.OutOfRangeError(None, op, "End of sequence")

    def skip(self, count: int, variable: str) -> None:
        """Hand out `count` elements unseen: replaying the pipeline to a checkpointed position."""
        with self.lock:
            for _ in range(count):
                try:
                    self._next(None)
                except errors.OutOfRangeError:
                    raise errors.DataLossError(None, None, f"The iterator state in {variable} is at element "
                                               f"{count}, past the end of its dataset ({self.consumed} "
                                               "elements): it was saved from another pipeline, or the "
                                               "data changed since") from None

    def stop(self) -> None:
        self.env.stop.set()


def _entropy(source: Operation) -> int:
    """What unseeded random transformations draw from: fixed by the graph seed when there is one
    (every initialization the same, as TF derives op seeds from it), else fresh."""
    seed = getattr(source.graph, "seed", None)
    if seed is None:
        return int(np.random.SeedSequence().entropy)
    digest = hashlib.sha256(f"{seed}:{source.name}".encode()).digest()
    return int.from_bytes(digest[:16], "little")


def _dataset_of(source: Operation) -> tuple[Dataset, list[Tensor]]:
    """The dataset an iterator op starts and the tensors its inputs come from."""
    dataset = source.get_attr("dataset")
    return dataset, list(source.inputs[1:] if source.type == "MakeIterator" else source.inputs)


def _table(ctx: Any) -> dict:
    """The session's iterator states by handle."""
    return ctx.resource(None, "tf.data iterators", dict)


def _state_boxes(graph: Any, ctx: Any) -> dict[str, Any]:
    """handle key -> the session's box of the iterator's state variable (make_saveable_from_iterator)."""
    from tftk.data.iterator_state import STATE_COLLECTION
    boxes: dict[str, Any] = {}
    for key, variable in graph.get_collection(STATE_COLLECTION):
        boxes[key] = ctx.box(variable._ref().op)
    return boxes


def _sync(key: str, state: "_IteratorState | None", box: Any, table: dict, ctx: Any, graph: Any) -> Any:
    """The state to read from: `state`, or the one a restored state variable describes."""
    from tftk.data.iterator_state import restore_state
    if box is None:
        return state
    saved = box.value
    if saved is None or (state is not None and saved is state.written) or not np.ravel(saved)[0]:
        return state  # nothing restored since this state wrote it (or "nothing saved")
    restored = restore_state(saved, graph, ctx, box.name)
    if state is not None:
        state.stop()
    restored.written = saved
    table[key] = restored
    return restored


def _write_state(state: "_IteratorState", box: Any) -> None:
    from tftk.data.iterator_state import encode_state
    if box is not None:
        box.value = state.written = encode_state(state)


def _bind_iterator(op: Operation, ctx: Any):
    handle = np.array(op.get_attr("handle").encode(), dtype=object)
    return lambda: handle


def _bind_one_shot(op: Operation, ctx: Any):
    key = op.get_attr("handle")
    handle = np.array(key.encode(), dtype=object)
    table, lock = _table(ctx), threading.Lock()
    box = _state_boxes(op.graph, ctx).get(key)

    def kernel(*values):
        with lock:
            if key not in table:
                state = _sync(key, None, box, table, ctx, op.graph)
                if state is None:
                    table[key] = state = _IteratorState(op, list(values), ctx)
                    _write_state(state, box)
        return handle

    return kernel


def _bind_make_iterator(op: Operation, ctx: Any):
    table = _table(ctx)
    boxes = _state_boxes(op.graph, ctx)

    def kernel(handle, *values):
        key = _key(handle)
        old = table.get(key)
        if old is not None:
            old.stop()
        table[key] = state = _IteratorState(op, list(values), ctx)
        _write_state(state, boxes.get(key))

    return kernel


def _key(handle: Any) -> str:
    value = np.asarray(handle).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _bind_get_next(op: Operation, ctx: Any):
    table = _table(ctx)
    boxes = _state_boxes(op.graph, ctx)
    n = len(op.outputs)

    def kernel(handle):
        key = _key(handle)
        box = boxes.get(key)
        state = _sync(key, table.get(key), box, table, ctx, op.graph)
        if state is None:
            raise errors.FailedPreconditionError(
                None, op, "GetNext() failed because the iterator has not been initialized. Ensure that "
                "you have run the initializer operation for this iterator before getting the next element.")
        with state.lock:
            try:
                element = state._next(op)
            finally:
                _write_state(state, box)
        return tuple(element) if n > 1 else element[0]

    return kernel


registry.register_op("IteratorV2", _bind_iterator, stateful=True)
registry.register_op("OneShotIterator", _bind_one_shot, stateful=True)
registry.register_op("MakeIterator", _bind_make_iterator, stateful=True)
registry.register_op("IteratorGetNext", _bind_get_next, stateful=True, rows=batch_rows.batch_source)
registry.register_op("IteratorToStringHandle", lambda op, ctx: lambda h: h)
registry.register_op("IteratorFromStringHandleV2", lambda op, ctx: lambda h: h, stateful=True)
registry.not_differentiable("IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
                            "IteratorToStringHandle", "IteratorFromStringHandleV2")


class Iterator:
    """`tf.data.Iterator`: get_next() gives one element per Session.run."""

    def __init__(self, handle: Tensor, initializer: Operation | None, structure: Any, specs: list,
                 sparse: tuple):
        self._handle = handle
        self._initializer = initializer
        self._structure = structure
        self._specs = specs  # per component; a SparseTensor leaf has three (see structure.py)
        self._sparse = sparse

    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None, shared_name: str | None = None,
                       output_classes: Any = None) -> "Iterator":
        """An iterator not bound to a dataset: `make_initializer(dataset)` gives it one."""
        structure, specs, sparse = _structure_specs(output_types, output_shapes, output_classes)
        key = shared_name or f"iterator_{next(_handles)}"
        handle = make_op("IteratorV2", [], dtypes.string, [], "Iterator", {"handle": key})
        return Iterator(handle, None, structure, specs, sparse)

    @staticmethod
    def from_string_handle(string_handle: Any, output_types: Any, output_shapes: Any = None,
                           output_classes: Any = None) -> "Iterator":
        """An iterator reading whichever iterator the fed `string_handle()` value names."""
        handle = convert_to_tensor(string_handle, dtype=dtypes.string)
        structure, specs, sparse = _structure_specs(output_types, output_shapes, output_classes)
        op = make_op("IteratorFromStringHandleV2", [handle], dtypes.string, [], "IteratorFromStringHandle")
        return Iterator(op, None, structure, specs, sparse)

    @property
    def initializer(self) -> Operation:
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    _leaves = Dataset._leaves
    output_types = Dataset.output_types
    output_shapes = Dataset.output_shapes
    output_classes = Dataset.output_classes

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """The op that (re)starts this iterator on `dataset` (its input tensors evaluated then)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"make_initializer() takes a Dataset, got {type(dataset).__name__}")
        mine, theirs = [dt for dt, _ in self._specs], [dt for dt, _ in dataset._specs]
        if mine != theirs or not nest.same_structure(self._structure, dataset._structure) or \
                self._sparse != dataset._sparse:
            raise TypeError(f"Expected output types {self.output_types} but got dataset with output "
                            f"types {dataset.output_types}.")
        for (_, a), (_, b) in zip(self._specs, dataset._specs):
            if not a.is_compatible_with(b):
                raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but got "
                                f"dataset with output shapes {dataset.output_shapes}.")
        with name_scope(name, "make_initializer"):
            return make_multi_op("MakeIterator", [self._handle] + dataset._inputs(), [], "MakeIterator",
                                 {"dataset": dataset})

    def get_next(self, name: str | None = None) -> Any:
        """The next element as a nest of tensors; running it past the end raises OutOfRangeError."""
        op = make_multi_op("IteratorGetNext", [self._handle], self._specs, name or "IteratorGetNext")
        return nest.pack_element(self._structure, self._sparse, op.outputs)

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string naming this iterator, to feed an `Iterator.from_string_handle` placeholder."""
        return make_op("IteratorToStringHandle", [self._handle], dtypes.string, [],
                       name or "IteratorToStringHandle")


def _structure_specs(output_types: Any, output_shapes: Any, output_classes: Any) -> tuple[Any, list, tuple]:
    """(structure, component specs, sparse flags) from TF1's output_types/shapes/classes."""
    types = [dtypes.as_dtype(t) for t in nest.flatten(output_types)]
    if output_shapes is None:
        shapes = [TensorShape(None)] * len(types)
    else:
        shapes = [as_shape(s) for s in nest.flatten_up_to(output_types, output_shapes)]
    classes = [Tensor] * len(types) if output_classes is None else nest.flatten_up_to(output_types, output_classes)
    sparse = tuple(c is SparseTensor for c in classes)
    specs: list = []
    for dtype, shape, flag in zip(types, shapes, sparse):
        if flag and shape.ndims is None:
            raise ValueError("output_shapes of a SparseTensor component must give its rank")
        specs += nest.sparse_specs(dtype, shape) if flag else [(dtype, shape)]
    return output_types, specs, sparse


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """An iterator that starts itself on first use (TF1: no parameters, no re-initialization)."""
    key = f"one_shot_iterator_{next(_handles)}"
    handle = make_op("OneShotIterator", dataset._inputs(), dtypes.string, [], "OneShotIterator",
                     {"handle": key, "dataset": dataset})
    return Iterator(handle, None, dataset._structure, dataset._specs, dataset._sparse)


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """An iterator with an `initializer` op that (re)starts it, evaluating placeholders then."""
    iterator = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name,
                                       dataset.output_classes)
    iterator._initializer = iterator.make_initializer(dataset)
    return iterator
