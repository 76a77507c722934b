"""`Dataset.cache(filename="")`: the elements of the first complete pass, replayed afterwards.

In memory (no filename) the cache lives as long as the iterator's initialization: later epochs
of a `repeat` read it. With a filename the first complete pass is written to
`<filename>.tftk-cache` (a TFRecord file, one record per element, written to a temporary file and
renamed when the pass completes), and every later iterator, in any session or process, reads the
elements from there instead of running the input pipeline: TF's file cache, in tftk's own file
format (arrays as raw little-endian bytes, strings length-prefixed; never pickles).
"""

from __future__ import annotations

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
        tmp = f"{self._path}.{os.getpid()}.{id(env)}.tmp"
        try:
            with open(tmp, "wb") as handle:
                for element in self._input._elements(env):
                    handle.write(encode_record(encode_element(element)))
                    yield element
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self._path)  # only a complete pass becomes the cache
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
