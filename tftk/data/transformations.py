"""Dataset transformations: map, filter, shuffle, repeat, take, skip, prefetch. Batching is in
`batching`, flat_map/interleave in `interleave`, cache in `cache`.

map with `num_parallel_calls` runs the function on a pool of background threads (results keep
the input order, as TF's deterministic default); prefetch fills a bounded queue from a
background thread, so input work overlaps the training step that consumes it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import queue
import threading
from typing import Any, Callable, Iterator

import numpy as np

from tftk.framework import dtypes, errors
from tftk.data import structure as nest
from tftk.data.dataset_ops import Dataset, Element, Env, scalar_input, static_int
from tftk.data.functions import bind_function, trace

__all__ = ["AUTOTUNE", "MapDataset", "FilterDataset", "ShuffleDataset", "RepeatDataset", "TakeDataset",
           "SkipDataset", "PrefetchDataset"]

AUTOTUNE = -1
_POLL_SECS = 0.05  # how often a waiting thread checks whether it should give up


def _parallelism(value: Any, what: str) -> int:
    """num_parallel_calls / cycle_length as a thread count (AUTOTUNE: the machine's cores)."""
    if value is None:
        return 1
    n = static_int(scalar_input(value, dtypes.int64, what))
    if n is None:
        raise ValueError(f"{what} must be known when the graph is built (a Python int or constant)")
    if n == AUTOTUNE:
        return os.cpu_count() or 1
    if n < 1:
        raise ValueError(f"{what} must be positive or tf.data.experimental.AUTOTUNE, got {n}")
    return n


class _UnaryDataset(Dataset):
    """A transformation of one input dataset."""

    def __init__(self, input_dataset: Dataset, structure: Any, specs: list, inputs: list, sparse: Any = None):
        self._input = input_dataset
        super().__init__(structure, specs, inputs, input_dataset._sparse if sparse is None else sparse)

    def _children(self) -> list[Dataset]:
        return [self._input]


class MapDataset(_UnaryDataset):
    """Elements with the function applied; over whole chunks at once when it vectorises
    (`vectorize`), on a pool of threads with `num_parallel_calls` (results in input order)."""

    def __init__(self, input_dataset: Dataset, map_func: Callable, num_parallel_calls: Any):
        from tftk.data.vectorize import vectorize
        self._function = trace(map_func, input_dataset._structure, input_dataset._specs, "Dataset.map()",
                               input_dataset._sparse)
        self._threads = _parallelism(num_parallel_calls, "num_parallel_calls")
        self._vectorized = None if any(input_dataset._sparse) else vectorize(self._function)
        outputs = self._function.outputs
        super().__init__(input_dataset, self._function.output_structure, nest.specs_of(outputs),
                         self._function.captured, self._function.output_sparse)

    @property
    def vectorized(self) -> bool:
        """Whether the function runs over batches (so `batch` may take its results whole)."""
        return self._vectorized is not None

    def _elements(self, env: Env) -> Iterator[Element]:
        size = _VECTOR_CHUNK if self.vectorized else 1 if self._threads == 1 else _MAP_CHUNK
        for chunk in self._mapped_chunks(env, size):
            yield from chunk.elements()

    def _mapped_chunks(self, env: Env, size: int) -> Iterator["MappedChunk"]:
        """The results of mapping `size` input elements at a time, in order."""
        return run_in_chunks(self._function, self._vectorized, self._input, env, size, self._threads)


def run_in_chunks(function: Any, vectorized: Any, input_dataset: Dataset, env: Env, size: int,
                  threads: int) -> Iterator["MappedChunk"]:
    """A traced function over `size` input elements at a time (in one run of its `vectorized`
    form when there is one; element by element if that fails), chunks on `threads` threads;
    results in input order."""
    call = bind_function(function, env)
    batched = bind_function(vectorized, env) if vectorized is not None else None
    n_inputs = len(input_dataset._specs)

    def run(start: int, rows: list) -> MappedChunk:
        if batched is not None:
            try:
                stacked = [np.stack([row[k] for row in rows]) for k in range(n_inputs)]
                return MappedChunk(rows, list(batched(start, *stacked)), None, None)
            except Exception:  # uneven inputs, or an element that fails: run them one by one
                pass
        results: list = []
        for i, row in enumerate(rows):
            try:
                results.append(list(call(start + i, *row)))
            except Exception as exc:
                return MappedChunk(rows, None, results, exc)
        return MappedChunk(rows, None, results, None)

    chunks = _numbered_chunks(input_dataset._elements(env), size)
    if threads == 1:
        for start, rows in chunks:
            yield run(start, rows)
        return
    pool = concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="tftk-data-map")
    pending: collections.deque = collections.deque()
    try:
        for start, rows in chunks:
            pending.append(pool.submit(run, start, rows))
            if len(pending) > threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class MappedChunk:
    """One chunk of input elements (`inputs`) and the function's results: stacked outputs
    (`batch`), or per-element results (`rows`) followed by the error that stopped the chunk."""

    def __init__(self, inputs: list, batch: list | None, rows: list | None, error: BaseException | None):
        self.inputs, self.batch, self.rows, self.error = inputs, batch, rows, error

    def elements(self) -> Iterator[Element]:
        if self.batch is not None:
            for k in range(len(self.batch[0])):
                yield [out[k, ...] for out in self.batch]
            return
        yield from self.rows
        if self.error is not None:
            raise self.error


_MAP_CHUNK = 8  # elements per parallel-map task of a per-element function
_VECTOR_CHUNK = 64  # elements per run of a vectorised function


def _numbered_chunks(items: Iterator, size: int) -> Iterator[tuple[int, list]]:
    """(index of the chunk's first item, up to `size` items) over `items`."""
    chunk: list = []
    start = 0
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield start, chunk
            start += size
            chunk = []
    if chunk:
        yield start, chunk


class FilterDataset(_UnaryDataset):
    """The elements for which the predicate holds; evaluated over chunks when it vectorises."""

    def __init__(self, input_dataset: Dataset, predicate: Callable):
        from tftk.data.vectorize import vectorize
        self._function = trace(predicate, input_dataset._structure, input_dataset._specs, "Dataset.filter()",
                               input_dataset._sparse)
        outs = self._function.outputs
        if len(outs) != 1 or outs[0].dtype is not dtypes.bool or outs[0].shape.ndims not in (None, 0):
            raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor. "
                             f"Was {[(t.dtype.name, str(t.shape)) for t in outs]}.")
        self._vectorized = None if any(input_dataset._sparse) else vectorize(self._function)
        super().__init__(input_dataset, input_dataset._structure, input_dataset._specs,
                         self._function.captured)

    @property
    def vectorized(self) -> bool:
        return self._vectorized is not None

    def _elements(self, env: Env) -> Iterator[Element]:
        size = _VECTOR_CHUNK if self.vectorized else 1
        for chunk in run_in_chunks(self._function, self._vectorized, self._input, env, size, 1):
            keep = chunk.batch[0].tolist() if chunk.batch is not None else [bool(r[0]) for r in chunk.rows]
            for element, kept in zip(chunk.inputs, keep):
                if kept:
                    yield element
            if chunk.error is not None:
                raise chunk.error


class ShuffleDataset(_UnaryDataset):
    """TF's buffer shuffle: fill `buffer_size` elements, emit a random one, refill its slot."""

    def __init__(self, input_dataset: Dataset, buffer_size: Any, seed: int | None,
                 reshuffle_each_iteration: bool | None):
        from tftk.ops.random_ops import get_seed
        self._buffer_size = scalar_input(buffer_size, dtypes.int64, "buffer_size")
        self._seed = get_seed(seed)
        self._reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        super().__init__(input_dataset, input_dataset._structure, input_dataset._specs, [self._buffer_size])

    def _elements(self, env: Env) -> Iterator[Element]:
        size = int(env.value(self._buffer_size))
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, f"buffer_size must be greater than zero, got {size}")
        if self._reshuffle:
            rng = env.rng(self, self._seed)
        else:  # every epoch replays the same order: one seed per initialization
            seed = env.memo(self, lambda: env.new_generator(self, self._seed).integers(2 ** 32, size=2).tolist())
            rng = np.random.default_rng(seed)
        upstream = self._input._elements(env)
        buffer: list = []
        for element in upstream:
            buffer.append(element)
            if len(buffer) == size:
                break
        picks = _uniform_picks(rng)
        for element in upstream:
            k = int(next(picks) * len(buffer))
            yield buffer[k]
            buffer[k] = element
        while buffer:
            k = int(next(picks) * len(buffer))
            buffer[k], buffer[-1] = buffer[-1], buffer[k]
            yield buffer.pop()


def _uniform_picks(rng) -> Iterator[float]:
    """Uniform floats in [0, 1), drawn 1024 at a time (one generator call per element is slow)."""
    while True:
        yield from rng.random(1024).tolist()


class _CountDataset(_UnaryDataset):
    """repeat/take/skip: the input's elements, governed by an int64 `count` (-1: all / forever)."""

    def __init__(self, input_dataset: Dataset, count: Any):
        self._count = scalar_input(-1 if count is None else count, dtypes.int64, "count")
        super().__init__(input_dataset, input_dataset._structure, input_dataset._specs, [self._count])


class RepeatDataset(_CountDataset):

    def _elements(self, env: Env) -> Iterator[Element]:
        count = int(env.value(self._count))
        epoch = 0
        while count < 0 or epoch < count:
            produced = False
            for element in self._input._elements(env):
                produced = True
                yield element
            if not produced:  # an empty input repeated forever is still empty
                return
            epoch += 1


class TakeDataset(_CountDataset):

    def _elements(self, env: Env) -> Iterator[Element]:
        count = int(env.value(self._count))
        if count == 0:
            return
        for i, element in enumerate(self._input._elements(env)):
            yield element
            if i + 1 == count:
                return


class SkipDataset(_CountDataset):

    def _elements(self, env: Env) -> Iterator[Element]:
        count = int(env.value(self._count))
        for i, element in enumerate(self._input._elements(env)):
            if count >= 0 and i >= count:
                yield element


_END = object()


class PrefetchDataset(_UnaryDataset):
    """Produce up to `buffer_size` elements ahead on a background thread."""

    def __init__(self, input_dataset: Dataset, buffer_size: Any):
        self._buffer_size = scalar_input(buffer_size, dtypes.int64, "buffer_size")
        super().__init__(input_dataset, input_dataset._structure, input_dataset._specs, [self._buffer_size])

    def _elements(self, env: Env) -> Iterator[Element]:
        size = int(env.value(self._buffer_size))
        size = (os.cpu_count() or 1) if size == AUTOTUNE else max(size, 1)
        buffer: queue.Queue = queue.Queue(maxsize=size)
        done = threading.Event()  # the consumer went away

        def stopped() -> bool:
            return done.is_set() or env.stop.is_set() or env.ctx.closed.is_set()

        def produce() -> None:
            try:
                items: Iterator = iter(self._input._elements(env))
                for item in items:
                    if not _put(buffer, (None, item), stopped):
                        return
                _put(buffer, (None, _END), stopped)
            except BaseException as exc:  # handed to the consumer, raised there
                _put(buffer, (exc, None), stopped)

        threading.Thread(target=produce, name="tftk-data-prefetch", daemon=True).start()
        try:
            while True:
                try:
                    exc, item = buffer.get(timeout=_POLL_SECS)
                except queue.Empty:
                    if env.stop.is_set() or env.ctx.closed.is_set():
                        raise errors.CancelledError(None, None, "The iterator was re-initialized or its "
                                                    "session closed while waiting for prefetched data")
                    continue
                if exc is not None:
                    raise exc
                if item is _END:
                    return
                yield item
        finally:
            done.set()


def _put(buffer: queue.Queue, item: Any, stopped: Callable[[], bool]) -> bool:
    while not stopped():
        try:
            buffer.put(item, timeout=_POLL_SECS)
            return True
        except queue.Full:
            continue
    return False
