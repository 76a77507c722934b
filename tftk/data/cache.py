"""`Dataset.cache(filename="")`: the elements of the first complete pass, replayed afterwards.

In memory (no filename) the cache lives as long as the iterator's initialization: later epochs
of a `repeat` read it. With a filename the first complete pass is written to
`<filename>.tftk-cache`, and every later iterator, in any session or process, reads the elements
from there instead of running the input pipeline: TF's file cache, in tftk's own file format.

The format: a TFRecord file (length, masked CRC-32C, payload, masked CRC-32C per record), one
record per element; a payload holds each component in turn as its rank (u8), its dims (u64 each)
and its data: numbers as raw little-endian bytes of the dataset's dtype, strings as u64 length +
bytes each. Never pickles. A damaged record is a DataLossError naming the file and offset.

Writing is safe to interrupt and resumable. The pass goes to `<filename>.tftk-cache.partial`,
locked (flock) while an iterator writes it: a second iterator writing the same cache meanwhile
gets AlreadyExistsError, as in TF. Only a complete pass is fsynced and renamed to the cache. A
partial file whose writer is gone (a pass abandoned, or a process killed) is resumed by the next
pass: its intact records are read back as the first elements (a record cut short by a kill is
dropped), the input pipeline is run past them, and writing continues after them.
"""

from __future__ import annotations

import contextlib
import os
import struct
from typing import Any, Iterator

import numpy as np

from tftk.framework import dtypes, errors
from tftk.data.dataset_ops import Dataset, Element, Env
from tftk.data.transformations import _UnaryDataset

__all__ = ["CacheDataset", "encode_element", "decode_element"]

_SUFFIX = ".tftk-cache"


def encode_element(element: Element) -> bytes:
    """One element as bytes: per component its rank, dims and payload."""
    parts = []
    for value in element:
        array = np.asarray(value)
        parts.append(struct.pack("<B", array.ndim) + struct.pack(f"<{array.ndim}Q", *array.shape))
        if array.dtype == object:
            items = [bytes(v) for v in array.ravel()]
            parts.append(b"".join(struct.pack("<Q", len(v)) + v for v in items))
        else:
            parts.append(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes())
    return b"".join(parts)


def decode_element(data: bytes, specs: list) -> Element:
    """The element `encode_element` wrote, with the dtypes of `specs`."""
    element, offset = [], 0
    for dtype, _ in specs:
        ndim = data[offset]
        shape = struct.unpack_from(f"<{ndim}Q", data, offset + 1)
        offset += 1 + 8 * ndim
        count = int(np.prod(shape))
        if dtype is dtypes.string:
            items = np.empty(count, dtype=object)
            for k in range(count):
                (length,) = struct.unpack_from("<Q", data, offset)
                items[k] = data[offset + 8:offset + 8 + length]
                offset += 8 + length
            element.append(items.reshape(shape))
        else:
            np_dtype = np.dtype(dtype.as_numpy_dtype).newbyteorder("<")
            array = np.frombuffer(data, np_dtype, count, offset).reshape(shape)
            offset += array.nbytes
            element.append(array.astype(np_dtype.newbyteorder("=")))
    return element


class CacheDataset(_UnaryDataset):
    def __init__(self, input_dataset: Dataset, filename: Any):
        if isinstance(filename, bytes):
            filename = filename.decode()
        if not isinstance(filename, (str, os.PathLike)) and filename is not None:
            raise TypeError(f"Dataset.cache(): filename must be a string, got {type(filename).__name__}")
        self._path = os.fspath(filename) + _SUFFIX if filename else None
        super().__init__(input_dataset, input_dataset._structure, input_dataset._specs, [])

    def _elements(self, env: Env) -> Iterator[Element]:
        if self._path is None:
            yield from self._in_memory(env)
        elif os.path.exists(self._path):
            yield from self._from_file()
        else:
            yield from self._to_file(env)

    def _in_memory(self, env: Env) -> Iterator[Element]:
        cached: dict = env.memo(self, dict)
        if "elements" in cached:
            yield from cached["elements"]
            return
        seen = []
        for element in self._input._elements(env):
            seen.append(element)
            yield element
        cached["elements"] = seen

    def _from_file(self) -> Iterator[Element]:
        from tftk.data.tfrecord import read_tfrecords
        for offset, record in read_tfrecords(self._path):
            try:
                yield decode_element(record, self._specs)
            except (struct.error, ValueError, IndexError) as exc:
                raise errors.DataLossError(None, None, f"{self._path}: the cache record at byte {offset} "
                                           f"does not hold an element of this dataset ({exc}); delete the "
                                           "file to rebuild the cache") from None

    def _to_file(self, env: Env) -> Iterator[Element]:
        from tftk.summary.events import encode_record
        folder = os.path.dirname(self._path) or "."
        if not os.path.isdir(folder):
            raise errors.NotFoundError(None, None, f"Dataset.cache(): the folder of {self._path} does not exist")
        partial = self._path + ".partial"
        handle = open(partial, "a+b")
        try:
            _lock(handle, partial)
            written = yield from self._resume(handle, partial)
            for i, element in enumerate(self._input._elements(env)):
                if i < written:
                    continue  # already in the partial file (and already handed out)
                handle.write(encode_record(encode_element(element)))
                yield element
            handle.flush()
            os.fsync(handle.fileno())
            os.replace(partial, self._path)  # only a complete pass becomes the cache
            _sync_folder(folder)
        finally:
            handle.close()  # releases the lock; an unfinished partial file stays to be resumed

    def _resume(self, handle: Any, partial: str) -> Iterator[Element]:
        """Yield the intact elements of a partial file left by an earlier pass, cut it after the
        last of them, and return how many there were."""
        from tftk.data.tfrecord import read_tfrecords
        count, end = 0, 0
        records = read_tfrecords(partial)
        while True:  # up to the first record cut short or damaged by the interruption
            try:
                offset, record = next(records)
                element = decode_element(record, self._specs)
            except (StopIteration, errors.DataLossError, struct.error, ValueError, IndexError):
                break
            end = offset + len(record) + 16
            count += 1
            yield element
        handle.truncate(end)
        handle.seek(end)
        return count


def _lock(handle: Any, path: str) -> None:
    """Hold an exclusive lock on the partial file while this iterator writes it."""
    import fcntl
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise errors.AlreadyExistsError(
            None, None, f"There appears to be a concurrent caching iterator running: {path} is being written "
            "by another iterator. Let it finish its pass, or give this dataset another cache filename") from None


def _sync_folder(folder: str) -> None:
    """Make the rename durable (the folder's entry), where the platform allows opening a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)
