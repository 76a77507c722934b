"""File readers fed by a filename queue, and the decoders of what they read (TF1 input pipelines).

`reader.read(filename_queue)` returns one (key, value) record per run, taking the next file from
the queue when the current one is done: TextLineReader (lines), FixedLengthRecordReader
(fixed-size records, e.g. CIFAR-10's binaries), WholeFileReader, TFRecordReader. `decode_raw`
and `decode_csv` turn the values into numbers.
"""

from __future__ import annotations

import csv
import os
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from tftk.framework import dtypes, errors, registry
from tftk.framework.ops import Operation, Tensor, convert_to_tensor
from tftk.ops.data_flow_ops import QueueBase, QueueState, queue_getter, state_getter
from tftk.ops.op_builder import make_multi_op, make_op

__all__ = ["TextLineReader", "FixedLengthRecordReader", "WholeFileReader", "TFRecordReader",
           "decode_raw", "decode_csv"]


# ---- readers ----------------------------------------------------------------------------------


def _records(attrs: dict, path: str, op: Operation) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) records of one file, as the reader kind in `attrs` splits it."""
    kind = attrs["reader_kind"]
    if not os.path.exists(path):
        raise errors.NotFoundError(None, op, f"{op.name}: {path}; No such file or directory (from the "
                                   "filename queue)")
    if kind == "TFRecord":
        from tftk.data.tfrecord import read_tfrecords
        for offset, payload in read_tfrecords(path, attrs["compression"]):
            yield f"{path}:{offset}".encode(), payload
        return
    with open(path, "rb") as handle:
        if kind == "WholeFile":
            yield path.encode(), handle.read()
        elif kind == "TextLine":
            for number, line in enumerate(handle, start=1):
                if number > attrs["skip_header_lines"]:
                    yield f"{path}:{number}".encode(), line.rstrip(b"\n").rstrip(b"\r")
        else:
            yield from _fixed_length_records(handle, attrs, path)


def _fixed_length_records(handle: Any, attrs: dict, path: str) -> Iterator[tuple[bytes, bytes]]:
    data = handle.read()
    size, start = attrs["record_bytes"], attrs["header_bytes"]
    end = len(data) - attrs["footer_bytes"]
    hop = attrs["hop_bytes"] or size
    number = 0
    while start + size <= end:
        yield f"{path}:{number}".encode(), data[start:start + size]
        start += hop
        number += 1


class _ReaderState:
    """The file being read, how far, and the counts the reader reports."""

    def __init__(self, attrs: dict):
        self.attrs = attrs
        self.records: Iterator | None = None
        self.produced = 0
        self.completed = 0
        self.lock = threading.Lock()

    def read(self, queue: QueueState, op: Operation, ctx: Any) -> tuple[np.ndarray, ...]:
        with self.lock:
            while True:
                if self.records is None:
                    filename = queue.take(1, op, ctx)[0][0]
                    self.records = _records(self.attrs, _text(filename), op)
                record = next(self.records, None)
                if record is not None:
                    self.produced += 1
                    return np.array(record[0], dtype=object), np.array(record[1], dtype=object)
                self.records = None
                self.completed += 1


def _text(value: Any) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _reader_getter(op: Operation, ctx: Any):
    return state_getter(op, ctx, lambda: _ReaderState(op.attrs))


def _bind_read(op: Operation, ctx: Any):
    reader = _reader_getter(op, ctx)
    queue = queue_getter(op, ctx, input_index=1)
    return lambda: reader().read(queue(), op, ctx)


def _bind_count(attribute: str):
    def factory(op: Operation, ctx: Any):
        reader = _reader_getter(op, ctx)
        return lambda: np.asarray(getattr(reader(), attribute), np.int64)
    return factory


def _bind_reset(op: Operation, ctx: Any):
    reader = _reader_getter(op, ctx)

    def kernel() -> None:
        state = reader()
        with state.lock:
            state.records, state.produced, state.completed = None, 0, 0
    return kernel


registry.register_op("ReaderReadV2", _bind_read, ref_inputs=(0, 1), stateful=True, blocking=True)
registry.register_op("ReaderNumRecordsProducedV2", _bind_count("produced"), ref_inputs=(0,), stateful=True)
registry.register_op("ReaderNumWorkUnitsCompletedV2", _bind_count("completed"), ref_inputs=(0,), stateful=True)
registry.register_op("ReaderResetV2", _bind_reset, ref_inputs=(0,), stateful=True)
registry.register_op("ReaderV2", lambda op, ctx: lambda: np.array(op.name.encode(), dtype=object),
                     stateful=True, holds_state=True)
registry.not_differentiable("ReaderV2", "ReaderReadV2", "ReaderNumRecordsProducedV2",
                            "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2")


class ReaderBase:
    """A reader of records from the files a filename queue hands it (one per session)."""

    def __init__(self, kind: str, attrs: dict, name: str):
        self._attrs = {"reader_kind": kind, **attrs}
        self._reader_ref = make_op("ReaderV2", [], dtypes.string, [], name, self._attrs)

    reader_ref = property(lambda self: self._reader_ref)
    supports_serialize = False

    def read(self, queue: QueueBase, name: str | None = None) -> tuple[Tensor, Tensor]:
        """The next record: (key, value) strings; OutOfRangeError once the queue is closed and empty."""
        if not isinstance(queue, QueueBase):
            raise TypeError(f"{type(self).__name__}.read expects a queue of filenames (e.g. "
                            f"tf.train.string_input_producer([...])), got {type(queue).__name__}")
        op = make_multi_op("ReaderReadV2", [self._reader_ref, queue.queue_ref],
                           [(dtypes.string, []), (dtypes.string, [])], name or "ReaderReadV2",
                           {**self._attrs, **queue._attrs})
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name: str | None = None) -> Tensor:
        return make_op("ReaderNumRecordsProducedV2", [self._reader_ref], dtypes.int64, [], name, self._attrs)

    def num_work_units_completed(self, name: str | None = None) -> Tensor:
        return make_op("ReaderNumWorkUnitsCompletedV2", [self._reader_ref], dtypes.int64, [], name, self._attrs)

    def reset(self, name: str | None = None) -> Operation:
        return make_multi_op("ReaderResetV2", [self._reader_ref], [], name or "ReaderResetV2", self._attrs)


class TextLineReader(ReaderBase):
    """Lines of text files (without the newline); keys are "file:line_number"."""

    def __init__(self, skip_header_lines: int | None = None, name: str | None = None):
        super().__init__("TextLine", {"skip_header_lines": int(skip_header_lines or 0)}, name or "TextLineReader")


class FixedLengthRecordReader(ReaderBase):
    """Records of `record_bytes` bytes between a header and a footer; keys are "file:record_number"."""

    def __init__(self, record_bytes: int, header_bytes: int | None = None, footer_bytes: int | None = None,
                 hop_bytes: int | None = None, name: str | None = None, encoding: str | None = None):
        if encoding:
            raise NotImplementedError("FixedLengthRecordReader(encoding=...) is not supported: decompress first")
        if record_bytes <= 0:
            raise ValueError(f"record_bytes must be positive, got {record_bytes}")
        super().__init__("FixedLength", {"record_bytes": int(record_bytes), "header_bytes": int(header_bytes or 0),
                                         "footer_bytes": int(footer_bytes or 0), "hop_bytes": int(hop_bytes or 0)},
                         name or "FixedLengthRecordReader")


class WholeFileReader(ReaderBase):
    """Each file whole; the key is its name."""

    def __init__(self, name: str | None = None):
        super().__init__("WholeFile", {}, name or "WholeFileReader")


class TFRecordReader(ReaderBase):
    """Records of TFRecord files (CRC-checked); keys are "file:byte_offset"."""

    def __init__(self, name: str | None = None, options: Any = None):
        from tftk.data.tfrecord import compression_name  # options: TFRecordOptions or 'GZIP'/'ZLIB'
        super().__init__("TFRecord", {"compression": compression_name(options)}, name or "TFRecordReader")


# ---- decoders ---------------------------------------------------------------------------------


def _bind_decode_raw(op: Operation, ctx: Any):
    dtype = np.dtype(op.get_attr("out_type").as_numpy_dtype).newbyteorder(
        "<" if op.get_attr("little_endian") else ">")

    def kernel(values: np.ndarray) -> np.ndarray:
        flat = [bytes(v) for v in values.reshape(-1)]
        sizes = {len(v) for v in flat}
        if len(sizes) > 1:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: DecodeRaw requires input strings to all be "
                                              f"the same size, got sizes {sorted(sizes)[:5]}")
        if sizes and sizes.pop() % dtype.itemsize:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: input size {len(flat[0])} is not a "
                                              f"multiple of {dtype.itemsize}, the size of {dtype.name}")
        decoded = np.frombuffer(b"".join(flat), dtype=dtype).astype(dtype.newbyteorder("="))
        return decoded.reshape(values.shape + (-1,) if flat else values.shape + (0,))
    return kernel


registry.register_op("DecodeRaw", _bind_decode_raw, fresh=True)
registry.not_differentiable("DecodeRaw")


def decode_raw(bytes: Any, out_type: Any, little_endian: bool = True, name: str | None = None) -> Tensor:  # noqa: A002
    """Reinterpret each string's bytes as a vector of `out_type` (shape: input shape + [n])."""
    values = convert_to_tensor(bytes, dtype=dtypes.string)
    out_type = dtypes.as_dtype(out_type)
    shape = values.shape.concatenate([None]) if values.shape.ndims is not None else None
    return make_op("DecodeRaw", [values], out_type, shape, name or "DecodeRaw",
                   {"out_type": out_type, "little_endian": bool(little_endian)})


def _bind_decode_csv(op: Operation, ctx: Any):
    types = op.get_attr("out_types")
    delimiter, quoting = op.get_attr("field_delim"), op.get_attr("use_quote_delim")
    na_value = op.get_attr("na_value")
    select = op.get_attr("select_cols")

    def kernel(records: np.ndarray, *defaults: np.ndarray) -> tuple:
        columns = [np.empty(records.shape, dtype=t.as_numpy_dtype) for t in types]
        for index, record in enumerate(records.reshape(-1)):
            text = record.decode() if isinstance(record, bytes) else str(record)
            fields = next(csv.reader([text], delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoting
                                     else csv.QUOTE_NONE), [""])
            if select is not None:
                fields = [fields[i] for i in select if i < len(fields)]
            if len(fields) != len(types):
                raise errors.InvalidArgumentError(None, op, f"{op.name}: Expect {len(types)} fields but have "
                                                  f"{len(fields)} in record {index}")
            for column, (field, dtype, default) in enumerate(zip(fields, types, defaults)):
                columns[column].reshape(-1)[index] = _csv_field(field, dtype, default, na_value, op, index, column)
        return tuple(columns) if len(columns) > 1 else columns[0]
    return kernel


def _csv_field(field: str, dtype: dtypes.DType, default: np.ndarray, na_value: str, op: Operation,
               record: int, column: int) -> Any:
    if field == "" or field == na_value:
        if default.size == 0:
            raise errors.InvalidArgumentError(None, op, f"{op.name}: Field {column} is required but missing in "
                                              f"record {record}!")
        return default.reshape(-1)[0]
    if dtype == dtypes.string:
        return field.encode()
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.InvalidArgumentError(None, op, f"{op.name}: Field {column} in record {record} is not a valid "
                                          f"{dtype.name}: {field!r}") from None


registry.register_op("DecodeCSV", _bind_decode_csv, fresh=True)
registry.not_differentiable("DecodeCSV")


def decode_csv(records: Any, record_defaults: Sequence[Any], field_delim: str = ",", use_quote_delim: bool = True,
               name: str | None = None, na_value: str = "", select_cols: Sequence[int] | None = None) -> list[Tensor]:
    """Split CSV lines into one tensor per column, typed by `record_defaults` (a list per column:
    [default] or [] for a required field)."""
    records = convert_to_tensor(records, dtype=dtypes.string)
    defaults = [convert_to_tensor(d) for d in record_defaults]
    if not defaults:
        raise ValueError("decode_csv needs record_defaults: one [default] (or []) per column")
    if len(field_delim) != 1:
        raise ValueError(f"field_delim must be one character, got {field_delim!r}")
    types = [d.dtype for d in defaults]
    op = make_multi_op("DecodeCSV", [records] + defaults, [(t, records.shape) for t in types],
                       name or "DecodeCSV", {"out_types": types, "field_delim": field_delim,
                                             "use_quote_delim": bool(use_quote_delim), "na_value": na_value,
                                             "select_cols": list(select_cols) if select_cols is not None else None})
    return list(op.outputs)
