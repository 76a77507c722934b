"""TFRecord framing checked over a whole buffer in one compiled call.

A record is: u64 little-endian payload length, masked CRC-32C of those 8 bytes, the payload, the
masked CRC-32C of the payload. Checking records one by one from Python costs more than parsing
them (two CRC calls, struct unpacking and slicing per record); `scan_records` walks a buffer of
many records in Numba and returns where each payload starts and how long it is, so a reader does
one call per multi-megabyte chunk.
"""

from __future__ import annotations

import functools

import numpy as np

from tftk.kernels.crc32c import range_kernel, tables

__all__ = ["scan_records", "HEADER_BYTES", "FOOTER_BYTES", "LENGTH_MISMATCH", "DATA_MISMATCH"]

HEADER_BYTES = 12  # length (8) + its masked CRC (4)
FOOTER_BYTES = 4  # the payload's masked CRC
LENGTH_MISMATCH, DATA_MISMATCH = 1, 2  # statuses: the record at the returned position is corrupt


@functools.lru_cache(maxsize=1)
def _kernel():
    from numba import njit

    crc_range = range_kernel()

    @njit(cache=True, nogil=True)
    def masked(crc):  # pragma: no cover - compiled
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    @njit(cache=True, nogil=True)
    def u32(data, i):  # pragma: no cover - compiled
        return (np.int64(data[i]) | (np.int64(data[i + 1]) << 8) | (np.int64(data[i + 2]) << 16)
                | (np.int64(data[i + 3]) << 24))

    @njit(cache=True, nogil=True)
    def scan(data, pos, table, offsets, lengths):  # pragma: no cover - compiled
        end = data.shape[0]
        n = 0
        status = 0
        need = 0
        while n < offsets.shape[0]:
            if end - pos < 12:
                need = 12
                break
            low, high = u32(data, pos), u32(data, pos + 4)
            if masked(crc_range(0, data, pos, pos + 8, table)) != u32(data, pos + 8):
                status = 1
                break
            if high >= 1 << 30:  # > 2**62 bytes: only a corrupt file says so; report it as truncated
                need = np.int64(1) << 62
                break
            length = low | (high << 32)
            if end - pos - 16 < length:
                need = 16 + length
                break
            body = pos + 12
            if masked(crc_range(0, data, body, body + length, table)) != u32(data, body + length):
                status = 2
                break
            offsets[n] = body
            lengths[n] = length
            n += 1
            pos = body + length + 4
        return n, pos, status, need

    return scan


def scan_records(data: np.ndarray, pos: int) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """Check the records of `data` (uint8) from byte `pos` on.

    Returns (payload offsets, payload lengths, position after the last whole record, status,
    bytes needed). status 0: every complete record was intact and `needed` (0 at the end of the
    buffer, else the size of the record that did not fit, header included) says how much to read
    before scanning again; LENGTH_MISMATCH / DATA_MISMATCH: the record at the position is corrupt.
    """
    capacity = (data.shape[0] - pos) // (HEADER_BYTES + FOOTER_BYTES) + 1
    offsets = np.empty(capacity, np.int64)
    lengths = np.empty(capacity, np.int64)
    n, end, status, need = _kernel()(data, np.int64(pos), tables(), offsets, lengths)
    return offsets[:n], lengths[:n], int(end), int(status), int(need)
