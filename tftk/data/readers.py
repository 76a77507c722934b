"""File datasets: TFRecordDataset, TextLineDataset, FixedLengthRecordDataset, Dataset.list_files.

`filenames` may be a string, a list of strings, a string tensor (e.g. a placeholder fed when the
iterator is initialized) or a Dataset of file names. Each element is one record (a scalar
string). With `num_parallel_reads`, records of that many files are interleaved one at a time,
the order TF gives, each file read ahead on its own thread.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Iterator

import numpy as np

from tftk.framework import dtypes, errors
from tftk.framework.ops import Tensor, convert_to_tensor
from tftk.framework.tensor_shape import TensorShape
from tftk.data.dataset_ops import Dataset, Element, Env, scalar_input, static_int
from tftk.data.interleave import interleave, interleave_parallel
from tftk.data.tfrecord import compression_name, open_for_reading, read_tfrecords

__all__ = ["TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset", "list_files"]

_RECORD = [(dtypes.string, TensorShape([]))]


class _FileDataset(Dataset):
    """Records of each file in turn (or interleaved across `num_parallel_reads` files)."""

    def __init__(self, filenames: Any, compression_type: Any, num_parallel_reads: Any = None):
        self._compression = compression_name(compression_type)
        if isinstance(filenames, Dataset):
            if [dt for dt, _ in filenames._specs] != [dtypes.string]:
                raise TypeError("`filenames` must be a Dataset of tf.string elements")
            self._files: Dataset | Tensor = filenames
            inputs: list[Tensor] = []
        else:
            self._files = convert_to_tensor(filenames, dtype=dtypes.string)
            if self._files.shape.ndims not in (None, 0, 1):
                raise ValueError(f"`filenames` must be a scalar or vector of strings, got shape "
                                 f"{self._files.shape}")
            inputs = [self._files]
        self._parallel = 1 if num_parallel_reads is None else \
            static_int(scalar_input(num_parallel_reads, dtypes.int64, "num_parallel_reads")) or 1
        super().__init__(0, _RECORD, inputs)

    def _children(self) -> list[Dataset]:
        return [self._files] if isinstance(self._files, Dataset) else []

    def _file_names(self, env: Env) -> Iterator[str]:
        if isinstance(self._files, Dataset):
            names: Any = (e[0] for e in self._files._elements(env))
        else:
            names = np.atleast_1d(env.value(self._files)).tolist()
        for name in names:
            yield name.decode() if isinstance(name, bytes) else str(name)

    def _records(self, path: str) -> Iterator[bytes]:
        raise NotImplementedError

    def _elements(self, env: Env) -> Iterator[Element]:
        sources = ((np.array(record, dtype=object) for record in self._records(path))
                   for path in self._file_names(env))
        records = interleave(sources, self._parallel, 1) if self._parallel == 1 else \
            interleave_parallel(sources, self._parallel, 1, 64, env, True)
        for record in records:
            yield [record]


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files (CRC-checked; compression_type '', 'ZLIB' or 'GZIP')."""

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None):
        super().__init__(filenames, compression_type, num_parallel_reads)

    def _records(self, path: str) -> Iterator[bytes]:
        for _, payload in read_tfrecords(path, self._compression):
            yield payload


def _read_all(path: str, compression: str) -> bytes:
    """The (decompressed) bytes of one file."""
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
    handle = open_for_reading(path, compression)
    try:
        return handle.read(-1) if compression else handle.read()
    finally:
        handle.close()


class TextLineDataset(_FileDataset):
    """The lines of text files, without their line endings."""

    def __init__(self, filenames: Any, compression_type: Any = None, buffer_size: Any = None,
                 num_parallel_reads: Any = None):
        super().__init__(filenames, compression_type, num_parallel_reads)

    def _records(self, path: str) -> Iterator[bytes]:
        lines = _read_all(path, self._compression).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line


class FixedLengthRecordDataset(_FileDataset):
    """Records of `record_bytes` bytes between a header and a footer (e.g. CIFAR-10's binaries)."""

    def __init__(self, filenames: Any, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, buffer_size: Any = None, compression_type: Any = None,
                 num_parallel_reads: Any = None):
        self._sizes = (int(record_bytes), int(header_bytes or 0), int(footer_bytes or 0))
        if self._sizes[0] <= 0:
            raise ValueError(f"record_bytes must be positive, got {record_bytes}")
        super().__init__(filenames, compression_type, num_parallel_reads)

    def _records(self, path: str) -> Iterator[bytes]:
        data = _read_all(path, self._compression)
        size, header, footer = self._sizes
        end = len(data) - footer
        for start in range(header, end - size + 1, size):
            yield data[start:start + size]


class _ListFilesDataset(Dataset):
    def __init__(self, patterns: Tensor, shuffle: bool, seed: tuple):
        self._patterns, self._shuffle, self._seed = patterns, shuffle, seed
        super().__init__(0, _RECORD, [patterns])

    def _elements(self, env: Env) -> Iterator[Element]:
        patterns = [p.decode() if isinstance(p, bytes) else str(p)
                    for p in np.atleast_1d(env.value(self._patterns)).tolist()]
        names = sorted({name if os.path.dirname(p) else os.path.join(".", name)  # TF's "./x" for "x*"
                        for p in patterns for name in glob.glob(p)})
        if not names:
            raise errors.InvalidArgumentError(None, None, f"No files matched pattern: {', '.join(patterns)}")
        if self._shuffle:
            order = env.rng(self, self._seed).permutation(len(names))
            names = [names[i] for i in order]
        for name in names:
            yield [np.array(name.encode(), dtype=object)]


def list_files(file_pattern: Any, shuffle: bool | None, seed: int | None) -> Dataset:
    from tftk.ops.random_ops import get_seed
    patterns = convert_to_tensor(file_pattern, dtype=dtypes.string)
    return _ListFilesDataset(patterns, True if shuffle is None else bool(shuffle), get_seed(seed))
