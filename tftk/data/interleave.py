"""`Dataset.flat_map` and `Dataset.interleave` (and `parallel_interleave`): the datasets a function
makes from each input element, read `block_length` elements at a time from `cycle_length` of them
in turn, in TF's order.

With num_parallel_calls > 1 every open dataset is read ahead by a background thread (`ReadAhead`)
into a small buffer, so reads of several files overlap each other and the consumer; the order
stays TF's deterministic one unless `deterministic=False`, which takes elements from whichever
open dataset has one ready. File datasets' `num_parallel_reads` uses the same machinery.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator

from tftk.framework import errors
from tftk.data.dataset_ops import Dataset, Element, Env
from tftk.data.functions import bind_function, trace
from tftk.data.transformations import _END, _POLL_SECS, AUTOTUNE, _parallelism, _put, _UnaryDataset

__all__ = ["InterleaveDataset", "interleave", "interleave_parallel", "ReadAhead"]


def _dataset_inputs(result: Any) -> list:
    if not isinstance(result, Dataset):
        raise TypeError(f"`map_func` must return a `Dataset` object. Got {type(result).__name__}")
    return result._inputs()


class InterleaveDataset(_UnaryDataset):
    """flat_map (cycle_length 1) and interleave, in TF's order.

    With num_parallel_calls > 1 each of the `cycle_length` open datasets is read ahead on its own
    background thread into a small buffer; the order stays TF's deterministic one unless
    `deterministic=False`, which takes elements from whichever open dataset has one ready.
    """

    def __init__(self, input_dataset: Dataset, map_func: Callable, cycle_length: Any, block_length: Any,
                 num_parallel_calls: Any, what: str, deterministic: bool | None = None,
                 buffer_elements: int | None = None):
        self._function = trace(map_func, input_dataset._structure, input_dataset._specs, what,
                               input_dataset._sparse, outputs_of=_dataset_inputs)
        inner: Dataset = self._function.output_structure
        self._cycle = _parallelism(AUTOTUNE if cycle_length is None else cycle_length, "cycle_length")
        self._block = _parallelism(block_length, "block_length")
        self._parallel = num_parallel_calls is not None and _parallelism(num_parallel_calls, "num_parallel_calls") > 1
        self._deterministic = deterministic is not False
        self._buffer = max(int(buffer_elements or 0), self._block, 2)
        super().__init__(input_dataset, inner._structure, inner._specs, self._function.captured, inner._sparse)

    def _nested(self) -> list[Dataset]:
        return [self._function.output_structure]

    def _elements(self, env: Env) -> Iterator[Element]:
        call = bind_function(self._function, env)
        inner: Dataset = self._function.output_structure
        sources = (inner._elements(env.child(dict(zip(self._function.outputs, call(i, *element)))))
                   for i, element in enumerate(self._input._elements(env)))
        if not self._parallel:
            return interleave(sources, self._cycle, self._block)
        return interleave_parallel(sources, self._cycle, self._block, self._buffer, env, self._deterministic)


def interleave(sources: Iterator[Iterator[Element]], cycle_length: int, block_length: int) -> Iterator[Element]:
    """TF's interleave order: `block_length` elements from each of `cycle_length` open sources in
    turn; an exhausted source's slot takes the next source."""
    cycle: list[Iterator | None] = [None] * cycle_length
    index = block = n_open = 0
    end_of_input = False

    def advance() -> None:
        nonlocal index, block
        block, index = 0, (index + 1) % cycle_length

    while not end_of_input or n_open:
        current = cycle[index]
        if current is not None:
            element = next(current, None)
            if element is not None:
                block += 1
                if block == block_length:
                    advance()
                yield element
                continue
            cycle[index] = None
            n_open -= 1
            advance()
        elif not end_of_input:
            source = next(sources, None)
            if source is None:
                end_of_input = True
            else:
                cycle[index] = iter(source)
                n_open += 1
        else:
            advance()


def interleave_parallel(sources: Iterator[Iterator[Element]], cycle_length: int, block_length: int,
                        buffer: int, env: Env, deterministic: bool) -> Iterator[Element]:
    """`interleave` with every open source read ahead by a `ReadAhead` thread."""
    opened: list[ReadAhead] = []

    def started() -> Iterator[ReadAhead]:
        for source in sources:
            reader = ReadAhead(source, buffer, env)
            opened.append(reader)
            yield reader

    try:
        if deterministic:
            yield from interleave(started(), cycle_length, block_length)
        else:
            yield from _first_ready(started(), cycle_length)
    finally:
        for reader in opened:
            reader.close()


def _first_ready(sources: Iterator["ReadAhead"], cycle_length: int) -> Iterator[Element]:
    """Elements of up to `cycle_length` open sources in the order they arrive (sloppy interleave)."""
    cycle: list[ReadAhead] = []
    end_of_input = False
    while cycle or not end_of_input:
        while not end_of_input and len(cycle) < cycle_length:
            source = next(sources, None)
            if source is None:
                end_of_input = True
            else:
                cycle.append(source)
        for reader in list(cycle):
            item = reader.poll()
            if item is _EMPTY:
                continue
            if item is _END:
                cycle.remove(reader)
            else:
                yield item
            break
        else:
            if cycle:
                cycle[0].wait(_POLL_SECS)


_EMPTY = object()


class ReadAhead:
    """An element iterator drained by a background thread into a bounded queue."""

    def __init__(self, source: Iterator[Element], size: int, env: Env):
        self._buffer: queue.Queue = queue.Queue(maxsize=size)
        self._done = threading.Event()
        self._env = env
        self._ready = threading.Event()
        threading.Thread(target=self._fill, args=(source,), name="tftk-data-interleave", daemon=True).start()

    def _stopped(self) -> bool:
        return self._done.is_set() or self._env.stop.is_set() or self._env.ctx.closed.is_set()

    def _fill(self, source: Iterator[Element]) -> None:
        try:
            for item in source:
                if not _put(self._buffer, (None, item), self._stopped):
                    return
                self._ready.set()
            _put(self._buffer, (None, _END), self._stopped)
        except BaseException as exc:  # handed to the consumer, raised there
            _put(self._buffer, (exc, None), self._stopped)
        self._ready.set()

    def __iter__(self) -> "ReadAhead":
        return self

    def __next__(self) -> Element:
        while True:
            try:
                exc, item = self._buffer.get(timeout=_POLL_SECS)
            except queue.Empty:
                if self._env.stop.is_set() or self._env.ctx.closed.is_set():
                    raise errors.CancelledError(None, None, "The iterator was re-initialized or its session "
                                                "closed while waiting for interleaved data") from None
                continue
            if exc is not None:
                raise exc
            if item is _END:
                self._buffer.put((None, _END))  # stays at the end for later reads
                raise StopIteration
            return item

    def poll(self) -> Any:
        """The next element, _END at the end, or _EMPTY when none is ready yet."""
        try:
            exc, item = self._buffer.get_nowait()
        except queue.Empty:
            self._ready.clear()
            return _EMPTY
        if exc is not None:
            raise exc
        if item is _END:
            self._buffer.put((None, _END))  # stays at the end for later polls
        return item

    def wait(self, seconds: float) -> None:
        self._ready.wait(seconds)

    def close(self) -> None:
        self._done.set()
