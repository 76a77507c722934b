"""TensorBoard's event-file record format: framing records on write, verified reading on read.

A record is: u64 little-endian payload length, masked CRC32C of those 8 bytes, the payload,
masked CRC32C of the payload. The payload of every record in an event file is an `Event` proto.
"""

from __future__ import annotations

import os
import struct
from typing import Iterator

from tensorboardX.proto.event_pb2 import Event

from tftk.framework.errors import DataLossError

__all__ = ["Event", "encode_record", "read_records", "read_record_stream", "summary_iterator"]

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")


def _masked_crc(data: bytes) -> int:
    """CRC32C rotated right by 15 bits plus a constant, as TFRecord stores it."""
    from tftk.kernels.crc32c import crc32c  # compiled on first use, not when tftk is imported
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def encode_record(payload: bytes) -> bytes:
    """Frame one payload as a TFRecord: length, length CRC, payload, payload CRC."""
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", _masked_crc(length)) + payload + _FOOTER.pack(_masked_crc(payload))


def read_records(path: str | os.PathLike, allow_truncated_tail: bool = False) -> Iterator[tuple[int, bytes]]:
    """Yield (byte offset, payload) for each record of a TFRecord file, verifying both CRCs.

    A bad CRC or a record cut short raises DataLossError naming the file and the record's byte
    offset. With `allow_truncated_tail`, a final record that is merely incomplete (its bytes so
    far intact) ends the iteration instead: that is what a reader sees while a writer is still
    appending, and TensorBoard itself waits for the rest. Corruption always raises.
    """
    with open(path, "rb") as handle:
        yield from read_record_stream(handle, path, allow_truncated_tail)


def read_record_stream(handle, path: str | os.PathLike,
                       allow_truncated_tail: bool = False) -> Iterator[tuple[int, bytes]]:
    """`read_records` over an open binary stream (e.g. a decompressing one); `path` names it in errors."""
    offset = 0
    while True:
        header = handle.read(_HEADER.size)
        if not header:
            return
        if len(header) < _HEADER.size:
            _truncated(path, offset, allow_truncated_tail)
            return
        length, length_crc = _HEADER.unpack(header)
        if _masked_crc(header[:8]) != length_crc:
            raise DataLossError(message=f"corrupted record at byte {offset} of {os.fspath(path)}: "
                                        f"length checksum mismatch")
        body = handle.read(length + _FOOTER.size)
        if len(body) < length + _FOOTER.size:
            _truncated(path, offset, allow_truncated_tail)
            return
        payload = body[:length]
        if _masked_crc(payload) != _FOOTER.unpack(body[length:])[0]:
            raise DataLossError(message=f"corrupted record at byte {offset} of {os.fspath(path)}: "
                                        f"data checksum mismatch")
        yield offset, payload
        offset += _HEADER.size + len(body)


def _truncated(path: str | os.PathLike, offset: int, allowed: bool) -> None:
    if not allowed:
        raise DataLossError(message=f"truncated record at byte {offset} of {os.fspath(path)}: the file "
                                    f"ends mid-record (writer killed, or still writing: pass "
                                    f"allow_truncated_tail=True to stop there)")


def summary_iterator(path: str | os.PathLike, allow_truncated_tail: bool = False) -> Iterator[Event]:
    """Yield the `Event` protos of an event file (ours or TensorFlow's), as `tf.train.summary_iterator`.

    Args:
      path: an events.out.tfevents.* file.
      allow_truncated_tail: stop quietly at an incomplete final record instead of raising
        DataLossError (use it to read a file a live writer is appending to).
    """
    for offset, payload in read_records(path, allow_truncated_tail):
        try:
            event = Event.FromString(payload)
        except Exception as exc:  # the CRCs held, so the writer stored something that is not an Event
            raise DataLossError(message=f"record at byte {offset} of {os.fspath(path)} is not an Event "
                                        f"proto: {exc}") from exc
        yield event
