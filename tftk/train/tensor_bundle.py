"""TensorFlow's V2 checkpoint format (TensorBundle, util/tensor_bundle): `.index` + `.data-*` shards.

`prefix.index` is a sorted table (see `sorted_table`) whose entry "" is a BundleHeaderProto and
whose other entries map each tensor name to a BundleEntryProto (dtype, shape, shard, offset,
size, masked CRC-32C). `prefix.data-00000-of-00001` holds the tensors' bytes back to back:
little-endian raw values, or for strings `[varint64 lengths][masked crc of lengths][bytes]`.
Partitioned variables are an entry with `slices` and one entry per slice under an
OrderedCode-encoded key.

Writes are atomic (data shard, then index, each through a temp file renamed into place), so a
checkpoint exists exactly when its index does. Reads check every entry against the shard's real
size before allocating, and verify each tensor's CRC-32C.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Mapping

import numpy as np

from tftk.atomic import atomic_open
from tftk.framework.errors import DataLossError, NotFoundError
from tftk.kernels.crc32c import extend, mask, unmask
from tftk.proto.tensorflow import BundleEntryProto, BundleHeaderProto, DataType
from tftk.summary.tensor_proto import TensorProtoError, datatype_enum, numpy_dtype, shape_proto
from tftk.train.sorted_table import TableError, build_table, read_table
from tftk.train.tensor_slices import assemble

__all__ = ["index_path", "data_paths", "write_bundle", "BundleReader", "is_bundle"]

_VERSION_PRODUCER = 1
_MAX_CONSUMER = 1


def index_path(prefix: str | os.PathLike) -> Path:
    return Path(os.fspath(prefix) + ".index")


def data_path(prefix: str | os.PathLike, shard: int, num_shards: int) -> Path:
    return Path(f"{os.fspath(prefix)}.data-{shard:05d}-of-{num_shards:05d}")


def data_paths(prefix: str | os.PathLike) -> list[Path]:
    """Every data shard file present for `prefix` (for deletion)."""
    folder, name = os.path.split(os.path.abspath(os.fspath(prefix)))
    if not os.path.isdir(folder):
        return []
    return [Path(folder, n) for n in os.listdir(folder) if n.startswith(name + ".data-")
            and n[len(name) + 6:].replace("-of-", "").isdigit()]


def is_bundle(prefix: str | os.PathLike) -> bool:
    return index_path(prefix).is_file()


def _string_payload(array: np.ndarray) -> tuple[list[bytes], int]:
    """The byte chunks of a string tensor and their CRC-32C (TF's WriteStringTensor)."""
    items = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in array.ravel()]
    lengths = bytearray()
    crc = 0
    for item in items:
        n = len(item)
        while n >= 0x80:
            lengths.append((n & 0x7F) | 0x80)
            n >>= 7
        lengths.append(n)
        crc = extend(crc, len(item).to_bytes(4 if len(item) <= 0xFFFFFFFF else 8, "little"))
    length_crc = mask(crc).to_bytes(4, "little")
    crc = extend(crc, length_crc)
    for item in items:
        crc = extend(crc, item)
    return [bytes(lengths), length_crc, *items], crc


def _payload(name: str, array: np.ndarray) -> tuple[int, list, int]:
    """(DataType enum, byte chunks, CRC-32C) of one tensor as TF's data shard holds it."""
    enum = datatype_enum(array.dtype)
    if enum == 0 or (array.dtype.kind == "O" and not all(
            isinstance(s, (bytes, str, np.bytes_, np.str_)) for s in array.ravel())):
        raise ValueError(f"cannot save {name!r}: dtype {array.dtype} has no TensorFlow DataType")
    if enum == DataType.Value("DT_STRING"):
        chunks, crc = _string_payload(array)
        return enum, chunks, crc
    raw = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return enum, [memoryview(raw.reshape(-1)).cast("B")], extend(0, raw)


def _slice_entry(name: str, full: list[int], parts: list) -> BundleEntryProto:
    """The entry of a partitioned tensor: dtype, full shape and its slices' extents, no values."""
    entry = BundleEntryProto(dtype=datatype_enum(np.asarray(parts[0][1]).dtype), shape=shape_proto(full))
    for extents, _ in parts:
        proto = entry.slices.add()
        for start, length in extents:
            extent = proto.extent.add()
            if length >= 0:  # "-" (a whole dimension) is an empty Extent, as TF writes it
                extent.start, extent.length = start, length
    return entry


def write_bundle(prefix: str | os.PathLike, arrays: Mapping[str, np.ndarray],
                 slices: Mapping[str, tuple[list[int], list]] | None = None) -> list[Path]:
    """Write `arrays` (name -> array) as V2 checkpoint `prefix`; returns [index, data shard].

    `slices` maps a partitioned tensor's name to (full shape, [(extents, part array)]): as TF's
    BundleWriter::AddSlice, each part is stored under `tensor_slices.slice_key(name, extents)`
    and the name's own entry lists the slices.
    """
    from tftk.train.tensor_slices import slice_key
    tensors = {name.encode("utf-8"): (name, np.asarray(array)) for name, array in arrays.items()}
    entries: dict[bytes, BundleEntryProto] = {}
    for name, (full, parts) in (slices or {}).items():
        if name.encode("utf-8") in tensors:
            raise ValueError(f"cannot save {name!r} both whole and as slices")
        entries[name.encode("utf-8")] = _slice_entry(name, full, parts)
        for extents, part in parts:
            key = slice_key(name, extents)
            tensors[key.encode("utf-8", errors="surrogateescape")] = (name, np.asarray(part))
    shard = data_path(prefix, 0, 1)
    with atomic_open(shard, "wb") as handle:
        offset = 0
        for key in sorted(tensors):
            name, array = tensors[key]
            enum, chunks, crc = _payload(name, array)
            size = sum(len(c) for c in chunks)
            for chunk in chunks:
                handle.write(chunk)
            entries[key] = BundleEntryProto(dtype=enum, shape=shape_proto(array.shape), shard_id=0,
                                            offset=offset, size=size, crc32c=mask(crc))
            offset += size
    header = BundleHeaderProto(num_shards=1, endianness=BundleHeaderProto.LITTLE)
    header.version.producer = _VERSION_PRODUCER
    items = [(b"", header.SerializeToString())]
    items += [(key, entries[key].SerializeToString()) for key in sorted(entries)]
    with atomic_open(index_path(prefix), "wb") as handle:
        handle.write(build_table(items))
    return [index_path(prefix), shard]


def delete_bundle(prefix: str | os.PathLike) -> None:
    """Remove a V2 checkpoint: its index first (so it stops existing), then its data shards."""
    with contextlib.suppress(FileNotFoundError):
        index_path(prefix).unlink()
    for path in data_paths(prefix):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


class BundleReader:
    """The entries of a V2 checkpoint; `read(name)` loads one tensor, checksum verified.

    Raises NotFoundError when the index is missing and DataLossError (naming the file) when the
    index or a shard is truncated, corrupt or inconsistent.
    """

    def __init__(self, prefix: str | os.PathLike):
        self.prefix = os.fspath(prefix)
        self._index = index_path(prefix)
        try:
            data = self._index.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(None, None, f"Checkpoint index {self._index} not found (checkpoint prefix "
                                f"{self.prefix!r})") from None
        try:
            items = read_table(data, str(self._index))
        except TableError as exc:
            raise DataLossError(None, None, f"Unable to read checkpoint index {self._index}: {exc}") from None
        if not items or items[0][0] != b"":
            self._corrupt("no header entry")
        header = self._parse(BundleHeaderProto, items[0][1], "header")
        if header.endianness != BundleHeaderProto.LITTLE:
            self._corrupt("big-endian checkpoints are not supported")
        if header.version.min_consumer > _MAX_CONSUMER:
            self._corrupt(f"written for readers of version >= {header.version.min_consumer}")
        if not 1 <= header.num_shards <= 1 << 20:
            self._corrupt(f"implausible number of shards {header.num_shards}")
        self.num_shards = header.num_shards
        self.entries: dict[str, BundleEntryProto] = {}
        for key, value in items[1:]:
            name = key.decode("utf-8", errors="surrogateescape")
            self.entries[name] = self._parse(BundleEntryProto, value, name)

    def _corrupt(self, detail: str):
        raise DataLossError(None, None, f"Checkpoint index {self._index} is corrupt: {detail}")

    def _parse(self, kind, value: bytes, what: str):
        try:
            return kind.FromString(value)
        except Exception:  # protobuf's DecodeError and its C++ variants
            self._corrupt(f"entry {what!r} is not parseable")

    def variables(self) -> dict[str, tuple[list[int], np.dtype]]:
        """name -> (shape, numpy dtype) of every full tensor (slice entries are hidden)."""
        out = {}
        for name, entry in self.entries.items():
            if name.startswith("\x00"):
                continue  # an OrderedCode slice key of a partitioned variable
            try:
                out[name] = ([int(d.size) for d in entry.shape.dim], numpy_dtype(entry.dtype))
            except TensorProtoError as exc:
                self._corrupt(f"tensor {name!r}: {exc}")
        return out

    def read(self, name: str) -> np.ndarray:
        """The array stored under `name`."""
        if name not in self.entries:
            raise NotFoundError(None, None, f"Key {name!r} not found in checkpoint {self.prefix!r}")
        entry = self.entries[name]
        if entry.slices:
            return assemble(self, name, entry)
        return self._read_entry(name, entry)

    def _read_entry(self, name: str, entry: BundleEntryProto) -> np.ndarray:
        dims = [int(d.size) for d in entry.shape.dim]
        if any(d < 0 for d in dims):
            self._corrupt(f"tensor {name!r} has shape {dims}")
        try:
            dtype = numpy_dtype(entry.dtype)
        except TensorProtoError as exc:
            self._corrupt(f"tensor {name!r}: {exc}")
        count = int(np.prod(dims, dtype=object))
        if not 0 <= entry.shard_id < self.num_shards:
            self._corrupt(f"tensor {name!r} names shard {entry.shard_id} of {self.num_shards}")
        shard = data_path(self.prefix, entry.shard_id, self.num_shards)
        try:
            with open(shard, "rb") as handle:
                available = os.fstat(handle.fileno()).st_size
                if entry.offset < 0 or entry.size < 0 or entry.offset + entry.size > available:
                    raise DataLossError(None, None, f"Checkpoint data file {shard} is truncated or corrupt: tensor "
                                        f"{name!r} needs bytes [{entry.offset}, {entry.offset + entry.size}) of "
                                        f"{available}")
                if dtype.kind != "O" and entry.size != count * dtype.itemsize:
                    self._corrupt(f"tensor {name!r} of shape {dims} has size {entry.size}, "
                                  f"needs {count * dtype.itemsize}")
                handle.seek(entry.offset)
                if dtype.kind == "O":
                    payload = handle.read(entry.size)
                    if not payload and count == 0:
                        return np.empty(dims, object)
                    strings = self._strings(name, shard, payload, count)
                    array, crc = strings.reshape(dims), _string_payload(strings)[1]
                else:
                    array = np.empty(dims, dtype.newbyteorder("="))
                    if handle.readinto(memoryview(array.reshape(-1)).cast("B")) != entry.size:
                        raise DataLossError(None, None, f"Checkpoint data file {shard} is truncated")
                    crc = extend(0, array)
        except FileNotFoundError:
            raise DataLossError(None, None, f"Checkpoint data file {shard} is missing (tensor {name!r} of "
                                f"checkpoint {self.prefix!r})") from None
        if crc != unmask(entry.crc32c):
            raise DataLossError(None, None, f"Checksum mismatch for tensor {name!r} in checkpoint data file "
                                f"{shard}: the file is corrupt")
        return array

    def _strings(self, name: str, shard: Path, payload: bytes, count: int) -> np.ndarray:
        """Decode TF's string tensor layout, every length bounded by the bytes present."""
        def bad(detail):
            raise DataLossError(None, None, f"Checkpoint data file {shard} is corrupt: string tensor {name!r} {detail}")
        pos, lengths = 0, []
        for _ in range(count):
            value = shift = 0
            while True:
                if pos >= len(payload) or shift > 63:
                    bad("has a bad length varint")
                byte = payload[pos]
                pos += 1
                value |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
            lengths.append(value)
        if sum(lengths) != len(payload) - pos - 4:
            bad(f"lengths add up to {sum(lengths)} bytes, {max(len(payload) - pos - 4, 0)} present")
        pos += 4
        out = np.empty(count, object)
        for i, n in enumerate(lengths):
            out[i] = payload[pos:pos + n]
            pos += n
        return out
